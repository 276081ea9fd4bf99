#include "app/cli/problem_options.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>

#include "app/io/hw4_file.h"
#include "kernels/common/format.h"

namespace flashviz {
namespace {

std::optional<double> ParseScale(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text == "none") return 1.0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0')
    throw UsageError(Sprintf("--scale %s: expected a number or \"none\"", text.c_str()));
  return value;
}

// The tile sizes and the rest resolved from the options: what cannot be resolved is a usage error.
AttentionProblem ResolveFromOptions(const ProblemRequest& request) {
  try {
    return ResolveProblem(request);
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

void AddProblemOptions(CLI::App& cmd, ProblemOptions& o) {
  cmd.add_option("--n", o.n, "sequence length N (default 64; from the file with --input)");
  cmd.add_option("--d", o.d, "head dimension d (default 8; from the file with --input)");
  cmd.add_option("--br", o.br, "rows of a Q tile, B_r (default min(B_c, d))");
  cmd.add_option("--bc", o.bc, "rows of a K/V tile, B_c (default ceil(M / 4d))");
  cmd.add_option("--sram", o.sram_bytes, "on-chip SRAM size M in bytes (default 16384, a Vortex core's local memory)");
  cmd.add_option("--order", o.order, "loop order: kv (Algorithm 1, K/V outer) or q (FlashAttention-2, Q outer)")
      ->check(CLI::IsMember({"kv", "q"}));
  cmd.add_option("--scale", o.scale, "scale applied to Q·Kᵀ: a number or none (default 1/sqrt(d))");
  cmd.add_flag("--causal", o.causal, "mask keys after the query (key index > query index)");
  AddSeedOption(cmd, o.seed, "seed of the random inputs (uniform in [-3, 3]; default 0)");
  cmd.add_option("--input", o.input, "take Q, K, V from an HW4 file instead of random values");
  cmd.add_option_function<int>(
      "--batch",
      [&o](int batch) {
        o.batch = batch;
        o.batch_given = true;
      },
      "which batch of the --input file (default 0)");
}

void AddSeedOption(CLI::App& cmd, std::uint64_t& seed, const std::string& description) {
  cmd.add_option_function<std::string>(
      "--seed",
      [&seed](const std::string& text) {
        // strtoull would accept "-1" (as 2⁶⁴ − 1) and saturate on overflow: only plain digits, range checked.
        errno = 0;
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || *end != '\0' ||
            errno == ERANGE)
          throw CLI::ValidationError("--seed", text + " is not a seed (a whole number from 0 to 18446744073709551615)");
        seed = value;
      },
      description);
}

ProblemRequest ToRequest(const ProblemOptions& o, int n, int d) {
  ProblemRequest request;
  request.n = n;
  request.d = d;
  request.br = o.br;
  request.bc = o.bc;
  request.sram_bytes = o.sram_bytes;
  request.order = ParseLoopOrder(o.order).value_or(LoopOrder::kKvOuter);
  request.scale = ParseScale(o.scale);
  request.causal = o.causal;
  return request;
}

LoadedProblem LoadProblem(const ProblemOptions& o, bool with_inputs) {
  LoadedProblem loaded;
  if (o.input.empty() && o.batch_given)
    throw UsageError("--batch picks a batch of an HW4 file: give it with --input FILE");
  if (o.input.empty()) {
    loaded.problem = ResolveFromOptions(ToRequest(o, o.n.value_or(64), o.d.value_or(8)));
    if (with_inputs)
      loaded.inputs = std::make_shared<AttentionInputs>(MakeRandomInputs(loaded.problem.n, loaded.problem.d, o.seed));
    return loaded;
  }
  const Hw4Input header = ReadHw4Header(o.input);
  if (o.n && *o.n != header.n)
    throw UsageError(Sprintf("--n %d disagrees with %s, whose N is %d", *o.n, o.input.c_str(), header.n));
  if (o.d && *o.d != header.d)
    throw UsageError(Sprintf("--d %d disagrees with %s, whose d is %d", *o.d, o.input.c_str(), header.d));
  if (o.batch < 0 || o.batch >= header.b)
    throw UsageError(Sprintf("--batch %d: %s has batches 0 to %d", o.batch, o.input.c_str(), header.b - 1));
  loaded.problem = ResolveFromOptions(ToRequest(o, header.n, header.d));
  // One batch read, not the whole file (an HW4 file of many batches can be gigabytes).
  if (with_inputs) loaded.inputs = std::make_shared<AttentionInputs>(ReadHw4Batch(o.input, o.batch));
  return loaded;
}

}  // namespace flashviz
