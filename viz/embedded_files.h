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
// kernels/cuda/flash1.cu, flash2_row.cu and backward/flash2_bwd.cu, for the algorithm panel (their `// @phase`
// markers)
std::span<const EmbeddedFile> EmbeddedKernelSources();
// docs/results/2026-11-21-h200/fp32_d64.csv, fp32_d64_naive.csv and peers.csv: the benchmark panel's
// measurements without a GPU
std::span<const EmbeddedFile> EmbeddedSampleResults();

}  // namespace flashviz
