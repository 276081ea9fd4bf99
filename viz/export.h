// What leaves the app for slides and notebooks, as text: the current tile (S_ij, P~_ij and each row's statistics)
// and the running m_i, ℓ_i of the current Q tile after every K/V tile so far. The GUI's Export dialog and
// `flashviz gui --tile-csv / --history-csv` write these; PNGs and animations of the view are the app's (app/gui).
#pragma once

#include <string>

#include "viz/model.h"

namespace flashviz {

// One line per cell of the tile pair on chip: row,key,S,P,m_tile,l_tile,m,l,alpha (global row and key; an entry
// the step has not computed is empty; −∞ written as -inf). Only the header when no tile pair is on chip.
std::string TileCsv(const Model& model);
// One line per (row, K/V tile j) of the current Q tile's history: row,j,m,l. Only the header before the first tile
// iteration of the row ends.
std::string HistoryCsv(const Model& model);

// The kinds the Export dialog offers, with the file names it proposes ("flashviz-step-40.png").
enum class ExportKind { kWindowPng, kCentrePng, kTileCsv, kHistoryCsv };
std::string DefaultExportName(ExportKind kind, std::int64_t step);

}  // namespace flashviz
