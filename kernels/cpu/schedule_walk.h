// What the two walks over a schedule share (the forward pass's executor in stepper.cpp, the backward pass's in
// backward.cpp): the step counter, the ledger, the SRAM tiles resident after each step and their sizes, and Emit,
// which closes a step and hands the view to the caller.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/cpu/stepper.h"

namespace flashviz {

class ScheduleWalk : public StepView {
 public:
  const StepInfo& info() const override { return info_; }
  const Ledger& ledger() const override { return ledger_; }
  SramTiles sram_tiles() const override { return sram_; }

 protected:
  // The size of every SRAM tile for a tile iteration of `rows` × `cols` (edge tiles at their real size).
  void SetTileGeometry(int rows, int cols, int d) {
    for (int t = 0; t < kSramTileCount; ++t)
      tile_floats_[static_cast<std::size_t>(t)] = SramTileFloats(static_cast<SramTile>(t), rows, cols, d);
  }
  // Closes a step: its phase and tiles, the SRAM it occupies; `visit(*this)` returns false to stop the walk.
  template <class Visit>
  bool Emit(Phase phase, int i, int j, SramTiles resident, Visit& visit) {
    info_ = StepInfo{step_++, phase, i, j};
    sram_ = resident;
    std::int64_t floats = 0;
    for (unsigned bits = sram_; bits != 0; bits &= bits - 1)
      floats += tile_floats_[static_cast<std::size_t>(__builtin_ctz(bits))];
    ledger_.SetSramOccupancy(4 * floats);
    return visit(static_cast<const StepView&>(*this));
  }

  Ledger ledger_;

 private:
  std::int64_t step_ = 0;
  StepInfo info_;
  SramTiles sram_ = 0;
  std::array<std::int64_t, kSramTileCount> tile_floats_{};
};

}  // namespace flashviz
