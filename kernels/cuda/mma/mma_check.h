// Checking helpers shared by the flash2_mma tests and its timing driver: fresh random inputs drawn on the device,
// a poisoned output, and a comparison of chosen rows with the float64 reference (kernels/cpu/reference.h).
// The general harness of kernels/cuda serves every variant; this one is private to kernels/cuda/mma.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/attention_launch.h"

namespace flashviz::cuda::mma_check {

// Bytes of one element of `dtype` (2 for fp16/bf16, 4 for fp32).
std::size_t ElementBytes(DType dtype);
const char* DTypeName(DType dtype);

// `count` elements drawn from N(0, 1) (Box–Muller on a counter-based hash of (seed, index)), rounded to dtype.
cudaError_t FillNormal(void* buffer, std::size_t count, DType dtype, std::uint64_t seed, cudaStream_t stream);
// Every 16-bit element set to 0xFFFF, a NaN in both fp16 and bf16 (fp32: 0xFFFFFFFF, also a NaN).
cudaError_t Poison(void* buffer, std::size_t count, DType dtype, cudaStream_t stream);
// How many of `count` elements are NaN or ±∞ (counted on the device; synchronizes the stream).
cudaError_t CountNonFinite(const void* buffer, std::size_t count, DType dtype, cudaStream_t stream,
                           std::uint64_t* non_finite);

// The SM clock in MHz, measured on the device when the stream reaches this call: one thread a multiprocessor counts
// its SM's cycles (clock64) against the global nanosecond timer over `window_us`, and the counts of all of them are
// divided (synchronizes the stream). Queued right after timed launches, it says what clock they ran at, which the
// power cap can pull below the maximum (the H200's 700 W, kernels/README.md).
cudaError_t MeasureSmClockMhz(cudaStream_t stream, double* mhz, int window_us = 500);

// Host conversions of the stored bit patterns.
float HalfBitsToFloat(std::uint16_t bits);
float Bf16BitsToFloat(std::uint16_t bits);

struct RowComparison {
  double relative_error = 0;  // ‖out − ref‖₂ / ‖ref‖₂ over every compared element
  double max_abs_error = 0;
  std::size_t compared = 0;   // elements compared
  std::size_t non_finite = 0; // NaN/∞ among them (never passes)
  std::string error;          // a CUDA failure while copying, or empty
};

// Compares rows [row_begin, row_end) of head `head` (= b·H + h) of the device output with the reference computed
// in float64 from the same (rounded) device inputs. The device buffers have shape (B·H, N, d).
RowComparison CompareRows(const AttentionArgs& args, int head, int row_begin, int row_end);

// The relative error of the same rows per block of 64 rows × 64 columns (which part of a tile went wrong).
struct BlockError {
  int row_begin, row_end, col_begin, col_end;
  double relative_error;
};
std::vector<BlockError> BlockErrors(const AttentionArgs& args, int head, int row_begin, int row_end);

// Relative-error bound for dtype: the kernel rounds P̃ and O to 16 bits (fp16: 2⁻¹¹, bf16: 2⁻⁸ relative per
// element) and accumulates in fp32; measured errors sit several times below these.
double Tolerance(DType dtype);

}  // namespace flashviz::cuda::mma_check
