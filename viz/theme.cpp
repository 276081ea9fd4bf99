#include "viz/theme.h"

#include <sys/stat.h>

namespace flashviz {
namespace {

Palette g_palette;
Fonts g_fonts;

constexpr const char* kDejaVuDir = "/usr/share/fonts/truetype/dejavu/";

// Latin-1, Greek, the phonetic-extension letters (ᵢ ᵣ ᵀ), punctuation, super/subscripts, letterlike (ℓ),
// arrows, mathematical operators (√ ∞ − ≤ ≥ ∑), technical, geometric shapes (▶ ■ ●), Latin extended-C (ⱼ).
constexpr ImWchar kGlyphRanges[] = {
    0x0020, 0x00FF, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000, 0x206F, 0x2070, 0x209F, 0x2100, 0x214F,
    0x2190, 0x21FF, 0x2200, 0x22FF, 0x2300, 0x23FF, 0x2500, 0x25FF, 0x2C60, 0x2C7F, 0,
};

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Palette DarkPalette() {
  Palette p;
  p.cursor = IM_COL32(255, 200, 0, 255);
  p.cursor_fill = IM_COL32(255, 200, 0, 40);
  p.done_wash = IM_COL32(24, 26, 31, 165);
  p.masked = IM_COL32(78, 78, 82, 255);
  p.pending = IM_COL32(44, 48, 56, 255);
  p.discarded = IM_COL32(70, 80, 100, 255);
  p.grid = IM_COL32(110, 116, 128, 150);
  p.heading = IM_COL32(140, 200, 255, 255);
  p.dim = IM_COL32(150, 150, 160, 255);
  p.good = IM_COL32(90, 200, 120, 255);
  p.warn = IM_COL32(255, 190, 70, 255);
  p.bad = IM_COL32(255, 95, 90, 255);
  p.flash = IM_COL32(80, 170, 255, 255);
  p.standard = IM_COL32(245, 120, 80, 255);
  p.hbm = IM_COL32(60, 50, 80, 255);
  p.sram = IM_COL32(40, 70, 60, 255);
  p.compute = IM_COL32(70, 60, 40, 255);
  p.ghost = IM_COL32(200, 200, 210, 70);
  p.plot_bg = IM_COL32(30, 33, 40, 255);
  return p;
}

Palette LightPalette() {
  Palette p;
  p.cursor = IM_COL32(230, 110, 0, 255);
  p.cursor_fill = IM_COL32(230, 110, 0, 40);
  p.done_wash = IM_COL32(245, 245, 248, 170);
  p.masked = IM_COL32(185, 185, 190, 255);
  p.pending = IM_COL32(232, 234, 240, 255);
  p.discarded = IM_COL32(198, 206, 222, 255);
  p.grid = IM_COL32(120, 124, 135, 140);
  p.heading = IM_COL32(20, 80, 160, 255);
  p.dim = IM_COL32(110, 110, 120, 255);
  p.good = IM_COL32(20, 140, 60, 255);
  p.warn = IM_COL32(190, 120, 0, 255);
  p.bad = IM_COL32(200, 40, 40, 255);
  p.flash = IM_COL32(30, 110, 210, 255);
  p.standard = IM_COL32(215, 80, 40, 255);
  p.hbm = IM_COL32(228, 220, 245, 255);
  p.sram = IM_COL32(215, 240, 228, 255);
  p.compute = IM_COL32(248, 236, 210, 255);
  p.ghost = IM_COL32(60, 60, 70, 60);
  p.plot_bg = IM_COL32(250, 250, 252, 255);
  return p;
}

}  // namespace

const char* ThemeName(Theme theme) { return theme == Theme::kDark ? "dark" : "light"; }

bool ParseTheme(const std::string& text, Theme* theme) {
  if (text == "dark") *theme = Theme::kDark;
  else if (text == "light") *theme = Theme::kLight;
  else return false;
  return true;
}

void ApplyTheme(Theme theme, float scale) {
  ImGuiStyle style;
  if (theme == Theme::kDark) {
    ImGui::StyleColorsDark(&style);
    g_palette = DarkPalette();
  } else {
    ImGui::StyleColorsLight(&style);
    g_palette = LightPalette();
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.98f, 1.0f);
    // ImGui's light frames are white on this near-white background and its disabled text #999: on a projector
    // the fields and check boxes vanish and the secondary text fades. Grey frames with a border, darker grey text.
    style.Colors[ImGuiCol_FrameBg] = ImVec4(0.88f, 0.89f, 0.92f, 1.0f);
    style.Colors[ImGuiCol_FrameBgHovered] = ImVec4(0.80f, 0.85f, 0.95f, 1.0f);
    style.Colors[ImGuiCol_Border] = ImVec4(0.55f, 0.57f, 0.62f, 0.60f);
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.38f, 0.38f, 0.42f, 1.0f);
    style.FrameBorderSize = 1.0f;
  }
  style.WindowRounding = 0.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.TabRounding = 3.0f;
  style.WindowBorderSize = 1.0f;
  style.ItemSpacing = ImVec2(7, 5);
  style.WindowPadding = ImVec2(8, 7);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

const Palette& GetPalette() {
  if (g_palette.cursor == 0) g_palette = DarkPalette();
  return g_palette;
}
void SetPalette(const Palette& palette) { g_palette = palette; }

float FontSizeFor(float ui_scale, bool presentation) { return 15.0f * ui_scale * (presentation ? 1.4f : 1.0f); }

Fonts LoadFonts(ImFontAtlas& atlas, float size_px, std::string* note) {
  Fonts f;
  f.size_px = size_px;
  const std::string sans = std::string(kDejaVuDir) + "DejaVuSans.ttf";
  const std::string mono = std::string(kDejaVuDir) + "DejaVuSansMono.ttf";
  if (FileExists(sans) && FileExists(mono)) {
    ImFontConfig config;
    config.OversampleH = 2;
    config.OversampleV = 1;
    f.regular = atlas.AddFontFromFileTTF(sans.c_str(), size_px, &config, kGlyphRanges);
    f.mono = atlas.AddFontFromFileTTF(mono.c_str(), size_px * 0.9f, &config, kGlyphRanges);
    // DejaVu Sans Mono lacks ℓ and the combining tilde of m̃ and P̃ that the kernels' comments use (the algorithm
    // panel shows those sources): the proportional face fills in the glyphs the mono face does not have.
    static constexpr ImWchar kMonoFillIn[] = {0x0300, 0x036F, 0x2100, 0x214F, 0};
    ImFontConfig fill_in = config;
    fill_in.MergeMode = true;
    atlas.AddFontFromFileTTF(sans.c_str(), size_px * 0.9f, &fill_in, kMonoFillIn);
    f.large = atlas.AddFontFromFileTTF(sans.c_str(), size_px * 1.25f, &config, kGlyphRanges);
    f.dejavu = f.regular && f.mono && f.large;
  }
  if (!f.dejavu) {
    atlas.Clear();
    ImFontConfig config;
    config.SizePixels = size_px;
    f.regular = f.mono = f.large = atlas.AddFontDefault(&config);
    if (note) *note = "DejaVu Sans not found in " + std::string(kDejaVuDir) +
                      " (package fonts-dejavu-core): using ImGui's built-in font, which lacks Greek and math symbols";
  }
  g_fonts = f;
  return f;
}

const Fonts& GetFonts() { return g_fonts; }
void SetFonts(const Fonts& fonts) { g_fonts = fonts; }
ImFont* MonoFont() { return g_fonts.mono ? g_fonts.mono : ImGui::GetFont(); }
ImFont* LargeFont() { return g_fonts.large ? g_fonts.large : ImGui::GetFont(); }

}  // namespace flashviz
