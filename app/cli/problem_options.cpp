#include "app/cli/problem_options.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "app/io/hw4_file.h"
#include "kernels/common/files.h"
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
  cmd.add_option("--br", o.br, "rows of a Q tile, B_r (default min(B_c, d); backward: the B below)");
  cmd.add_option("--bc", o.bc,
                 "rows of a K/V tile, B_c (default ceil(M / 4d); backward: the largest B with 7·B·d + 2·B² + 2·B "
                 "floats in M)");
  cmd.add_option("--sram", o.sram_bytes, "on-chip SRAM size M in bytes (default 16384, a Vortex core's local memory)");
  cmd.add_option("--order", o.order, "loop order: kv (Algorithm 1, K/V outer) or q (FlashAttention-2, Q outer)")
      ->check(CLI::IsMember({"kv", "q"}));
  cmd.add_option("--pass", o.pass,
                 "forward (the default) or backward (FlashAttention-2's backward pass, after the forward pass in the q "
                 "order that saves O and L)")
      ->check(CLI::IsMember({"forward", "backward"}));
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
  cmd.add_option("--dout", o.dout,
                 "with --pass backward: the upstream gradient dO as raw float32, N·d values (or B·N·d beside an "
                 "--input file: --batch picks it); default random in [-1, 1] from --seed");
  cmd.add_flag("--decode", o.decode,
               "decoding: R query rows per head against a KV cache of N keys, split-KV (flash-decoding) with grouped "
               "query heads and a paged cache");
  cmd.add_option("--q-rows", o.q_rows,
                 "with --decode: query rows per head, R (default 1; more for speculative decoding)");
  cmd.add_option("--kv-len", o.kv_len, "with --decode: keys in the KV cache, N (default 256)");
  cmd.add_option("--splits", o.splits,
                 "with --decode: KV splits S (default: from --sram, the largest chunk of whole pages whose tiles fit)");
  cmd.add_option("--heads", o.heads, "with --decode: query heads H (default 4)");
  cmd.add_option("--kv-heads", o.kv_heads,
                 "with --decode: KV heads G, dividing H (default 2); query head h reads KV head floor(h·G/H)");
  cmd.add_option("--page", o.page, "with --decode: tokens per block of the paged KV cache, P (default 16)");
  cmd.add_option("--ring", o.ring,
                 "ring attention over P devices (2 or more): each holds a slice of Q, K, V; the K/V slices travel "
                 "around the ring and every device merges them into its running m, l, O");
  cmd.add_flag("--zigzag", o.zigzag,
               "with --ring: the load-balanced slices (2P chunks; device p holds chunks p and 2P-1-p) instead of one "
               "contiguous chunk a device");
  cmd.add_option("--ring-tflops", o.ring_tflops,
                 "with --ring: the timeline's compute rate of one device in TFLOP/s (default 300)");
  cmd.add_option("--ring-link-gbps", o.ring_link_gbps,
                 "with --ring: the timeline's bandwidth of one link, one direction, in GB/s (default 300)");
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
  request.pass = ParsePass(o.pass).value_or(Pass::kForward);
  request.scale = ParseScale(o.scale);
  request.causal = o.causal;
  return request;
}

namespace {

// dO for the backward pass: N·d float32 values, or one head of B·N·d beside an HW4 file of B batches.
std::vector<float> ReadUpstreamGradient(const std::string& path, int n, int d, int batches, int batch) {
  const InputFile file(path);
  const std::int64_t head_bytes = std::int64_t{n} * d * 4;
  std::int64_t offset = 0;
  if (file.size() == head_bytes * batches && batches > 1)
    offset = head_bytes * batch;
  else if (file.size() != head_bytes)
    throw InputError(Sprintf(
        "--dout %s: %lld bytes, but dO of N = %d, d = %d is %lld bytes of float32 (N·d values)%s", path.c_str(),
        static_cast<long long>(file.size()), n, d, static_cast<long long>(head_bytes),
        batches > 1
            ? Sprintf(", or %lld for all %d batches", static_cast<long long>(head_bytes * batches), batches).c_str()
            : ""));
  std::vector<float> dout(static_cast<std::size_t>(n) * d);
  file.ReadAt(dout.data(), dout.size() * sizeof(float), offset);
  for (std::size_t at = 0; at < dout.size(); ++at)
    if (!std::isfinite(dout[at]))
      throw InputError(Sprintf("--dout %s: value %zu (row %zu, column %zu) is %g: dO must be finite", path.c_str(), at,
                               at / static_cast<std::size_t>(d), at % static_cast<std::size_t>(d),
                               static_cast<double>(dout[at])));
  return dout;
}

void AddUpstreamGradient(const ProblemOptions& o, int batches, LoadedProblem& loaded) {
  if (!loaded.problem.backward()) return;
  auto inputs = std::make_shared<AttentionInputs>(*loaded.inputs);
  inputs->dout = o.dout.empty() ? MakeRandomUpstreamGradient(loaded.problem.n, loaded.problem.d, o.seed)
                                : ReadUpstreamGradient(o.dout, loaded.problem.n, loaded.problem.d, batches, o.batch);
  loaded.inputs = std::move(inputs);
}

// The --input file's header, checked against --n, --d and --batch.
Hw4Input ReadInputHeader(const ProblemOptions& o) {
  const Hw4Input header = ReadHw4Header(o.input);
  if (o.n && *o.n != header.n)
    throw UsageError(Sprintf("--n %d disagrees with %s, whose N is %d", *o.n, o.input.c_str(), header.n));
  if (o.d && *o.d != header.d)
    throw UsageError(Sprintf("--d %d disagrees with %s, whose d is %d", *o.d, o.input.c_str(), header.d));
  if (o.batch < 0 || o.batch >= header.b)
    throw UsageError(Sprintf("--batch %d: %s has batches 0 to %d", o.batch, o.input.c_str(), header.b - 1));
  return header;
}

}  // namespace

void CheckNoDecodeOptions(const ProblemOptions& o) {
  const std::pair<const char*, bool> given[] = {
      {"--q-rows", o.q_rows.has_value()}, {"--kv-len", o.kv_len.has_value()},     {"--splits", o.splits.has_value()},
      {"--heads", o.heads.has_value()},   {"--kv-heads", o.kv_heads.has_value()}, {"--page", o.page.has_value()}};
  for (const auto& [name, set] : given)
    if (set) throw UsageError(Sprintf("%s describes a decoding step: add --decode", name));
}

DecodeRequest ToDecodeRequest(const ProblemOptions& o) {
  DecodeRequest request;
  if (o.kv_len) request.kv_len = *o.kv_len;
  if (o.d) request.d = *o.d;
  if (o.q_rows) request.q_rows = *o.q_rows;
  if (o.heads) request.heads = *o.heads;
  if (o.kv_heads) request.kv_heads = *o.kv_heads;
  if (o.page) request.page = *o.page;
  request.splits = o.splits;
  request.sram_bytes = o.sram_bytes;
  request.scale = ParseScale(o.scale);
  return request;
}

void CheckNoRingOptions(const ProblemOptions& o) {
  const std::pair<const char*, bool> given[] = {{"--zigzag", o.zigzag},
                                                {"--ring-tflops", o.ring_tflops.has_value()},
                                                {"--ring-link-gbps", o.ring_link_gbps.has_value()}};
  for (const auto& [name, set] : given)
    if (set) throw UsageError(Sprintf("%s describes ring attention: add --ring P", name));
}

RingRequest ToRingRequest(const ProblemOptions& o, int n, int d) {
  RingRequest request;
  request.n = n;
  request.d = d;
  request.devices = o.ring.value_or(request.devices);
  request.causal = o.causal;
  request.zigzag = o.zigzag;
  request.br = o.br;
  request.bc = o.bc;
  request.sram_bytes = o.sram_bytes;
  request.scale = ParseScale(o.scale);
  if (o.ring_tflops) request.device_tflops = *o.ring_tflops;
  if (o.ring_link_gbps) request.link_gbps = *o.ring_link_gbps;
  return request;
}

LoadedRingProblem LoadRingProblem(const ProblemOptions& o, bool with_inputs) {
  if (o.decode) throw UsageError("--ring and --decode are two different problems: give one");
  CheckNoDecodeOptions(o);
  const std::pair<const char*, bool> refused[] = {
      {"--order (each device runs FlashAttention-2's Q-outer loop)", o.order != "kv"},
      {"--pass backward (the ring model is the forward pass)", o.pass != "forward"},
      {"--dout", !o.dout.empty()}};
  for (const auto& [name, set] : refused)
    if (set) throw UsageError(Sprintf("%s does not apply to --ring", name));
  if (o.input.empty() && o.batch_given)
    throw UsageError("--batch picks a batch of an HW4 file: give it with --input FILE");
  int n = o.n.value_or(64), d = o.d.value_or(8);
  if (!o.input.empty()) {
    const Hw4Input header = ReadInputHeader(o);
    n = header.n;
    d = header.d;
  }
  LoadedRingProblem loaded;
  try {
    loaded.problem = ResolveRingProblem(ToRingRequest(o, n, d));
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  if (with_inputs)
    loaded.inputs = std::make_shared<AttentionInputs>(o.input.empty() ? MakeRandomInputs(n, d, o.seed)
                                                                      : ReadHw4Batch(o.input, o.batch));
  return loaded;
}

LoadedDecodeProblem LoadDecodeProblem(const ProblemOptions& o, bool with_inputs) {
  CheckNoRingOptions(o);
  // What describes the forward or backward pass's N × N problem has no meaning for one decoding step.
  const std::pair<const char*, bool> refused[] = {
      {"--n (the decode's KV length is --kv-len)", o.n.has_value()},
      {"--br", o.br.has_value()},
      {"--bc", o.bc.has_value()},
      {"--order", o.order != "kv"},
      {"--pass", o.pass != "forward"},
      {"--causal (a decoding step's query rows come after every key in the cache)", o.causal},
      {"--input", !o.input.empty()},
      {"--batch", o.batch_given},
      {"--dout", !o.dout.empty()}};
  for (const auto& [name, set] : refused)
    if (set) throw UsageError(Sprintf("%s does not apply to --decode", name));
  LoadedDecodeProblem loaded;
  try {
    loaded.problem = ResolveDecodeProblem(ToDecodeRequest(o), o.seed);
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  if (with_inputs) loaded.inputs = std::make_shared<DecodeInputs>(MakeRandomDecodeInputs(loaded.problem, o.seed));
  return loaded;
}

LoadedProblem LoadProblem(const ProblemOptions& o, bool with_inputs) {
  CheckNoDecodeOptions(o);
  CheckNoRingOptions(o);
  LoadedProblem loaded;
  if (o.input.empty() && o.batch_given)
    throw UsageError("--batch picks a batch of an HW4 file: give it with --input FILE");
  if (!o.dout.empty() && o.pass != "backward")
    throw UsageError("--dout is the backward pass's dO: add --pass backward");
  if (o.input.empty()) {
    loaded.problem = ResolveFromOptions(ToRequest(o, o.n.value_or(64), o.d.value_or(8)));
    if (with_inputs) {
      loaded.inputs = std::make_shared<AttentionInputs>(MakeRandomInputs(loaded.problem.n, loaded.problem.d, o.seed));
      AddUpstreamGradient(o, 1, loaded);
    }
    return loaded;
  }
  const Hw4Input header = ReadInputHeader(o);
  loaded.problem = ResolveFromOptions(ToRequest(o, header.n, header.d));
  // One batch read, not the whole file (an HW4 file of many batches can be gigabytes).
  if (with_inputs) {
    loaded.inputs = std::make_shared<AttentionInputs>(ReadHw4Batch(o.input, o.batch));
    AddUpstreamGradient(o, header.b, loaded);
  }
  return loaded;
}

}  // namespace flashviz
