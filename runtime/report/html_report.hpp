// `leap report`'s page: one self-contained HTML file (inline CSS and SVG; no script, font or
// image from outside) that overlays training runs, or arms of runs as means with 95% bands
// (--by-arm): Acc@1/2/3 against step and wall-clock,
// compile requests per step (turn 1 vs later), the build cache, activated groups, turns per pass,
// recovery, loss / KL / clip fraction / grad norm, stage utilisation, and a summary table.
// Pure string building except write_report, which writes the file atomically (a temporary file
// renamed into place, so a reader never sees half a page). Any thread may call these functions.
#pragma once

#include "common/result.hpp"
#include "runtime/report/run_data.hpp"

#include <string>
#include <vector>

namespace leap::report {

// The whole page for `runs` (each drawn in its own colour, in the given order).
std::string render_report(const std::vector<run_data>& runs);

// The arm of a run directory for --by-arm: the name of its parent directory (an experiment's
// runs/<arm>/seed<N>, or any <arm>/<run> layout); the path itself when it has no parent.
std::string arm_of(const std::string& run_dir);
// The page with runs grouped into arms (arm_of their directories, in order of first
// appearance): every chart draws each arm as the mean of its runs step by step with a shaded 95%
// Student t interval (runtime/report/seed_stats.hpp); the summary table keeps one row per run.
std::string render_report_by_arm(const std::vector<run_data>& runs);

// The page's head up to and including `<body>` and the `<h1>` title: the shared stylesheet of
// leap's pages (tables, colour swatches, the inline-SVG charts) plus `extra_css`. Used by this
// page and by `leap experiment`'s report.html.
std::string page_head(const std::string& title, const std::string& extra_css = "");

// Loads every directory of `run_dirs` and writes the page (by arm with `by_arm`) to `out_path`.
// Errors name the run directory or the output file; nothing is written when any run fails to load.
result<void> write_report(const std::vector<std::string>& run_dirs, const std::string& out_path,
                          bool by_arm = false);

} // namespace leap::report
