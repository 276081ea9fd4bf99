// What the flash2_mma and flash3_wgmma tests share: one attention problem in device memory, filled with fresh
// N(0, 1) noise, run through a kernel's launcher with its output poisoned first, and checked head by head against
// the float64 reference (mma_check), so an element never written or a wrong head fails.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/mma/mma_check.h"

namespace flashviz::cuda::mma_test {

// A seed from the machine's entropy, printed with every failure so that it can be replayed.
inline std::uint64_t FreshSeed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

using Launcher = cudaError_t (*)(const AttentionArgs&);

struct DeviceProblem {
  AttentionArgs args;
  std::size_t elements = 0;
  Launcher launch;

  DeviceProblem(Launcher launcher, const AttentionShape& shape, DType dtype, unsigned options) : launch(launcher) {
    args.shape = shape;
    args.dtype = dtype;
    args.options = options;
    elements = static_cast<std::size_t>(shape.batch) * shape.heads * shape.n * shape.d;
    void** buffers[] = {const_cast<void**>(&args.q), const_cast<void**>(&args.k), const_cast<void**>(&args.v),
                        &args.o};
    for (void** buffer : buffers) EXPECT_EQ(cudaMalloc(buffer, elements * 2), cudaSuccess);
  }
  ~DeviceProblem() {
    for (const void* buffer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
      cudaFree(const_cast<void*>(buffer));
  }
  DeviceProblem(const DeviceProblem&) = delete;
  DeviceProblem& operator=(const DeviceProblem&) = delete;

  void Fill(std::uint64_t seed) {
    ASSERT_EQ(mma_check::FillNormal(const_cast<void*>(args.q), elements, args.dtype, seed + 1, nullptr), cudaSuccess);
    ASSERT_EQ(mma_check::FillNormal(const_cast<void*>(args.k), elements, args.dtype, seed + 2, nullptr), cudaSuccess);
    ASSERT_EQ(mma_check::FillNormal(const_cast<void*>(args.v), elements, args.dtype, seed + 3, nullptr), cudaSuccess);
  }
  // Poison O, run, check every element was written and the chosen heads (all when empty) match the reference.
  void RunAndCheck(const std::string& what, std::vector<int> heads = {}) {
    ASSERT_EQ(mma_check::Poison(args.o, elements, args.dtype, nullptr), cudaSuccess);
    ASSERT_EQ(launch(args), cudaSuccess) << what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    std::uint64_t non_finite = 0;
    ASSERT_EQ(mma_check::CountNonFinite(args.o, elements, args.dtype, nullptr, &non_finite), cudaSuccess) << what;
    ASSERT_EQ(non_finite, 0u) << what << ": output elements left NaN/inf";
    if (heads.empty())
      for (int head = 0; head < args.shape.batch * args.shape.heads; ++head) heads.push_back(head);
    for (int head : heads) {
      const mma_check::RowComparison c = mma_check::CompareRows(args, head, 0, args.shape.n);
      ASSERT_TRUE(c.error.empty()) << c.error;
      EXPECT_EQ(c.non_finite, 0u) << what;
      EXPECT_LE(c.relative_error, mma_check::Tolerance(args.dtype))
          << what << " head " << head << " (max abs error " << c.max_abs_error << ")";
    }
  }
  // Runs twice on the same inputs and says whether the two outputs are the same bits (a race between warps, or
  // a pipeline stage reused too early, shows up as a moving result).
  void ExpectRepeatableBits() { ExpectSameBits(args.options); }
  // Runs with args.options, then with `other` on the same inputs, and says whether the outputs are the same bits.
  void ExpectSameBits(unsigned other) {
    const unsigned options = args.options;
    std::vector<std::uint16_t> first(elements), second(elements);
    ASSERT_EQ(launch(args), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(first.data(), args.o, elements * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(mma_check::Poison(args.o, elements, args.dtype, nullptr), cudaSuccess);
    args.options = other;
    const cudaError_t status = launch(args);
    args.options = options;
    ASSERT_EQ(status, cudaSuccess);
    ASSERT_EQ(cudaMemcpy(second.data(), args.o, elements * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(first, second);
  }
};

}  // namespace flashviz::cuda::mma_test
