// decode_lab: the experiment driver of kernels/cuda/decode (not a test, not shipped in the app). It times decode
// variants through the same harness as `flashviz bench --decode` (MeasureDecode: validated first, L2 flushed,
// median of 20) over a grid of the knobs the shipped kernel takes from DecodeArgs but the CLI does not expose:
// the split count. One CSV line per point on stdout, progress on stderr.
//
//   decode_lab [--kernels flash_decode,flash_decode_paged] [--batch 1,8,64] [--kv-len 4096,32768,131072]
//              [--splits 0,...] [--page 64] [--dtype fp16|bf16] [--repeats 20] [--compare 1]
// splits 0 is the automatic rule; --compare 0 skips the float64 comparison (every O element is
// still checked written), for sweeps of a kernel the tests cover.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda/decode/decode_harness.h"
#include "kernels/cuda/decode/decode_variants.h"

namespace {

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text + ",") {
    if (c == ',') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  return parts;
}

std::vector<int> Ints(const std::string& text) {
  std::vector<int> values;
  for (const std::string& part : Split(text)) values.push_back(std::atoi(part.c_str()));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flashviz::cuda;
  std::string kernels = "flash_decode,flash_decode_paged", batches = "1,8,64", lens = "4096,32768,131072";
  std::string splits = "0", dtype_name = "fp16";
  int page = 64, repeats = 20;
  bool compare = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--kernels")
      kernels = value;
    else if (key == "--batch")
      batches = value;
    else if (key == "--kv-len")
      lens = value;
    else if (key == "--splits")
      splits = value;
    else if (key == "--page")
      page = std::atoi(value.c_str());
    else if (key == "--dtype")
      dtype_name = value;
    else if (key == "--repeats")
      repeats = std::atoi(value.c_str());
    else if (key == "--compare")
      compare = value != "0";
    else {
      std::fprintf(stderr, "decode_lab: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  const DType dtype = dtype_name == "bf16" ? DType::kBf16 : DType::kFp16;
  std::printf("kernel,dtype,B,N,page,splits_asked,splits,ms_median,ms_min,gbps,status\n");
  std::uint64_t seed = 1;
  bool all_good = true;
  for (int batch : Ints(batches))
    for (int n : Ints(lens))
      for (const std::string& id : Split(kernels))
        for (int s : Ints(splits)) {
          const VariantInfo* info = FindDecodeInfo(id);
          if (!info) {
            std::fprintf(stderr, "decode_lab: unknown kernel %s\n", id.c_str());
            return 2;
          }
          DecodeLaunchShape shape;
          shape.batch = batch;
          shape.kv_len = n;
          shape.page_size = DecodeVariantIsPaged(*info) ? page : 0;
          DecodeMeasureOptions options;
          options.repeats = repeats;
          options.seed = seed++;
          options.splits = s;
          options.compare = compare;
          const DecodeMeasurement m = MeasureDecode(*info, shape, dtype, options);
          all_good &= m.Ok();
          std::printf("%s,%s,%d,%d,%d,%d,%d,%.6g,%.6g,%.5g,%s\n", id.c_str(), dtype_name.c_str(), batch, n,
                      shape.page_size, s, m.splits, m.ms_median, m.ms_min, m.gbps, m.Ok() ? "ok" : m.reason.c_str());
          std::fflush(stdout);
          std::fprintf(stderr, "%-18s B=%-2d N=%-6d P=%-3d splits %3d: %7.0f GB/s %s\n", id.c_str(), batch, n,
                       shape.page_size, m.splits, m.gbps, m.Ok() ? "" : m.reason.c_str());
        }
  return all_good ? 0 : 1;
}
