// Textures for heatmaps behind a small interface, so viz/ needs no GL: the GUI installs a GL backend
// (app/gui/gl_textures.cpp), the CPU rasterizer and the headless tests a MemoryTextureBackend.
// Heatmaps never draw a large matrix cell by cell (docs/design.md, principle 9): they fill one image per matrix,
// point-sampled down to at most a few thousand texels a side, and draw it as one textured quad.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace flashviz {

// Pixels as Dear ImGui packs colours (IM_COL32: R in the lowest byte), i.e. RGBA bytes in memory.
struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<ImU32> pixels;
  void Resize(int w, int h, ImU32 fill = 0) {
    width = w;
    height = h;
    pixels.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), fill);
  }
  ImU32& at(int x, int y) { return pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + x]; }
  ImU32 at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + x]; }
};

class TextureBackend {
 public:
  virtual ~TextureBackend() = default;
  // Textures sample with nearest filtering: one texel is one matrix cell, edges stay crisp.
  virtual ImTextureID Create(const RgbaImage& image) = 0;
  virtual void Update(ImTextureID id, const RgbaImage& image) = 0;  // any size
  virtual void Destroy(ImTextureID id) = 0;

  // A texture rebuilt only when its version changes; `fill` writes the image (Resize it first).
  ImTextureID Cached(std::string_view key, std::uint64_t version, const std::function<void(RgbaImage&)>& fill);
  // Destroys cached textures not asked for during the last `max_idle_frames` calls of EndFrame().
  void EndFrame(int max_idle_frames = 240);
  void ReleaseCache();  // call before the backend's context goes away
  std::size_t cached_count() const { return cache_.size(); }

 private:
  struct Entry {
    ImTextureID id = nullptr;
    std::uint64_t version = 0;
    std::uint64_t last_used = 0;
  };
  std::unordered_map<std::string, Entry> cache_;
  RgbaImage scratch_;
  std::uint64_t frame_ = 0;
};

// The backend the panels draw with (null: heatmaps draw nothing but their frame). Returns the previous one.
TextureBackend* SetTextureBackend(TextureBackend* backend);
TextureBackend* GetTextureBackend();
// Shorthand for GetTextureBackend()->Cached(...); null when no backend is installed.
ImTextureID CachedTexture(std::string_view key, std::uint64_t version, const std::function<void(RgbaImage&)>& fill);

// Textures kept in memory: for the CPU rasterizer (raster.h) and for tests. Ids are small integers.
class MemoryTextureBackend final : public TextureBackend {
 public:
  ~MemoryTextureBackend() override;
  ImTextureID Create(const RgbaImage& image) override;
  void Update(ImTextureID id, const RgbaImage& image) override;
  void Destroy(ImTextureID id) override;
  // Registers the font atlas (built as RGBA32) and sets atlas.TexID, replacing the atlas registered before.
  void AddFontAtlas(ImFontAtlas& atlas);
  const RgbaImage* Find(ImTextureID id) const;
  std::size_t size() const { return images_.size(); }

 private:
  std::unordered_map<std::uintptr_t, RgbaImage> images_;
  std::uintptr_t next_id_ = 1;
  ImTextureID font_texture_ = nullptr;
};

}  // namespace flashviz
