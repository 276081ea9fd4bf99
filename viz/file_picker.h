// A small file picker for the paths the panels ask for (benchmark CSVs, sessions, HW4 inputs): a "…" button
// beside a path field that opens a list of the folder's subfolders and files with the wanted extension; a
// folder opens, a file is chosen. Dear ImGui has no file dialog of its own, and a native one would tie viz/ to a
// desktop toolkit.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace flashviz {

struct FolderEntry {
  std::string name;  // the file or folder name ("..": the parent)
  bool folder = false;
};

// `folder`'s subfolders, then its files ending in `extension` (any when empty), each sorted by name, hidden ones
// (".name") left out, ".." first unless `folder` is the root. Empty when the folder cannot be read.
std::vector<FolderEntry> ListFolder(const std::filesystem::path& folder, const std::string& extension);

// Draws the "…" button (after the caller's path field) and, once pressed, the picker; true in the frame a file
// was chosen into `path`. `id` keeps several pickers apart.
bool FilePickerButton(const char* id, std::string* path, const std::string& extension, const char* tooltip);

}  // namespace flashviz
