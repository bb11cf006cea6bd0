// `leap experiment`'s data: the [experiment] section of a config file (arms as sets of --set
// overrides, seeds, the per-run budget, the target Acc@1, the eval seed), the figures of one
// finished run (eval.json + the train run's metrics.jsonl), their per-arm summary (mean and a
// 95% Student t interval over seeds) and the three result files (table.md, results.csv,
// report.html). Parsing, arithmetic and string building only; the runs themselves are started
// by the experiment workflow (runtime/workflows/experiment.hpp). No CAF, no LibTorch; any thread
// may call these functions.
#pragma once

#include "common/result.hpp"
#include "runtime/config/config.hpp"
#include "runtime/report/seed_stats.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leap::runtime::experiment {

// The paper's figures for an arm (percent, as printed in the paper), shown beside ours.
struct paper_numbers {
  std::optional<double> acc1, acc2, acc3, turns_per_pass, activated, recovery;
};

struct arm {
  std::string name;                 // directory name under runs/: [A-Za-z0-9_-]+
  std::string label;                // for the tables; defaults to name
  std::vector<std::string> sets;    // "section.key=value", --set syntax, applied in order
  paper_numbers paper;
};

struct spec {
  std::vector<arm> arms;
  std::vector<std::int64_t> seeds;  // train.seed of each run (run directory seed<N>)
  double max_minutes = 0;           // -> train.max_minutes of every run (0 = none)
  int max_compiles = 0;             // -> train.max_compiles of every run (0 = none)
  double target_acc1 = 0;           // training Acc@1 for "minutes to target" (0 = not reported)
  std::int64_t eval_seed = 1;       // -> eval.seed of every eval
};

// Reads the [experiment] section of `path` and checks every arm's overrides against `base` (the
// file's config with the command line's --set applied) through the key registry, exactly as
// --set is checked. [experiment] is read through its schema (common/toml_schema.hpp): errors
// read "<file>:<line>:<col>: [experiment.arms[1]] set: element [0]: [train] dcp: ...", one per
// line, in file order.
result<spec> load_spec(const std::string& path, const config::leap_config& base);

// The config of one run: `base`, the arm's overrides, the budget, train.seed = seed, eval.seed,
// train.warm_start. Rules across keys are checked (an error names the arm).
result<config::leap_config> run_config(const config::leap_config& base, const spec& s,
                                       const arm& a, std::int64_t seed,
                                       const std::string& warm_start);

// The hash recorded with each run: SHA-256 (first 16 hex digits) of the run's effective config
// as TOML, with train.warm_start left out (the same run in a moved directory keeps its hash).
std::string config_hash(const config::leap_config& cfg);

// What one finished run measured.
struct run_result {
  std::string arm;
  std::int64_t seed = 0;
  // eval split, final checkpoint: every evaluated task (eval.tasks, or the whole split)
  double acc1 = 0, acc2 = 0, acc3 = 0, turns_per_pass = 0;
  // the same per set of tasks (the eval's per_set): the hand-written eval-split tasks and the
  // generated held-out compositions; none when the eval had no task of that set
  std::optional<double> bundled_acc1, bundled_acc3, comp_acc1, comp_acc3;
  // training (metrics.jsonl)
  long long steps = 0;
  double train_minutes = 0;                  // sum of step_seconds
  double activated = 0;                      // mean over steps of activated_groups
  std::optional<double> recovery;            // mean over steps that have one
  long long compiles_turn1 = 0, compiles_later = 0; // compile requests (cache hits included)
  std::optional<double> minutes_to_target;   // first step where the running Acc@1 (mean of the
                                             // last <= 3 steps) reached target_acc1
  // held-out evaluation during training (train.eval_every): the last one's Acc@1 / Acc@3 and
  // the compile requests of all of them; none when the run had none
  std::optional<double> heldout_acc1, heldout_acc3, heldout_compiles;
  std::string commit, config_hash, task_suite;
};

// Reads RUN_DIR/eval.json as written by `leap experiment` (the eval and training figures).
result<run_result> read_run_result(const std::string& run_dir);

// The warm start's own evaluation, the row every arm's change is measured from: the config of
// `leap eval --checkpoint <warm start>` (`base` with [experiment] eval_seed; the same eval as
// every run's, so each task's samples are drawn from the same random streams), and its result
// file (DIR/warm_start_eval.json: "complete", "config_hash", "warm_start", "eval"), read into a
// run_result without training figures (arm "warm start", seed 0).
config::leap_config warm_start_eval_config(const config::leap_config& base, const spec& s);
result<run_result> read_warm_start_eval(const std::string& path);

// The figures of the train run in `run_dir` (metrics.jsonl) into `r`.
result<void> add_training_figures(const std::string& run_dir, double target_acc1, run_result& r);

// The statistics over seeds (runtime/report/seed_stats.hpp).
using report::interval;
using report::mean_interval;
using report::t95;

// One arm's summary over its finished seeds. The change keys are each run's figure minus the
// warm start's (none without a warm-start evaluation).
struct arm_summary {
  const arm* a = nullptr;
  std::vector<const run_result*> runs;
  std::map<std::string, std::optional<interval>> stat; // by metric key (see metric_keys())
  int target_reached = 0;
};
// The metric keys, in results.csv order: acc1 acc2 acc3 bundled_acc1 bundled_acc3
// bundled_change1 bundled_change3 comp_acc1 comp_acc3 comp_change1 comp_change3 turns_per_pass
// activated recovery compiles_turn1 compiles_later minutes_to_target heldout_acc1 heldout_acc3
// heldout_compiles.
const std::vector<std::string>& metric_keys();
std::vector<arm_summary> summarise(const spec& s, const std::vector<run_result>& runs,
                                   const run_result* warm = nullptr);

// The result files. `meta` holds lines about the whole experiment (commit, budget, warm start);
// `warm` is the warm start's evaluation (a row of its own), or null.
std::string render_table_md(const spec& s, const std::vector<arm_summary>& sums,
                            const std::vector<std::string>& meta, const run_result* warm = nullptr);
std::string render_results_csv(const spec& s, const std::vector<arm_summary>& sums);
std::string render_runs_csv(const std::vector<run_result>& runs);
// report.html: the tables, training curves of every run read from run_dirs (parallel to
// `runs`), coloured by arm, and per arm the mean over seeds with its 95% band: training Acc@1 by
// step and held-out Acc@1 / Acc@3 against the training compiles spent (train.eval_every).
std::string render_html(const spec& s, const std::vector<arm_summary>& sums,
                        const std::vector<std::string>& meta,
                        const std::vector<run_result>& runs,
                        const std::vector<std::string>& run_dirs,
                        const run_result* warm = nullptr);

} // namespace leap::runtime::experiment
