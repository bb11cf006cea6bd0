// The metrics of a training run: one JSON object per learner step appended to metrics.jsonl (the
// step's report, its wall seconds and attempts per second, what the infrastructure cost it, the
// writing process's memory (`memory`: resident set and heap figures), and a clustered run's
// per-node figures) and one per finished group to groups.jsonl (its DCP decision
// and every attempt's turns, end, reward and advantages, so anyone can check that a group
// accounts for all G attempts); both flushed after every step. `leap report` and `leap
// experiment` read the rows back (runtime/report/run_data.hpp). Also the live display's per-node
// line of the same figures. One writer per run, used by one thread at a time (the train
// workflow's report callback, under its lock). No CAF, no LibTorch.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <fstream>
#include <string>

namespace leap::msg {
struct step_report;
struct cluster_status;
} // namespace leap::msg

namespace leap::runtime {

struct heldout_figures;

// A step's infrastructure retries besides its report: compile and execute tries the pools (or the
// cluster standing in for them) repeated after an infrastructure failure.
struct step_retries {
  std::uint64_t compile = 0, execute = 0;
};

class metrics_writer {
public:
  // Opens both files for appending. An error names the file that cannot be written.
  static result<metrics_writer> open(const std::string& metrics_path,
                                     const std::string& groups_path);

  // Appends step `r`'s row and its groups' lines, and flushes both. `nodes` is the cluster's
  // status (null when not clustered): its cumulative lost / rejoined / rerun counters become
  // per-step figures. An error (a full disk, a file-size limit) names the first file that could
  // not be written and why; the other is written all the same. `heldout` (null when the step had
  // no held-out evaluation, train.eval_every) becomes the row's "heldout" object: acc_at_1,
  // acc_at_3, tasks, attempts, compiles, cache_hits, seconds and "sets" (one object per held-out
  // set with tasks, attempts, acc_at_1, acc_at_3); readers that do not know it ignore it.
  result<void> write_step(const msg::step_report& r, double step_seconds,
                          double attempts_per_second, const step_retries& retries,
                          const msg::cluster_status* nodes,
                          const heldout_figures* heldout = nullptr);

  void flush();

private:
  metrics_writer(std::string metrics_path, std::string groups_path);
  std::string metrics_path_, groups_path_;
  std::ofstream metrics_, groups_;
  // The nodes' cumulative counters at the previous step.
  std::uint64_t nodes_lost_before_ = 0, nodes_rejoined_before_ = 0, jobs_rerun_before_ = 0;
};

// The step line's second line in a clustered run: one entry per node.
std::string nodes_line(const msg::cluster_status& s);

} // namespace leap::runtime
