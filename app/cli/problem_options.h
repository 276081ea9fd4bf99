// The problem options shared by `gui` and `trace` (the README's command-line contract):
// --n --d --br --bc --sram --order --pass --scale --causal --seed --input --batch --dout, and --decode with
// --q-rows --kv-len --splits --heads --kv-heads --page.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/cpu/decode.h"
#include "kernels/cpu/problem.h"
#include "kernels/cpu/ring.h"
#include "kernels/cpu/stepper.h"

namespace CLI {
class App;
}

namespace flashviz {

struct ProblemOptions {
  std::optional<int> n, d, br, bc;
  std::optional<std::int64_t> sram_bytes;
  std::string order = "kv";
  std::string pass = "forward";
  std::string dout;   // the backward pass's dO, raw float32 (N·d, or B·N·d beside an HW4 file); random when empty
  std::string scale;  // empty: 1/√d; "none"; or a number
  bool causal = false;
  std::uint64_t seed = 0;
  std::string input;  // an HW4 file
  int batch = 0;
  bool batch_given = false;  // --batch without --input is refused, not ignored
  // Decoding (--decode): R query rows per head against a KV cache of N keys, split-KV, grouped heads, pages.
  bool decode = false;
  std::optional<int> q_rows, kv_len, splits, heads, kv_heads, page;
  // Ring attention (--ring P): the sequence over P devices, K/V slices passed around the ring.
  std::optional<int> ring;
  bool zigzag = false;
  std::optional<double> ring_tflops, ring_link_gbps;
};

void AddProblemOptions(CLI::App& command, ProblemOptions& options);

// --seed S for every command that draws random inputs: a decimal 0 … 2⁶⁴ − 1, refused (not wrapped) beyond.
void AddSeedOption(CLI::App& command, std::uint64_t& seed, const std::string& description);

// The problem and its inputs: from --input (N and d from the file) or random from --seed; for the backward pass
// dO from --dout or random from --seed.
struct LoadedProblem {
  AttentionProblem problem;
  std::shared_ptr<const AttentionInputs> inputs;
};

// Checks the options and resolves the tile sizes; throws InputError with a one-line reason.
// `with_inputs` false skips generating or reading the data (count-only use).
LoadedProblem LoadProblem(const ProblemOptions& options, bool with_inputs);
ProblemRequest ToRequest(const ProblemOptions& options, int n, int d);

// --decode: the decode problem (split count and block table resolved, see kernels/cpu/decode.h) and its random
// inputs from --seed. The forward/backward pass's options that do not apply are refused, as are the decode options
// without --decode.
struct LoadedDecodeProblem {
  DecodeProblem problem;
  std::shared_ptr<const DecodeInputs> inputs;
};
LoadedDecodeProblem LoadDecodeProblem(const ProblemOptions& options, bool with_inputs);
DecodeRequest ToDecodeRequest(const ProblemOptions& options);
// Refuses decode options given without --decode (UsageError).
void CheckNoDecodeOptions(const ProblemOptions& options);

// --ring P: the ring problem (kernels/cpu/ring.h) and its inputs (random from --seed, or one batch of an HW4 file).
// The options of the other modes that do not apply are refused, as are the ring options without --ring.
struct LoadedRingProblem {
  RingProblem problem;
  std::shared_ptr<const AttentionInputs> inputs;
};
LoadedRingProblem LoadRingProblem(const ProblemOptions& options, bool with_inputs);
RingRequest ToRingRequest(const ProblemOptions& options, int n, int d);
// Refuses ring options given without --ring (UsageError).
void CheckNoRingOptions(const ProblemOptions& options);

}  // namespace flashviz
