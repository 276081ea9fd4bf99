#include "viz/frame_report.h"

namespace flashviz {
namespace {

thread_local FrameReport* g_current_report = nullptr;

}  // namespace

FrameReport* CurrentFrameReport() { return g_current_report; }

ScopedFrameReport::ScopedFrameReport(FrameReport* report) : previous_(g_current_report) {
  if (report) *report = {};
  g_current_report = report;
}

ScopedFrameReport::~ScopedFrameReport() { g_current_report = previous_; }

}  // namespace flashviz
