// Small drawing helpers shared by the panels: "(?)" help markers, text with paper notation (a tilde drawn
// over a letter, since ImGui renders no combining characters), number formatting, tooltips.
#pragma once

#include <imgui.h>

#include <string>

namespace flashviz {

// "(?)" in a dim colour; hovering shows `text` wrapped (one next to every concept).
void HelpMarker(const char* text);

// Text in the paper's notation: "X~" is X with a tilde over it (P~ → P̃, m~ → m̃, ℓ~ → ℓ̃) and the index
// subscripts "_i", "_j", "_ij" are drawn as ᵢ, ⱼ (S_ij → Sᵢⱼ; B_r, B_c, T_r, m_new keep their underscore, as
// Unicode has no subscript c). Several lines allowed. The font holds Greek, ℓ, ∞, √, ×, −, ᵢ ⱼ ᵀ, arrows, ≤ ≥.
void MathText(const char* text);
void MathTextColored(ImU32 color, const char* text);
[[gnu::format(printf, 1, 2)]] void MathTextF(const char* format, ...);
// The same, drawn at a position (no ImGui item); returns its size.
ImVec2 DrawMathText(ImDrawList* draw_list, ImVec2 pos, ImU32 color, const char* text, ImFont* font = nullptr,
                    float font_size = 0.0f);
ImVec2 CalcMathTextSize(const char* text, ImFont* font = nullptr, float font_size = 0.0f);
// `text` with the tilde markers removed and the subscripts converted (what CalcTextSize measures).
std::string StripTildes(const char* text);
// The same for places that draw plain text (window titles): tildes are dropped.
std::string PlainNotation(const char* text);

// A tooltip of MathText lines, shown while the last item is hovered.
void MathTooltip(const char* text);

// Call right after ImGui::SameLine(): when the next item, `width` pixels wide, no longer fits on this line, moves
// to the next line instead, at `indent_x` (window coordinates, as SetCursorPosX; negative: the line's usual
// start). Rows of fields and radio buttons then wrap in a narrow column (the 1280×720 centre tabs, the sidebar in
// large-font mode) rather than running past its edge, where ImGui clips them.
void WrapIfNoRoom(float width, float indent_x = -1.0f);
// The width of ImGui::RadioButton(label): the circle, the inner spacing and the text.
float RadioButtonWidth(const char* label);

// A heading in the current window with an optional help marker after it.
void SectionTitle(const char* title, const char* help = nullptr);

// Numbers as the panels print them: %.4g, "−∞" and "∞" for infinities, "nan".
std::string Num(double value, int significant = 4);
// Fixed decimals for numbers inside cells ("−∞" when masked).
std::string CellNum(double value, int decimals);

}  // namespace flashviz
