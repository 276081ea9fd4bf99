// [SECTION] triangle rasterization (top-left fill rule, so shared edges of ImGui's quads blend once)
// [SECTION] PNG output (atomic)
// [SECTION] offscreen frames
#include "viz/raster.h"

#include <stb_image_write.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/common/files.h"
#include "kernels/common/format.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] triangle rasterization
// ---------------------------------------------------------------------------------------------------------

struct Rgba {
  float r, g, b, a;
};

Rgba Unpack(ImU32 c) {
  return {static_cast<float>((c >> IM_COL32_R_SHIFT) & 0xFF) / 255.0f,
          static_cast<float>((c >> IM_COL32_G_SHIFT) & 0xFF) / 255.0f,
          static_cast<float>((c >> IM_COL32_B_SHIFT) & 0xFF) / 255.0f,
          static_cast<float>((c >> IM_COL32_A_SHIFT) & 0xFF) / 255.0f};
}

ImU32 Pack(const Rgba& c) {
  auto byte = [](float v) { return static_cast<ImU32>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
  return (byte(c.r) << IM_COL32_R_SHIFT) | (byte(c.g) << IM_COL32_G_SHIFT) | (byte(c.b) << IM_COL32_B_SHIFT) |
         (byte(c.a) << IM_COL32_A_SHIFT);
}

struct ClipBox {
  int x0, y0, x1, y1;  // pixels [x0, x1) × [y0, y1)
};

// An edge a→b is "top" (horizontal, interior below) or "left" (interior to its right, going down) in the
// screen's y-down coordinates with counter-clockwise-normalized winding.
bool TopLeft(ImVec2 a, ImVec2 b) { return (a.y == b.y && b.x < a.x) || (b.y > a.y); }

void DrawTriangle(const ImDrawVert& v0, const ImDrawVert& v1, const ImDrawVert& v2, const RgbaImage* texture,
                  const ClipBox& clip, RgbaImage& image) {
  ImVec2 p0 = v0.pos, p1 = v1.pos, p2 = v2.pos;
  const ImDrawVert* a = &v0;
  const ImDrawVert* b = &v1;
  const ImDrawVert* c = &v2;
  float area = (p1.x - p0.x) * (p2.y - p0.y) - (p1.y - p0.y) * (p2.x - p0.x);
  if (area == 0.0f || !std::isfinite(area)) return;
  if (area < 0) {  // make the winding consistent so one fill rule applies
    std::swap(p1, p2);
    std::swap(b, c);
    area = -area;
  }
  const int x0 = std::max(clip.x0, static_cast<int>(std::floor(std::min({p0.x, p1.x, p2.x}))));
  const int x1 = std::min(clip.x1, static_cast<int>(std::ceil(std::max({p0.x, p1.x, p2.x}))) + 1);
  const int y0 = std::max(clip.y0, static_cast<int>(std::floor(std::min({p0.y, p1.y, p2.y}))));
  const int y1 = std::min(clip.y1, static_cast<int>(std::ceil(std::max({p0.y, p1.y, p2.y}))) + 1);
  if (x0 >= x1 || y0 >= y1) return;

  const Rgba ca = Unpack(a->col), cb = Unpack(b->col), cc = Unpack(c->col);
  const bool flat_color = a->col == b->col && b->col == c->col;
  // Edge functions, positive inside (area > 0 after the swap).
  auto edge = [](ImVec2 s, ImVec2 e, float x, float y) { return (e.x - s.x) * (y - s.y) - (e.y - s.y) * (x - s.x); };
  const bool tl0 = TopLeft(p1, p2), tl1 = TopLeft(p2, p0), tl2 = TopLeft(p0, p1);
  const float inv_area = 1.0f / area;
  const int tw = texture ? texture->width : 0, th = texture ? texture->height : 0;

  for (int y = y0; y < y1; ++y) {
    const float py = static_cast<float>(y) + 0.5f;
    for (int x = x0; x < x1; ++x) {
      const float px = static_cast<float>(x) + 0.5f;
      const float w0 = edge(p1, p2, px, py), w1 = edge(p2, p0, px, py), w2 = edge(p0, p1, px, py);
      if (w0 < 0 || w1 < 0 || w2 < 0) continue;
      if ((w0 == 0 && !tl0) || (w1 == 0 && !tl1) || (w2 == 0 && !tl2)) continue;
      const float l0 = w0 * inv_area, l1 = w1 * inv_area, l2 = w2 * inv_area;
      Rgba src = flat_color ? ca
                            : Rgba{ca.r * l0 + cb.r * l1 + cc.r * l2, ca.g * l0 + cb.g * l1 + cc.g * l2,
                                   ca.b * l0 + cb.b * l1 + cc.b * l2, ca.a * l0 + cb.a * l1 + cc.a * l2};
      if (texture && tw > 0 && th > 0) {
        const float u = a->uv.x * l0 + b->uv.x * l1 + c->uv.x * l2;
        const float v = a->uv.y * l0 + b->uv.y * l1 + c->uv.y * l2;
        const int tx = std::clamp(static_cast<int>(std::floor(u * static_cast<float>(tw))), 0, tw - 1);
        const int ty = std::clamp(static_cast<int>(std::floor(v * static_cast<float>(th))), 0, th - 1);
        const Rgba t = Unpack(texture->at(tx, ty));
        src = {src.r * t.r, src.g * t.g, src.b * t.b, src.a * t.a};
      }
      if (src.a <= 0.0f) continue;
      ImU32& dst_px = image.at(x, y);
      const Rgba dst = Unpack(dst_px);
      // glBlendFuncSeparate(SRC_ALPHA, ONE_MINUS_SRC_ALPHA, ONE, ONE_MINUS_SRC_ALPHA), as ImGui's GL backend.
      dst_px = Pack({src.r * src.a + dst.r * (1 - src.a), src.g * src.a + dst.g * (1 - src.a),
                     src.b * src.a + dst.b * (1 - src.a), src.a + dst.a * (1 - src.a)});
    }
  }
}

}  // namespace

void RasterizeDrawData(const ImDrawData& data, const MemoryTextureBackend& textures, RgbaImage& image) {
  const ImVec2 origin = data.DisplayPos;
  const ImVec2 scale = data.FramebufferScale.x > 0 ? data.FramebufferScale : ImVec2(1, 1);
  for (int l = 0; l < data.CmdListsCount; ++l) {
    const ImDrawList* list = data.CmdLists[l];
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback) continue;  // no callbacks in our frames; ResetRenderState has nothing to reset here
      const ClipBox clip{std::max(0, static_cast<int>(std::floor((cmd.ClipRect.x - origin.x) * scale.x))),
                         std::max(0, static_cast<int>(std::floor((cmd.ClipRect.y - origin.y) * scale.y))),
                         std::min(image.width, static_cast<int>(std::ceil((cmd.ClipRect.z - origin.x) * scale.x))),
                         std::min(image.height, static_cast<int>(std::ceil((cmd.ClipRect.w - origin.y) * scale.y)))};
      if (clip.x0 >= clip.x1 || clip.y0 >= clip.y1) continue;
      const RgbaImage* texture = textures.Find(cmd.TextureId);
      for (unsigned int e = 0; e + 2 < cmd.ElemCount; e += 3) {
        ImDrawVert v[3];
        for (int k = 0; k < 3; ++k) {
          const unsigned int index = cmd.VtxOffset + list->IdxBuffer[static_cast<int>(cmd.IdxOffset + e + k)];
          v[k] = list->VtxBuffer[static_cast<int>(index)];
          v[k].pos = ImVec2((v[k].pos.x - origin.x) * scale.x, (v[k].pos.y - origin.y) * scale.y);
        }
        DrawTriangle(v[0], v[1], v[2], texture, clip, image);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] PNG output
// ---------------------------------------------------------------------------------------------------------

RgbaImage CropImage(const RgbaImage& image, const ScreenRect& rect, float scale_x, float scale_y) {
  const int x0 = std::clamp(static_cast<int>(std::floor(rect.min.x * scale_x)), 0, image.width);
  const int y0 = std::clamp(static_cast<int>(std::floor(rect.min.y * scale_y)), 0, image.height);
  const int x1 = std::clamp(static_cast<int>(std::ceil(rect.max.x * scale_x)), x0, image.width);
  const int y1 = std::clamp(static_cast<int>(std::ceil(rect.max.y * scale_y)), y0, image.height);
  RgbaImage out;
  out.Resize(x1 - x0, y1 - y0);
  for (int y = y0; y < y1; ++y)
    std::copy_n(image.pixels.begin() + static_cast<std::ptrdiff_t>(y) * image.width + x0, x1 - x0,
                out.pixels.begin() + static_cast<std::ptrdiff_t>(y - y0) * out.width);
  return out;
}

std::string EncodePng(const RgbaImage& image) {
  if (image.width <= 0 || image.height <= 0) throw InputError("cannot encode an empty image as PNG");
  std::string bytes;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  // ImU32 pixels are R, G, B, A bytes in memory on the little-endian machines we build for.
  static_assert(IM_COL32_R_SHIFT == 0, "RGBA byte order expected");
  if (!stbi_write_png_to_func(append, &bytes, image.width, image.height, 4, image.pixels.data(), image.width * 4))
    throw InputError("cannot encode the PNG");
  return bytes;
}

bool WritePng(const RgbaImage& image, const std::string& path, std::string* error) {
  try {
    WriteWholeFile(path, EncodePng(image));
    return true;
  } catch (const InputError& e) {
    if (error) *error = e.what();
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] offscreen frames
// ---------------------------------------------------------------------------------------------------------

RgbaImage RenderFrameOnCpu(int width, int height, const std::function<void()>& draw, Theme theme, float ui_scale) {
  ImGuiContext* previous_context = ImGui::GetCurrentContext();
  const Fonts previous_fonts = GetFonts();
  const Palette previous_palette = GetPalette();

  ImGuiContext* context = ImGui::CreateContext();
  ImGui::SetCurrentContext(context);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.LogFilename = nullptr;
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DeltaTime = 1.0f / 60.0f;
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  LoadFonts(*io.Fonts, FontSizeFor(ui_scale, false));
  MemoryTextureBackend textures;
  textures.AddFontAtlas(*io.Fonts);
  TextureBackend* previous_textures = SetTextureBackend(&textures);
  ApplyTheme(theme, ui_scale);

  RgbaImage image;
  // Two frames: the first settles sizes that ImGui only knows after drawing once.
  for (int frame = 0; frame < 2; ++frame) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("##offscreen", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings);
    draw();
    ImGui::End();
    ImGui::Render();
  }
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  image.Resize(width, height, ImGui::ColorConvertFloat4ToU32(ImVec4(bg.x, bg.y, bg.z, 1.0f)));
  RasterizeDrawData(*ImGui::GetDrawData(), textures, image);

  SetTextureBackend(previous_textures);
  textures.ReleaseCache();
  ImGui::DestroyContext(context);
  ImGui::SetCurrentContext(previous_context);
  SetFonts(previous_fonts);
  SetPalette(previous_palette);
  return image;
}

bool RenderToPng(int width, int height, const std::function<void()>& draw, const std::string& path,
                 std::string* error, Theme theme, float ui_scale) {
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    if (error) *error = Sprintf("image size %d × %d is out of range (1 to 16384 a side)", width, height);
    return false;
  }
  const RgbaImage image = RenderFrameOnCpu(width, height, draw, theme, ui_scale);
  return WritePng(image, path, error);
}

}  // namespace flashviz
