// A CPU rasterizer for Dear ImGui's draw data: textured, vertex-coloured triangles with clip rectangles and
// alpha blending, as ImGui's OpenGL backend draws them. Code that draws with ImDrawList can thus make a PNG
// with no GL context at all (`flashviz bench --png`, headless tests).
#pragma once

#include <imgui.h>

#include <functional>
#include <string>

#include "viz/heatmap.h"  // ScreenRect
#include "viz/texture.h"
#include "viz/theme.h"

namespace flashviz {

// Draws `data` onto `image` (already sized; not cleared), sampling textures from `textures` (an unknown
// texture samples as white). Coordinates are relative to data.DisplayPos, scaled by FramebufferScale.
void RasterizeDrawData(const ImDrawData& data, const MemoryTextureBackend& textures, RgbaImage& image);

// The part of `image` under `rect` (screen coordinates, times the framebuffer's scale), clamped to the image.
RgbaImage CropImage(const RgbaImage& image, const ScreenRect& rect, float scale_x = 1.0f, float scale_y = 1.0f);

// `image` as the bytes of an RGBA PNG. Throws InputError for an empty image.
std::string EncodePng(const RgbaImage& image);
// Writes `image` as an RGBA PNG through kernels/common/files.h (whole or not at all).
// Returns false with a one-line reason in `error`.
bool WritePng(const RgbaImage& image, const std::string& path, std::string* error);

// One offscreen frame of `width` × `height`: a fresh ImGui context with the fonts and theme, `draw` called
// inside a borderless window that covers it, rasterized on the CPU. The caller's ImGui context, fonts,
// palette and texture backend are restored afterwards.
RgbaImage RenderFrameOnCpu(int width, int height, const std::function<void()>& draw, Theme theme = Theme::kDark,
                           float ui_scale = 1.0f);
bool RenderToPng(int width, int height, const std::function<void()>& draw, const std::string& path,
                 std::string* error, Theme theme = Theme::kDark, float ui_scale = 1.0f);

}  // namespace flashviz
