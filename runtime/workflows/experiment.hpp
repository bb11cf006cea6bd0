// The experiment workflow (`leap experiment`): the paper's comparison in miniature. The config
// file's [experiment] section (runtime/workflows/experiment_data.hpp) names arms and seeds; one
// warm start is shared by all arms (OUT/warm_start, `leap pretrain` of the file's config, made
// once; or train.warm_start when the file sets it) and evaluated once with the runs' eval
// (OUT/warm_start_eval.json, redone when that eval's config changes: the row each arm's change is
// measured from), then every seed x arm is a `leap train` run with the same budget, then `leap
// eval` of its final checkpoint with the fixed eval seed. Each
// run is a child process of this very binary (/proc/self/exe), strictly one after another (a
// wall-clock budget stays fair; a crash of one run does not end the experiment), with its
// effective config in OUT/runs/<arm>/seed<N>/config.toml. A run is finished when its eval.json
// is complete (written atomically, recording the commit, the config hash and the task-suite
// hash); a rerun keeps finished runs and redoes any other from scratch. After every run
// OUT/table.md, OUT/results.csv, OUT/runs.csv and OUT/report.html are rewritten. Progress goes
// to stdout, problems to stderr. Main thread only (it installs SIGINT and SIGTERM handlers for
// the time it runs); no CAF or LibTorch in this header.
#pragma once

#include "runtime/config/config.hpp"

#include <string>

namespace leap::runtime::experiment {

struct request {
  std::string config_file;   // the file with the [experiment] section
  config::leap_config base;  // its config with the command line's overrides applied and checked
  std::string out_dir;       // where the runs and the result files go (made absolute here)
};

// Runs (or resumes) the experiment. Returns an exit status (runtime/workflows/exit_status.hpp):
// 0 when every run finished, 1 when one failed or a file could not be written, 2 for a bad
// [experiment] section or a changed configuration, 130 when interrupted.
int run(const request& req);

} // namespace leap::runtime::experiment
