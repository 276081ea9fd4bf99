// Light and dark themes, UI scale, and the fonts (DejaVu Sans with the glyphs the paper's notation needs).
#pragma once

#include <imgui.h>

#include <string>

namespace flashviz {

enum class Theme { kDark, kLight };
const char* ThemeName(Theme theme);  // "dark" / "light"
bool ParseTheme(const std::string& text, Theme* theme);

// Colours that carry meaning in the views, per theme.
struct Palette {
  ImU32 cursor;          // the current tiles, in every matrix at once
  ImU32 cursor_fill;     // a translucent wash over the current tiles
  ImU32 done_wash;       // laid over finished tiles (they fade)
  ImU32 masked;          // causally masked tiles (no work at all)
  ImU32 pending;         // tiles not computed yet (S only: it has no values until computed)
  ImU32 discarded;       // S tiles computed earlier and thrown away
  ImU32 grid;            // tile boundaries
  ImU32 heading;         // section titles
  ImU32 dim;             // secondary text
  ImU32 good, warn, bad; // status colours
  ImU32 flash, standard; // the two algorithms in the traffic views
  ImU32 hbm, sram, compute;  // the memory chart's boxes
  ImU32 ghost;           // previous values of m and ℓ
  ImU32 plot_bg;
};

// Sets ImGui's style (colours, sizes scaled by `scale`) and the palette.
void ApplyTheme(Theme theme, float scale);
const Palette& GetPalette();
void SetPalette(const Palette& palette);  // restores a saved palette (offscreen frames, raster.h)

// The fonts the panels use. `regular` is the default font; `mono` prints numbers in cells; `large` is the
// narration line. All may be the same (ImGui's built-in font) when DejaVu is missing.
struct Fonts {
  ImFont* regular = nullptr;
  ImFont* mono = nullptr;
  ImFont* large = nullptr;
  bool dejavu = false;   // false: ImGui's built-in font (Latin only) was used
  float size_px = 15.0f;
};

// Adds the fonts to `atlas` (after Clear()) at `size_px` and builds nothing (the renderer builds the atlas).
// Looks in /usr/share/fonts/truetype/dejavu; falls back to ImGui's default font and says so in `note`.
Fonts LoadFonts(ImFontAtlas& atlas, float size_px, std::string* note = nullptr);
const Fonts& GetFonts();
void SetFonts(const Fonts& fonts);  // for code that builds a second atlas and restores the first
// The font for numbers in cells: Fonts::mono, or the current font before any fonts were loaded.
ImFont* MonoFont();
ImFont* LargeFont();
// The base font size: 15 px at UI scale 1, ×1.4 in large-font mode.
float FontSizeFor(float ui_scale, bool presentation);

}  // namespace flashviz
