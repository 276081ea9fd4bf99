// The backward pass's catalogue: one row of plain metadata per backward variant, in the order of the
// progression, in the same VariantInfo form as the forward registry (kernels/cuda/registry.h) so that its
// checks (CatalogueNotApplicable), texts and benchmark rows apply unchanged. Plain C++ (no cuda_runtime.h),
// compiled into flashviz_kernels in every build: `flashviz kernels` lists it where CUDA was not built. The rows
// live in backward_rows.inc; the launch functions join them in backward_variants.h (CUDA builds).
#pragma once

#include <span>
#include <string_view>

#include <vector>

#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/registry.h"

namespace flashviz::cuda {

std::span<const VariantInfo> BackwardCatalogue();  // the order of backward_rows.inc
const VariantInfo* FindBackwardInfo(std::string_view id);

// The sweep of `flashviz bench --pass backward`: spec.kernels are backward ids; the shapes, checks and order
// (N outer, kernels inner) are SweepPoints's. Throws InputError (one line) for an unknown id or a bad number.
std::vector<SweepPoint> BackwardSweepPoints(const SweepSpec& spec);

// The FlashAttention papers' count for the backward pass: 2.5 × the forward's 4·B·H·N²·d, i.e. 10·B·H·N²·d
// (five matrix products of 2·N²·d each per head: S, dP, dV, dK, dQ), halved for causal masking.
double BackwardFlops(const AttentionShape& shape);

// Byte models of the backward rows (each tensor counted once per time the algorithm as written reads or writes it).
double NaiveBackwardHbmBytes(const AttentionShape& shape, DType dtype);
double Flash2BackwardHbmBytes(const AttentionShape& shape, DType dtype);     // fp32, dQ accumulated in place
double MmaBackwardAtomicHbmBytes(const AttentionShape& shape, DType dtype);  // fp32 dQ accumulator + convert
double MmaBackwardDqPassHbmBytes(const AttentionShape& shape, DType dtype);  // the separate dQ pass
double MmaBackwardHbmBytes(const AttentionShape& shape, DType dtype);        // flash2_bwd_mma's default for d

// The workspace the catalogue's rows need (plain C++ so that the harness and the tests can size it anywhere).
std::size_t NaiveBackwardWorkspaceBytes(const AttentionShape& shape, DType dtype);   // P, dP, dS, D
std::size_t Flash2BackwardWorkspaceBytes(const AttentionShape& shape, DType dtype);  // D
std::size_t MmaBackwardWorkspaceBytes(const AttentionShape& shape, DType dtype);     // D and the fp32 dQ

}  // namespace flashviz::cuda
