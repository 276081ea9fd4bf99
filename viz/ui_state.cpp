#include "viz/ui_state.h"

#include <array>

namespace flashviz {

ProblemRequest ProblemForm::ToRequest() const {
  ProblemRequest r;
  r.n = n;
  r.d = d;
  if (tiles_from_sram) {
    r.sram_bytes = sram_bytes;
  } else {
    r.br = br;
    r.bc = bc;
    r.sram_bytes = sram_bytes;  // still the budget the occupancy is shown against
  }
  r.order = order;
  r.pass = pass;
  if (scale_mode == ScaleMode::kNone)
    r.scale = 1.0;
  else if (scale_mode == ScaleMode::kCustom)
    r.scale = scale;
  r.causal = causal;
  return r;
}

DecodeRequest ProblemForm::ToDecodeRequest() const {
  DecodeRequest r;
  r.kv_len = kv_len;
  r.d = d;
  r.q_rows = q_rows;
  r.heads = heads;
  r.kv_heads = kv_heads;
  r.page = page;
  if (!splits_from_sram) r.splits = splits;
  r.sram_bytes = sram_bytes;
  if (scale_mode == ScaleMode::kNone)
    r.scale = 1.0;
  else if (scale_mode == ScaleMode::kCustom)
    r.scale = scale;
  return r;
}

RingRequest ProblemForm::ToRingRequest() const {
  RingRequest r;
  r.n = n;
  r.d = d;
  r.devices = ring_devices;
  r.causal = causal;
  r.zigzag = zigzag;
  if (!tiles_from_sram) {
    r.br = br;
    r.bc = bc;
  }
  r.sram_bytes = sram_bytes;
  if (scale_mode == ScaleMode::kNone)
    r.scale = 1.0;
  else if (scale_mode == ScaleMode::kCustom)
    r.scale = scale;
  r.device_tflops = ring_tflops;
  r.link_gbps = ring_link_gbps;
  return r;
}

namespace {

ProblemForm Form(int n, int d, int br, int bc, std::int64_t sram, LoopOrder order, bool causal, std::uint64_t seed,
                 ProblemForm::ScaleMode scale = ProblemForm::ScaleMode::kDefault) {
  ProblemForm f;
  f.n = n;
  f.d = d;
  f.tiles_from_sram = br == 0;
  f.br = br ? br : 16;
  f.bc = bc ? bc : 16;
  f.sram_bytes = sram;
  f.order = order;
  f.causal = causal;
  f.seed = seed;
  f.scale_mode = scale;
  return f;
}

ProblemForm Backward(ProblemForm form) {
  form.pass = Pass::kBackward;
  return form;
}

ProblemForm Decode() {
  ProblemForm form = Form(64, 8, 0, 0, kDefaultSramBytes, LoopOrder::kKvOuter, false, 2);
  form.decode = true;  // the form's decode defaults: N = 64 keys, H = 4 over G = 2, R = 1, P = 8, S = 4
  return form;
}

ProblemForm Ring() {
  ProblemForm form = Form(32, 4, 4, 4, kDefaultSramBytes, LoopOrder::kQOuter, true, 4);
  form.ring = true;  // P = 4 devices, zigzag slices of 4 rows (two a device)
  // The timeline's device slowed to 1 TFLOP/s: at 4 rows a chunk a 300 TFLOP/s device's compute would be a sliver
  // beside the exchange (it hides it only from about 2000 rows a chunk); at 1 both bars show and so does the balance.
  form.ring_tflops = 1.0;
  return form;
}

const std::array<Preset, 7> kPresets = {{
    {"first-lesson", "First lesson",
     "N = 8, d = 4, B_r = B_c = 2: four Q tiles and four K/V tiles, every number visible",
     Form(8, 4, 2, 2, kDefaultSramBytes, LoopOrder::kKvOuter, false, 1)},
    {"vortex", "Vortex report",
     "N = 64, d = 8, B_r = B_c = 16, Q outer loop and no 1/√d, as the Vortex SIMT program runs it",
     Form(64, 8, 16, 16, kDefaultSramBytes, LoopOrder::kQOuter, false, 50, ProblemForm::ScaleMode::kNone)},
    {"assignment", "Assignment",
     "N = 1024, d = 64 with M = 48 KiB of shared memory (the GTX 1080 / RTX 3070 of the course): B_r = B_c = 48, "
     "edge tiles of 16 rows",
     Form(1024, 64, 0, 0, 48 * 1024, LoopOrder::kKvOuter, false, 0)},
    {"causal", "Causal", "N = 64, d = 8, B_r = B_c = 8 with the causal mask: tiles above the diagonal do no work",
     Form(64, 8, 8, 8, kDefaultSramBytes, LoopOrder::kKvOuter, true, 3)},
    {"backward", "Backward pass",
     "N = 8, d = 4, B_r = B_c = 2: FlashAttention-2's backward pass (dK_j, dV_j on chip, dQ_i through HBM) after "
     "the forward pass that saves O and L",
     Backward(Form(8, 4, 2, 2, kDefaultSramBytes, LoopOrder::kQOuter, false, 1))},
    {"decode", "Decoding",
     "one new token: H = 4 query heads over G = 2 KV heads against a paged cache of 64 keys (pages of 8), split "
     "4 ways (flash-decoding) and merged",
     Decode()},
    {"ring", "Ring attention",
     "N = 32 over P = 4 devices, causal, zigzag slices: each device attends its rows to the K/V it holds, merges, "
     "and passes the K/V on around the ring; the timeline's device at 1 TFLOP/s, so that at this size its compute "
     "and the exchange are of a size",
     Ring()},
}};

}  // namespace

std::span<const Preset> Presets() {
  return kPresets;
}

const Preset* FindPreset(const std::string& id) {
  for (const Preset& p : kPresets)
    if (id == p.id) return &p;
  return nullptr;
}

}  // namespace flashviz
