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

// The current device's multiprocessors, asked once (0 when the runtime cannot say).
int MultiprocessorCount();

}  // namespace flashviz::cuda::hopper_host
