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
// kernels/cuda/flash1.cu and flash2_row.cu, for the algorithm panel (their `// @phase` markers)
std::span<const EmbeddedFile> EmbeddedKernelSources();

}  // namespace flashviz
