// Benchmark harness: an SVG timeline of one run's window (one learner step): a lane per worker
// of each pool and one for the learner, a bar while it was busy, so the bubbles that sync mode
// leaves (and async fills) are visible. Pure; any thread.
#pragma once

#include "bench/pipeline/results.hpp"

#include <string>

namespace leap::bench {

// The window [t0, t1] (scenario seconds) of `run` as a standalone SVG document.
std::string render_timeline_svg(const mode_run& run, double t0, double t1, const std::string& title);

// The window of step k (1-based; 0 = the middle step): from the previous step's report (or the
// start) to step k's report. False when the run has no steps.
bool step_window(const mode_run& run, int k, double& t0, double& t1, int& step);

} // namespace leap::bench
