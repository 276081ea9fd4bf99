// The course assignment's binary format (the course assignment: docs/sources.md): int32 B, N, d, then per batch N·d
// float32 each of Q, K and V (row-major); the output is B·N·d float32. Every malformed file gets a one-line reason.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/files.h"
#include "kernels/cpu/stepper.h"

namespace flashviz {

struct Hw4Input {
  int b = 0, n = 0, d = 0;
  std::vector<float> qkv;  // B × (Q, K, V) × N × d

  std::size_t head_floats() const { return static_cast<std::size_t>(n) * d; }
  const float* q(int batch) const { return qkv.data() + static_cast<std::size_t>(batch) * 3 * head_floats(); }
  const float* k(int batch) const { return q(batch) + head_floats(); }
  const float* v(int batch) const { return q(batch) + 2 * head_floats(); }
  AttentionInputs Batch(int batch) const;  // a copy of one batch, for the stepper
};

// Parses an HW4 input held in memory; `name` is used in messages. Throws InputError.
Hw4Input ParseHw4(std::span<const std::uint8_t> bytes, const std::string& name);
// Reads and parses a file. Throws InputError (missing, unreadable, malformed).
Hw4Input ReadHw4File(const std::string& path);
// Reads one batch only (the header and the file's size checked as for the whole file; the batch's values
// checked for being finite). Throws InputError.
AttentionInputs ReadHw4Batch(const std::string& path, int batch);
// Reads only the header (B, N, d) after checking the file's size against it. Throws InputError.
Hw4Input ReadHw4Header(const std::string& path);
Hw4Input ReadHw4Header(const InputFile& file);

// The one-line reason for a non-finite value at float index `at` (counted after the header) of an HW4 input
// with sequence length n and head dimension d: "NAME: non-finite value (nan) in batch 0, Q[1][2]".
std::string NonFiniteValueMessage(const std::string& name, int n, int d, std::size_t at, float value);

// The bytes of an HW4 input file / output file.
std::vector<std::uint8_t> SerializeHw4(const Hw4Input& input);

}  // namespace flashviz
