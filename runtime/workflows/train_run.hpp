// The train workflow (`leap train`): LEAP reinforcement learning in a run directory
// (runtime/workflows/run_dir.hpp). Warm-starts from the pretrain checkpoint (running the warm-start
// workflow first when there is none), runs the actor pipeline (runtime/pipeline/assembly.hpp)
// for train.steps learner steps with a live display on stdout, appends one JSON object per step
// to DIR/metrics.jsonl and one per finished group to DIR/groups.jsonl
// (runtime/workflows/metrics_writer.hpp), checkpoints to DIR/checkpoint every
// train.checkpoint_every steps; `resume` continues from it; Ctrl-C or SIGTERM saves and returns
// 130; a failed learner step saves and returns 1 with its error; the run's budget
// (train.max_minutes, train.max_compiles) ends it as completed. Writes DIR/report.html at the end.
// Main thread (it installs SIGINT and SIGTERM handlers while the pipeline runs); no CAF or
// LibTorch in this header.
#pragma once

#include "runtime/pipeline/services.hpp"

#include <string>

namespace leap::runtime {

// Returns an exit status (runtime/workflows/exit_status.hpp): 0 done, 1 failed, 2 bad
// configuration or a run directory that does not fit, 130 interrupted.
int run_training(services& svc, const std::string& out_dir, bool resume);

} // namespace leap::runtime
