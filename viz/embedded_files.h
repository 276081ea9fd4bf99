// Files whose text is compiled into the binary (scripts/embed_files.cmake writes their sources at build time), so
// an installed flashviz has them without the source tree.
#pragma once

#include <span>
#include <string_view>

namespace flashviz {

struct EmbeddedFile {
  std::string_view name;  // the file name, "first-lesson.json"
  std::string_view text;
};

// assets/lessons/*.json
std::span<const EmbeddedFile> EmbeddedLessons();

}  // namespace flashviz
