// flashviz kernels: the registry of CUDA variants (kernels/cuda/registry_rows.inc), one row each, in the order of
// the progression, then the backward pass's (kernels/cuda/backward/backward_rows.inc) and decoding's
// (kernels/cuda/decode/decode_rows.inc), and whether they can run here. Works in a build without CUDA (the catalogues
// are plain C++).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

#include "app/cli/commands.h"
#include "kernels/common/format.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "kernels/cuda/decode/decode_registry.h"
#include "kernels/cuda/registry.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/harness.h"
#endif

namespace flashviz {
namespace {

struct KernelsOptions {
  bool brief = false;
};

// `text` padded with spaces to `width` columns as a terminal shows them (UTF-8: one column per code point).
std::string Pad(const std::string& text, std::size_t width) {
  std::size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;
  return columns >= width ? text + " " : text + std::string(width - columns, ' ');
}

// Where the kernels would run, or why they cannot.
std::string RuntimeLine() {
#ifdef FLASHVIZ_HAVE_CUDA
  if (auto reason = cuda::CudaUnavailableReason()) return *reason;
  return "device: " + cuda::DeviceDescription();
#else
  return "built without CUDA: the kernels are listed but cannot run in this build";
#endif
}

// The table of one catalogue, then (unless brief) each row's description.
void PrintCatalogue(std::span<const cuda::VariantInfo> catalogue, bool brief) {
  std::printf(" #  %s%s%s%s\n", Pad("id", 19).c_str(), Pad("dtypes", 17).c_str(), Pad("d", 15).c_str(), "tiles");
  int index = 0;
  for (const cuda::VariantInfo& v : catalogue)
    std::printf("%2d  %s%s%s%s\n", ++index, Pad(v.id, 19).c_str(), Pad(cuda::DTypesText(v.dtypes), 17).c_str(),
                Pad(cuda::HeadDimsText(v), 15).c_str(), v.tiles);
  if (brief) return;
  for (const cuda::VariantInfo& v : catalogue) {
    std::printf("\n%s — %s\n", v.id, v.name);
    std::printf("  changes:   %s\n", v.changes);
    std::printf("  teaches:   %s\n", v.teaches);
    std::printf("  mirrors:   %s\n", v.mirrors);
    std::printf("  launch:    %s\n", v.launch);
    std::printf("  workspace: %s\n", v.workspace);
  }
}

int RunKernels(const KernelsOptions& o) {
  const auto catalogue = cuda::Catalogue();
  std::printf("%zu CUDA variants (kernels/cuda/registry_rows.inc); %s\n\n", catalogue.size(), RuntimeLine().c_str());
  PrintCatalogue(catalogue, o.brief);
  const auto backward = cuda::BackwardCatalogue();
  std::printf("\nbackward: %zu variants of the backward pass (kernels/cuda/backward/backward_rows.inc; "
              "`flashviz bench --pass backward`)\n\n",
              backward.size());
  PrintCatalogue(backward, o.brief);
  const auto decode = cuda::DecodeCatalogue();
  std::printf("\ndecode: %zu variants of decoding (kernels/cuda/decode/decode_rows.inc; `flashviz bench --decode`)\n\n",
              decode.size());
  PrintCatalogue(decode, o.brief);
  if (!o.brief) std::printf("\nThe papers and projects the variants mirror: docs/sources.md.\n");
  return 0;
}

}  // namespace

void AddKernelsCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<KernelsOptions>();
  CLI::App* cmd =
      app.add_subcommand("kernels", "List the CUDA kernel variants (the registry) and whether they can run");
  cmd->add_flag("--brief", options->brief, "the table only, without each variant's description");
  commands.push_back({cmd, [options] { return RunKernels(*options); }});
}

}  // namespace flashviz
