// The host side the Hopper kernels of kernels/cuda/mma share (flash3_wgmma, flash3_fp8): tensor maps for TMA and
// the device checks. Defined in flash3_wgmma.cu.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only: the encoder is reached through the runtime (no -lcuda)

#include <optional>
#include <string>

namespace flashviz::cuda::hopper_host {

// A (heads, rows, columns) tensor, columns fastest and rows packed, as a 3-D tensor map read in boxes of one
// 128-byte swizzle block of columns (128 / element_bytes) × box_rows rows × 1 head, with the 128-byte swizzle;
// elements outside the tensor read as zeros. False when the driver has no encoder or rejects the map.
bool EncodeTensorMap3d(CUtensorMap* map, CUtensorMapDataType type, int element_bytes, const void* data, int columns,
                       int rows, int heads, int box_rows);

// Why `kernel` cannot run on the current device (not compute capability 9.0, or no device), or nothing.
std::optional<std::string> DeviceNotHopper(const char* kernel);

// Heads per section of the longest-first schedule (Flash3Params::section_heads) for B·H = heads whose K and V take
// kv_bytes_per_head each. With more heads than multiprocessors, the blocks running at one time would each read a
// different head: a section holds as many heads as keep their K and V within half the L2 cache (the other half
// for Q, O and what else passes through). With fewer, each head has several Q tiles running at once, which share
// its K/V in L2 as they stream it, and sections would only break the longest-first order at their boundaries:
// one section of all heads. (H200, 2026-11-26, kernels/README.md: 16-bit causal d = 64 N = 4096, B·H = 256:
// sections 7% faster; N = 16384, B·H = 16, sections of 7 heads: 11% slower.)
int SectionHeads(int heads, long long kv_bytes_per_head);

}  // namespace flashviz::cuda::hopper_host
