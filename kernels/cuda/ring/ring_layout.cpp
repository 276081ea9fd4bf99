// Ring attention's layout, budget and names as plain C++ (no CUDA): compiled into flashviz_kernels in every build,
// so `flashviz bench --ring` checks its options and budgets, and the non-GPU tests run, without a GPU.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "kernels/cuda/ring/ring_attention.h"

namespace flashviz::cuda {

float RingShape::Scale() const {
  return scale != 0 ? scale : 1.0f / std::sqrt(static_cast<float>(d));
}

int RingShape::DeviceRows(int p) const {
  int rows = 0;
  for (int k = 0; k < ChunksPerDevice(); ++k) rows += ChunkRows(DeviceChunk(p, k));
  return rows;
}

int RingShape::MaxDeviceRows() const {
  int most = 0;
  for (int p = 0; p < devices; ++p) most = std::max(most, DeviceRows(p));
  return most;
}

int RingShape::GlobalRow(int p, int r) const {
  for (int k = 0; k < ChunksPerDevice(); ++k) {
    const int chunk = DeviceChunk(p, k);
    if (r < ChunkRows(chunk)) return ChunkBegin(chunk) + r;
    r -= ChunkRows(chunk);
  }
  return -1;
}

int RingShape::OwnerOfRow(int global_row) const {
  // Chunk c holds rows [⌊cN/C⌋, ⌊(c+1)N/C⌋): the last c with ChunkBegin(c) ≤ row.
  int chunk = static_cast<int>((static_cast<std::int64_t>(global_row) + 1) * Chunks() / n);
  while (chunk > 0 && ChunkBegin(chunk) > global_row) --chunk;
  while (chunk + 1 < Chunks() && ChunkBegin(chunk + 1) <= global_row) ++chunk;
  return chunk < devices ? chunk : 2 * devices - 1 - chunk;
}

std::optional<std::string> RingShapeError(const RingShape& s) {
  if (s.d != 64 && s.d != 128) return Sprintf("d = %d: the ring kernel is built for d = 64 and 128", s.d);
  if (s.dtype == DType::kFp32) return std::string("fp32: the ring kernel runs on the tensor cores (fp16 or bf16)");
  if (s.devices < 1 || s.devices > kMaxRingDevicesCuda)
    return Sprintf("P = %d devices: 1 to %d", s.devices, kMaxRingDevicesCuda);
  if (s.batch < 1 || s.heads < 1) return Sprintf("B = %d, H = %d: both at least 1", s.batch, s.heads);
  if (s.Heads() > 65535) return Sprintf("B·H = %lld: at most 65535 (the grid's y)", static_cast<long long>(s.Heads()));
  if (s.n < s.Chunks())
    return Sprintf("N = %d is less than the %d chunks of %s with P = %d (every chunk needs a row)", s.n, s.Chunks(),
                   s.zigzag ? "zigzag" : "contiguous", s.devices);
  if (s.n > (1 << 24)) return Sprintf("N = %d: at most %d", s.n, 1 << 24);
  if (!(s.Scale() > 0) || !std::isfinite(s.Scale())) return std::string("the scale must be a positive number");
  return std::nullopt;
}

double RingFlops(const RingShape& s) {
  const double flops = 4.0 * static_cast<double>(s.Heads()) * s.n * static_cast<double>(s.n) * s.d;
  return s.causal ? flops / 2 : flops;
}

RingDeviceBytes RingBytesOfDevice(const RingShape& s, int p) {
  const std::int64_t element = static_cast<std::int64_t>(DTypeBytes(s.dtype));
  const std::int64_t rows = static_cast<std::int64_t>(s.Heads()) * s.DeviceRows(p);  // B·H·rows_p
  const std::int64_t buffer_rows = static_cast<std::int64_t>(s.Heads()) * s.MaxDeviceRows();
  RingDeviceBytes b;
  b.q = rows * s.d * element;
  b.own_kv = 2 * rows * s.d * element;
  // Step 0 reads and sends the device's own K/V; the receives alternate between two buffers (one when P = 2: a
  // single receive; none when P = 1).
  b.kv_buffers = std::min(2, s.devices - 1) * 2 * buffer_rows * s.d * element;
  b.state = rows * s.d * 4 + 2 * rows * 4;
  b.output = rows * s.d * element + rows * 4;
  return b;
}

std::int64_t RingMaxDeviceBytes(const RingShape& s) {
  std::int64_t most = 0;
  for (int p = 0; p < s.devices; ++p) most = std::max(most, RingBytesOfDevice(s, p).Total());
  return most;
}

std::string_view RingTransportName(RingTransportKind kind) {
  return kind == RingTransportKind::kNccl ? "nccl" : "virtual";
}

std::optional<RingTransportKind> ParseRingTransport(std::string_view text) {
  if (text == "nccl") return RingTransportKind::kNccl;
  if (text == "virtual") return RingTransportKind::kVirtual;
  return std::nullopt;
}

double RingTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFp16:
      return 2.0 / 2048;  // 2u, u = 2⁻¹¹
    case DType::kBf16:
      return 2.0 / 256;  // 2u, u = 2⁻⁸
    case DType::kFp32:
      return 1e-4;  // not run (RingShapeError); the forward harness's figure
  }
  return 0;
}

double RingLseTolerance(double reference) {
  return 1e-3 + 1e-5 * std::abs(reference);
}

void RingFillScaling(std::vector<RingBenchRow>& rows) {
  // P = 1's measurements by N, and the largest N it ran.
  const RingBenchRow* largest_single = nullptr;
  auto single_at = [&](int n) -> const RingBenchRow* {
    for (const RingBenchRow& r : rows)
      if (r.shape.devices == 1 && r.shape.n == n && r.Ok()) return &r;
    return nullptr;
  };
  for (const RingBenchRow& r : rows)
    if (r.shape.devices == 1 && r.Ok() && (!largest_single || r.shape.n > largest_single->shape.n)) largest_single = &r;
  for (RingBenchRow& r : rows) {
    r.ideal = r.shape.devices;
    if (!r.Ok()) continue;
    if (const RingBenchRow* single = single_at(r.shape.n)) {
      r.speedup = single->ms_median / r.ms_median;
      r.efficiency = r.tflops_per_gpu / single->tflops_per_gpu;
      r.efficiency_base_n = single->shape.n;
    } else if (largest_single) {
      r.efficiency = r.tflops_per_gpu / largest_single->tflops_per_gpu;
      r.efficiency_base_n = largest_single->shape.n;
    }
    if (r.shape.devices > 1 && r.exchange_ms > 0)
      r.hidden = std::clamp((r.compute_ms + r.exchange_ms - r.ms_median) / r.exchange_ms, 0.0, 1.0);
  }
}

std::string RingCsvHeader() {
  return "gpu,transport,dtype,B,H,N,d,causal,assignment,P,device_bytes,budget_bytes,fits,ms_median,ms_min,"
         "tflops_per_gpu,speedup,ideal,efficiency,efficiency_base_n,compute_ms,exchange_ms,hidden,max_abs_error,"
         "lse_max_error,tolerance,status\n";
}

std::string RingCsvLine(const RingBenchRow& r) {
  auto number = [](double x) { return std::isfinite(x) ? Sprintf("%.6g", x) : std::string("nan"); };
  std::string status = r.status;
  for (char& ch : status)
    if (ch == ',' || ch == '\n' || ch == '"') ch = ';';  // one field, no quoting needed
  const RingShape& s = r.shape;
  return Sprintf("%s,%s,%s,%d,%d,%d,%d,%d,%s,%d,%lld,%lld,%d,", r.gpu.c_str(), r.transport.c_str(),
                 std::string(DTypeName(s.dtype)).c_str(), s.batch, s.heads, s.n, s.d, s.causal ? 1 : 0,
                 s.zigzag ? "zigzag" : "contiguous", s.devices, static_cast<long long>(r.device_bytes),
                 static_cast<long long>(r.budget_bytes), r.fits ? 1 : 0) +
         number(r.ms_median) + "," + number(r.ms_min) + "," + number(r.tflops_per_gpu) + "," + number(r.speedup) + "," +
         number(r.ideal) + "," + number(r.efficiency) + "," + std::to_string(r.efficiency_base_n) + "," +
         number(r.compute_ms) + "," + number(r.exchange_ms) + "," + number(r.hidden) + "," + number(r.max_abs_error) +
         "," + number(r.lse_max_error) + "," + number(r.tolerance) + "," + status + "\n";
}

}  // namespace flashviz::cuda
