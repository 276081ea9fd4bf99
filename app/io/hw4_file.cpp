#include "app/io/hw4_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"

namespace flashviz {
namespace {

constexpr std::int64_t kHeaderBytes = 12;
const char* const kMatrixNames[3] = {"Q", "K", "V"};

struct Header {
  std::int32_t b, n, d;
};

// The bytes the data after the header must have, or an error when B·3·N·d·4 does not fit in 64 bits.
std::int64_t DataBytes(const Header& h, const std::string& name) {
  std::int64_t floats = 0, bytes = 0;
  if (__builtin_mul_overflow(std::int64_t{h.b}, std::int64_t{h.n}, &floats) ||
      __builtin_mul_overflow(floats, std::int64_t{h.d}, &floats) ||
      __builtin_mul_overflow(floats, std::int64_t{12}, &bytes))
    throw InputError(Sprintf("%s: B = %d, N = %d, d = %d describe more data than any file can hold", name.c_str(),
                             h.b, h.n, h.d));
  return bytes;
}

Header CheckHeader(const std::uint8_t* data, std::int64_t size, const std::string& name) {
  if (size < kHeaderBytes)
    throw InputError(Sprintf("%s: the file is %lld bytes, shorter than the 12-byte header (int32 B, N, d)",
                             name.c_str(), static_cast<long long>(size)));
  Header h;
  std::memcpy(&h, data, sizeof h);
  const char* field[3] = {"B", "N", "d"};
  const std::int32_t value[3] = {h.b, h.n, h.d};
  for (int f = 0; f < 3; ++f)
    if (value[f] <= 0)
      throw InputError(
          Sprintf("%s: %s = %d in the header; B, N and d must be positive", name.c_str(), field[f], value[f]));
  return h;
}

void CheckSize(const Header& h, std::int64_t size, const std::string& name) {
  const std::int64_t expected = DataBytes(h, name);
  const std::int64_t actual = size - kHeaderBytes;
  if (actual < expected)
    throw InputError(Sprintf("%s: truncated: B = %d, N = %d, d = %d need %lld bytes of Q, K, V after the header, "
                             "the file has %lld",
                             name.c_str(), h.b, h.n, h.d, static_cast<long long>(expected),
                             static_cast<long long>(actual)));
  if (actual > expected)
    throw InputError(Sprintf("%s: %lld trailing bytes after the last batch (B = %d, N = %d, d = %d)", name.c_str(),
                             static_cast<long long>(actual - expected), h.b, h.n, h.d));
  if (h.n > kMaxSequenceLength || h.d > kMaxHeadDim)
    throw InputError(Sprintf("%s: N = %d, d = %d is beyond what flashviz runs (N ≤ %d, d ≤ %d)", name.c_str(), h.n,
                             h.d, kMaxSequenceLength, kMaxHeadDim));
}

void CheckFinite(const Hw4Input& in, const std::string& name) {
  for (std::size_t at = 0; at < in.qkv.size(); ++at)
    if (!std::isfinite(in.qkv[at])) throw InputError(NonFiniteValueMessage(name, in.n, in.d, at, in.qkv[at]));
}

}  // namespace

std::string NonFiniteValueMessage(const std::string& name, int n, int d, std::size_t at, float value) {
  const std::size_t head = static_cast<std::size_t>(n) * static_cast<std::size_t>(d);
  const std::size_t batch = at / (3 * head), within = at % (3 * head);
  const std::size_t matrix = within / head, element = within % head;
  return Sprintf("%s: non-finite value (%s) in batch %zu, %s[%zu][%zu]", name.c_str(),
                 std::isnan(value) ? "nan" : (value < 0 ? "-inf" : "inf"), batch, kMatrixNames[matrix],
                 element / static_cast<std::size_t>(d), element % static_cast<std::size_t>(d));
}

AttentionInputs Hw4Input::Batch(int batch) const {
  AttentionInputs in;
  in.n = n;
  in.d = d;
  in.q.assign(q(batch), q(batch) + head_floats());
  in.k.assign(k(batch), k(batch) + head_floats());
  in.v.assign(v(batch), v(batch) + head_floats());
  return in;
}

Hw4Input ParseHw4(std::span<const std::uint8_t> bytes, const std::string& name) {
  const auto size = static_cast<std::int64_t>(bytes.size());
  const Header h = CheckHeader(bytes.data(), size, name);
  CheckSize(h, size, name);
  Hw4Input in;
  in.b = h.b;
  in.n = h.n;
  in.d = h.d;
  in.qkv.resize(static_cast<std::size_t>(size - kHeaderBytes) / 4);
  std::memcpy(in.qkv.data(), bytes.data() + kHeaderBytes, in.qkv.size() * 4);
  CheckFinite(in, name);
  return in;
}

Hw4Input ReadHw4Header(const InputFile& file) {
  std::uint8_t header[kHeaderBytes] = {};
  file.ReadAt(header, static_cast<std::size_t>(std::min(file.size(), kHeaderBytes)), 0);
  const Header h = CheckHeader(header, file.size(), file.path());
  CheckSize(h, file.size(), file.path());
  Hw4Input in;
  in.b = h.b;
  in.n = h.n;
  in.d = h.d;
  return in;
}

Hw4Input ReadHw4Header(const std::string& path) { return ReadHw4Header(InputFile(path)); }

Hw4Input ReadHw4File(const std::string& path) {
  // Check the header against the file's size before allocating: a corrupt header must not ask for terabytes.
  const InputFile file(path);
  Hw4Input in = ReadHw4Header(file);
  in.qkv.resize(3 * in.head_floats() * static_cast<std::size_t>(in.b));
  file.ReadAt(in.qkv.data(), in.qkv.size() * sizeof(float), kHeaderBytes);
  CheckFinite(in, path);
  return in;
}

AttentionInputs ReadHw4Batch(const std::string& path, int batch) {
  const InputFile file(path);
  Hw4Input in = ReadHw4Header(file);
  if (batch < 0 || batch >= in.b)
    throw InputError(Sprintf("%s: batch %d does not exist (batches 0 to %d)", path.c_str(), batch, in.b - 1));
  const std::size_t floats = 3 * in.head_floats();
  std::vector<float> qkv(floats);
  file.ReadAt(qkv.data(), floats * sizeof(float),
              kHeaderBytes + static_cast<std::int64_t>(batch) * static_cast<std::int64_t>(floats * sizeof(float)));
  for (std::size_t at = 0; at < floats; ++at)
    if (!std::isfinite(qkv[at]))
      throw InputError(NonFiniteValueMessage(path, in.n, in.d, static_cast<std::size_t>(batch) * floats + at, qkv[at]));
  AttentionInputs out;
  out.n = in.n;
  out.d = in.d;
  out.q.assign(qkv.begin(), qkv.begin() + static_cast<std::ptrdiff_t>(in.head_floats()));
  out.k.assign(qkv.begin() + static_cast<std::ptrdiff_t>(in.head_floats()),
               qkv.begin() + static_cast<std::ptrdiff_t>(2 * in.head_floats()));
  out.v.assign(qkv.begin() + static_cast<std::ptrdiff_t>(2 * in.head_floats()), qkv.end());
  return out;
}

std::vector<std::uint8_t> SerializeHw4(const Hw4Input& in) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(kHeaderBytes) + in.qkv.size() * 4);
  const Header h{in.b, in.n, in.d};
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + kHeaderBytes, in.qkv.data(), in.qkv.size() * 4);
  return bytes;
}

}  // namespace flashviz
