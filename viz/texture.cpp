#include "viz/texture.h"

namespace flashviz {
namespace {
TextureBackend* g_backend = nullptr;
}  // namespace

ImTextureID TextureBackend::Cached(std::string_view key, std::uint64_t version,
                                   const std::function<void(RgbaImage&)>& fill) {
  auto [it, inserted] = cache_.try_emplace(std::string(key));
  Entry& e = it->second;
  e.last_used = frame_;
  if (!inserted && e.version == version && e.id) return e.id;
  fill(scratch_);
  if (scratch_.width <= 0 || scratch_.height <= 0) scratch_.Resize(1, 1, 0);
  if (e.id) Update(e.id, scratch_);
  else e.id = Create(scratch_);
  e.version = version;
  return e.id;
}

void TextureBackend::EndFrame(int max_idle_frames) {
  ++frame_;
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (frame_ - it->second.last_used > static_cast<std::uint64_t>(max_idle_frames)) {
      if (it->second.id) Destroy(it->second.id);
      it = cache_.erase(it);
    } else {
      ++it;
    }
  }
}

void TextureBackend::ReleaseCache() {
  for (auto& [key, e] : cache_)
    if (e.id) Destroy(e.id);
  cache_.clear();
}

TextureBackend* SetTextureBackend(TextureBackend* backend) {
  TextureBackend* previous = g_backend;
  g_backend = backend;
  return previous;
}
TextureBackend* GetTextureBackend() { return g_backend; }

ImTextureID CachedTexture(std::string_view key, std::uint64_t version, const std::function<void(RgbaImage&)>& fill) {
  return g_backend ? g_backend->Cached(key, version, fill) : nullptr;
}

MemoryTextureBackend::~MemoryTextureBackend() { ReleaseCache(); }

ImTextureID MemoryTextureBackend::Create(const RgbaImage& image) {
  const std::uintptr_t id = next_id_++;
  images_[id] = image;
  return reinterpret_cast<ImTextureID>(id);
}

void MemoryTextureBackend::Update(ImTextureID id, const RgbaImage& image) {
  images_[reinterpret_cast<std::uintptr_t>(id)] = image;
}

void MemoryTextureBackend::Destroy(ImTextureID id) { images_.erase(reinterpret_cast<std::uintptr_t>(id)); }

void MemoryTextureBackend::AddFontAtlas(ImFontAtlas& atlas) {
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  atlas.GetTexDataAsRGBA32(&pixels, &w, &h);
  RgbaImage image;
  image.Resize(w, h);
  for (std::size_t p = 0; p < image.pixels.size(); ++p) {
    const unsigned char* px = pixels + 4 * p;
    image.pixels[p] = IM_COL32(px[0], px[1], px[2], px[3]);
  }
  if (font_texture_) Destroy(font_texture_);
  font_texture_ = Create(image);
  atlas.SetTexID(font_texture_);
}

const RgbaImage* MemoryTextureBackend::Find(ImTextureID id) const {
  const auto it = images_.find(reinterpret_cast<std::uintptr_t>(id));
  return it == images_.end() ? nullptr : &it->second;
}

}  // namespace flashviz
