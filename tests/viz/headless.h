// A headless ImGui for tests: a context with io.DisplaySize set, the fonts built, and textures in memory
// (no window, no GL). Frames can be rasterized on the CPU to check pixels.
#pragma once

#include <imgui.h>

#include "viz/raster.h"
#include "viz/texture.h"
#include "viz/theme.h"

namespace flashviz::testing {

class HeadlessImGui {
 public:
  explicit HeadlessImGui(ImVec2 display = ImVec2(1280, 720), Theme theme = Theme::kDark, float scale = 1.0f,
                         bool presentation = false) {
    previous_ = ImGui::GetCurrentContext();
    context_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(context_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    io.DisplaySize = display;
    io.DeltaTime = 1.0f / 60.0f;
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    LoadFonts(*io.Fonts, FontSizeFor(scale, presentation));
    textures_.AddFontAtlas(*io.Fonts);
    previous_textures_ = SetTextureBackend(&textures_);
    ApplyTheme(theme, scale);
  }
  ~HeadlessImGui() {
    SetTextureBackend(previous_textures_);
    textures_.ReleaseCache();
    ImGui::DestroyContext(context_);
    ImGui::SetCurrentContext(previous_);
  }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;

  MemoryTextureBackend& textures() { return textures_; }
  // Re-registers the font atlas after it was rebuilt (UI scale, large font).
  void UploadFonts() { textures_.AddFontAtlas(*ImGui::GetIO().Fonts); }

  // The last frame, rasterized on the CPU over the window background.
  RgbaImage Rasterize() {
    const ImGuiIO& io = ImGui::GetIO();
    RgbaImage image;
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    image.Resize(static_cast<int>(io.DisplaySize.x), static_cast<int>(io.DisplaySize.y),
                 ImGui::ColorConvertFloat4ToU32(ImVec4(bg.x, bg.y, bg.z, 1.0f)));
    RasterizeDrawData(*ImGui::GetDrawData(), textures_, image);
    return image;
  }

 private:
  ImGuiContext* previous_ = nullptr;
  ImGuiContext* context_ = nullptr;
  MemoryTextureBackend textures_;
  TextureBackend* previous_textures_ = nullptr;
};

}  // namespace flashviz::testing
