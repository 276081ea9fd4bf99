// CSVs of the model's numbers, written with %.17g so that they read back as the same doubles.
#include "viz/export.h"

#include <cmath>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

std::string Value(const std::vector<double>& v, std::size_t k) {
  if (k >= v.size()) return "";
  const double x = v[k];
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  return Sprintf("%.17g", x);
}

}  // namespace

std::string TileCsv(const Model& model) {
  std::string csv = "row,key,S,P,m_tile,l_tile,m,l,alpha\n";
  if (!model.has_problem()) return csv;
  const StepState& s = model.state();
  const TileNumerics& t = s.tile;
  if (s.rows == 0 || s.cols == 0) return csv;
  for (int r = 0; r < s.rows; ++r) {
    const auto k = static_cast<std::size_t>(r);
    const std::string stats = Value(t.m_tile, k) + "," + Value(t.l_tile, k) + "," + Value(t.m, k) + "," +
                              Value(t.l, k) + "," + Value(t.alpha, k);
    for (int c = 0; c < s.cols; ++c) {
      const std::size_t cell = k * static_cast<std::size_t>(s.cols) + static_cast<std::size_t>(c);
      csv += Sprintf("%d,%d,", s.row_begin + r, s.col_begin + c) + Value(t.s, cell) + "," + Value(t.p, cell) + "," +
             stats + "\n";
    }
  }
  return csv;
}

std::string HistoryCsv(const Model& model) {
  std::string csv = "row,j,m,l\n";
  if (!model.has_problem()) return csv;
  const StepState& s = model.state();
  for (int r = 0; r < s.rows; ++r)
    for (std::size_t h = 0; h < s.history_j.size(); ++h)
      csv += Sprintf("%d,%d,", s.row_begin + r, s.history_j[h]) + Value(s.m_history[h], static_cast<std::size_t>(r)) +
             "," + Value(s.l_history[h], static_cast<std::size_t>(r)) + "\n";
  return csv;
}

std::string DefaultExportName(ExportKind kind, std::int64_t step) {
  const long long k = static_cast<long long>(step);
  switch (kind) {
    case ExportKind::kWindowPng: return Sprintf("flashviz-step-%lld.png", k);
    case ExportKind::kCentrePng: return Sprintf("flashviz-step-%lld-view.png", k);
    case ExportKind::kTileCsv: return Sprintf("flashviz-step-%lld-tile.csv", k);
    case ExportKind::kHistoryCsv: return Sprintf("flashviz-step-%lld-history.csv", k);
  }
  return "flashviz.png";
}

}  // namespace flashviz
