// The picker lists one folder at a time through std::filesystem (errors leave the list empty, never throw).
#include "viz/file_picker.h"

#include <imgui.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "viz/widgets.h"

namespace flashviz {
namespace {

// The folder each picker shows, by id (kept between frames while its popup is open).
std::map<std::string, std::filesystem::path>& Folders() {
  static std::map<std::string, std::filesystem::path> folders;
  return folders;
}

std::filesystem::path StartFolder(const std::string& path) {
  std::error_code error;
  std::filesystem::path p = path.empty() ? std::filesystem::current_path(error) : std::filesystem::absolute(path, error);
  if (!std::filesystem::is_directory(p, error)) p = p.parent_path();
  if (p.empty() || !std::filesystem::is_directory(p, error)) p = std::filesystem::current_path(error);
  return p;
}

}  // namespace

std::vector<FolderEntry> ListFolder(const std::filesystem::path& folder, const std::string& extension) {
  std::vector<FolderEntry> folders, files;
  std::error_code error;
  std::filesystem::directory_iterator it(folder, std::filesystem::directory_options::skip_permission_denied, error);
  if (error) return {};
  for (const std::filesystem::directory_iterator end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code kind;
    if (it->is_directory(kind)) {
      folders.push_back({name, true});
    } else if (extension.empty() || (name.size() > extension.size() && name.ends_with(extension))) {
      files.push_back({name, false});
    }
  }
  const auto by_name = [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; };
  std::sort(folders.begin(), folders.end(), by_name);
  std::sort(files.begin(), files.end(), by_name);
  std::vector<FolderEntry> entries;
  if (folder.has_parent_path() && folder != folder.root_path()) entries.push_back({"..", true});
  entries.insert(entries.end(), folders.begin(), folders.end());
  entries.insert(entries.end(), files.begin(), files.end());
  return entries;
}

bool FilePickerButton(const char* id, std::string* path, const std::string& extension, const char* tooltip) {
  ImGui::PushID(id);
  bool chosen = false;
  if (ImGui::Button("…")) {
    Folders()[id] = StartFolder(*path);
    ImGui::OpenPopup("##picker");
  }
  if (ImGui::IsItemHovered()) MathTooltip(tooltip);
  ImGui::SetNextWindowSizeConstraints(ImVec2(ImGui::GetFontSize() * 24, ImGui::GetFontSize() * 10),
                                      ImVec2(ImGui::GetFontSize() * 48, ImGui::GetFontSize() * 30));
  if (ImGui::BeginPopup("##picker")) {
    std::filesystem::path& folder = Folders()[id];
    ImGui::TextDisabled("%s", folder.string().c_str());
    ImGui::Separator();
    const std::vector<FolderEntry> entries = ListFolder(folder, extension);
    if (entries.empty()) ImGui::TextDisabled("nothing here%s", extension.empty() ? "" : (" ending in " + extension).c_str());
    ImGui::BeginChild("##entries", ImVec2(0, ImGui::GetFontSize() * 18));
    for (const FolderEntry& entry : entries) {
      const std::string label = entry.folder ? entry.name + "/" : entry.name;
      if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_DontClosePopups)) {
        if (entry.folder) {
          folder = entry.name == ".." ? folder.parent_path() : folder / entry.name;
        } else {
          *path = (folder / entry.name).string();
          chosen = true;
          ImGui::CloseCurrentPopup();
        }
      }
    }
    ImGui::EndChild();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  ImGui::PopID();
  return chosen;
}

}  // namespace flashviz
