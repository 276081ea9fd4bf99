#include "viz/widgets.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "kernels/common/format.h"
#include "viz/theme.h"

namespace flashviz {
namespace {

struct TildeMark {
  std::size_t begin, end;  // byte range of the letter under the tilde, in the stripped text
  float height;            // where the letter's top is, as a fraction of the font size below the line's top
};

// Strips "~" markers that follow a letter and records where the tildes go.
std::string Strip(const char* text, std::vector<TildeMark>* marks) {
  std::string out;
  std::size_t last_begin = std::string::npos;
  bool last_is_letter = false;
  float last_top = 0.26f;
  for (const char* p = text; *p;) {
    // Index subscripts: "_i", "_j", "_ij" after a symbol become ᵢ, ⱼ (B_r, B_c, m_new keep their underscore).
    if (*p == '_' && (p[1] == 'i' || p[1] == 'j')) {
      const char* q = p + 1;
      while (*q == 'i' || *q == 'j') ++q;
      const bool token_end = !(std::isalnum(static_cast<unsigned char>(*q)) || *q == '_');
      if (token_end && q - p <= 3) {
        for (const char* c = p + 1; c < q; ++c) out += *c == 'i' ? "\u1d62" : "\u2c7c";
        last_is_letter = false;
        p = q;
        continue;
      }
    }
    if (*p == '~' && last_is_letter) {
      if (marks) marks->push_back({last_begin, out.size(), last_top});
      last_is_letter = false;
      ++p;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(*p);
    std::size_t len = 1;
    if (c >= 0xF0) len = 4;
    else if (c >= 0xE0) len = 3;
    else if (c >= 0xC0) len = 2;
    last_begin = out.size();
    const bool ascii_letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    last_is_letter = ascii_letter || c >= 0xC0;  // any non-ASCII character can carry a tilde (ℓ, Greek)
    // Capitals and ascenders reach higher than x-height letters; ℓ (U+2113, E2 84 93) highest of all.
    const bool tall = (c >= 'A' && c <= 'Z') || c >= 0xC0 ||
                      (ascii_letter && std::string_view("bdfhklt").find(*p) != std::string_view::npos);
    const bool script_l =
        c == 0xE2 && static_cast<unsigned char>(p[1]) == 0x84 && static_cast<unsigned char>(p[2]) == 0x93;
    last_top = script_l ? -0.03f : tall ? 0.07f : 0.26f;
    std::size_t copied = 0;
    while (copied < len && p[copied]) out.push_back(p[copied++]);  // a truncated sequence stops at the NUL
    p += copied;
  }
  return out;
}

void DrawTilde(ImDrawList* dl, float x0, float x1, float top, float font_size, float height, ImU32 color) {
  const float y = top + font_size * height;
  const float w = x1 - x0;
  const float amp = font_size * 0.045f;
  ImVec2 points[9];
  for (int k = 0; k < 9; ++k) {
    const float t = k / 8.0f;
    points[k] = ImVec2(x0 + w * (0.12f + 0.76f * t), y - amp * std::sin(t * 6.2831853f));
  }
  dl->AddPolyline(points, 9, color, 0, std::max(1.0f, font_size * 0.07f));
}

void DrawMarks(ImDrawList* dl, ImVec2 pos, const std::string& text, const std::vector<TildeMark>& marks, ImFont* font,
               float font_size, ImU32 color) {
  if (marks.empty()) return;
  // Per line: the x of a byte offset is the width of the line's text before it.
  for (const TildeMark& m : marks) {
    int line = 0;
    std::size_t line_begin = 0;
    for (std::size_t k = 0; k < m.begin; ++k)
      if (text[k] == '\n') {
        ++line;
        line_begin = k + 1;
      }
    const char* base = text.c_str() + line_begin;
    const float x0 = font->CalcTextSizeA(font_size, FLT_MAX, 0, base, text.c_str() + m.begin).x;
    const float x1 = font->CalcTextSizeA(font_size, FLT_MAX, 0, base, text.c_str() + m.end).x;
    DrawTilde(dl, pos.x + x0, pos.x + x1, pos.y + line * font_size, font_size, m.height, color);
  }
}

// Breaks `text` into lines no wider than `wrap_width` as ImGui would, with explicit newlines, moving the marks
// along (ImGui's own wrapping would not tell us where the tildes went).
std::string Wrap(const std::string& text, std::vector<TildeMark>& marks, ImFont* font, float font_size,
                 float wrap_width) {
  std::string out;
  std::vector<std::size_t> map(text.size() + 1, 0);
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  const float scale = font_size / font->FontSize;
  const char* line = begin;
  while (line < end) {
    const char* newline = static_cast<const char*>(std::memchr(line, '\n', static_cast<std::size_t>(end - line)));
    const char* line_end = newline ? newline : end;
    const char* p = line;
    while (p < line_end) {
      const char* cut = font->CalcWordWrapPositionA(scale, p, line_end, wrap_width);
      if (cut <= p) cut = p + 1;  // a word wider than the line: take at least one byte
      for (const char* c = p; c < cut; ++c) {
        map[static_cast<std::size_t>(c - begin)] = out.size();
        out.push_back(*c);
      }
      p = cut;
      while (p < line_end && (*p == ' ' || *p == '\t')) map[static_cast<std::size_t>(p++ - begin)] = out.size();
      if (p < line_end) out.push_back('\n');
    }
    map[static_cast<std::size_t>(line_end - begin)] = out.size();
    if (newline) out.push_back('\n');
    line = newline ? newline + 1 : end;
  }
  map[text.size()] = out.size();
  for (TildeMark& m : marks) {
    m.begin = map[m.begin];
    m.end = map[m.end];
  }
  return out;
}

}  // namespace

std::string StripTildes(const char* text) { return Strip(text, nullptr); }
std::string PlainNotation(const char* text) { return Strip(text, nullptr); }

void HelpMarker(const char* text) {
  // After SameLine() following wrapped text the line has no room left: the marker then starts the next line
  // instead of being wrapped one character per line. A marker that merely runs into the padding stays.
  if (ImGui::GetContentRegionAvail().x < 0.5f * ImGui::CalcTextSize("(?)").x) ImGui::NewLine();
  ImGui::PushTextWrapPos(-1.0f);
  ImGui::TextDisabled("(?)");
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    MathText(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void WrapIfNoRoom(float width, float indent_x) {
  if (ImGui::GetContentRegionAvail().x >= width) return;
  ImGui::NewLine();
  if (indent_x >= 0.0f) ImGui::SetCursorPosX(indent_x);
}

float RadioButtonWidth(const char* label) {
  const float text = ImGui::CalcTextSize(label, nullptr, true).x;
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + text;
}

void MathTextColored(ImU32 color, const char* text) {
  std::vector<TildeMark> marks;
  std::string stripped = Strip(text, &marks);
  // Wrap here when the window asks for wrapping, so the tildes land where the letters do.
  const ImGuiWindow* window = ImGui::GetCurrentWindow();
  const float wrap_pos = window->DC.TextWrapPos;
  if (wrap_pos >= 0.0f) {
    const float cursor_x = ImGui::GetCursorScreenPos().x;
    // As ImGui::CalcWrapWidthForPos does.
    const float limit = wrap_pos == 0.0f ? window->WorkRect.Max.x : window->Pos.x + wrap_pos - window->Scroll.x;
    const float width = std::max(limit - cursor_x, 1.0f);
    stripped = Wrap(stripped, marks, ImGui::GetFont(), ImGui::GetFontSize(), width);
  }
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::PushTextWrapPos(-1.0f);
  ImGui::TextUnformatted(stripped.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  DrawMarks(ImGui::GetWindowDrawList(), ImGui::GetItemRectMin(), stripped, marks, ImGui::GetFont(),
            ImGui::GetFontSize(), color);
}

void MathText(const char* text) { MathTextColored(ImGui::GetColorU32(ImGuiCol_Text), text); }

void MathTextF(const char* format, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  MathText(buffer);
}

ImVec2 DrawMathText(ImDrawList* dl, ImVec2 pos, ImU32 color, const char* text, ImFont* font, float font_size) {
  if (!font) font = ImGui::GetFont();
  if (font_size <= 0) font_size = ImGui::GetFontSize();
  std::vector<TildeMark> marks;
  const std::string stripped = Strip(text, &marks);
  dl->AddText(font, font_size, pos, color, stripped.c_str());
  DrawMarks(dl, pos, stripped, marks, font, font_size, color);
  return font->CalcTextSizeA(font_size, FLT_MAX, 0, stripped.c_str());
}

ImVec2 CalcMathTextSize(const char* text, ImFont* font, float font_size) {
  if (!font) font = ImGui::GetFont();
  if (font_size <= 0) font_size = ImGui::GetFontSize();
  const std::string stripped = Strip(text, nullptr);
  return font->CalcTextSizeA(font_size, FLT_MAX, 0, stripped.c_str());
}

void MathTooltip(const char* text) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  MathText(text);
  ImGui::EndTooltip();
}

void SectionTitle(const char* title, const char* help) {
  ImGui::PushStyleColor(ImGuiCol_Text, GetPalette().heading);
  MathText(title);
  ImGui::PopStyleColor();
  if (help) {
    ImGui::SameLine();
    HelpMarker(help);
  }
}

std::string Num(double value, int significant) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "\u2212\u221e" : "\u221e";
  return Sprintf("%.*g", significant, value);
}

std::string CellNum(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "\u2212\u221e" : "\u221e";
  // A value that rounds to zero is "0.00", not "-0.00".
  const std::string text = Sprintf("%.*f", decimals, value);
  return text.find_first_not_of("-0.") == std::string::npos && text[0] == '-' ? text.substr(1) : text;
}

}  // namespace flashviz
