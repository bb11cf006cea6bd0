// The evaluation workflow (`leap eval`): samples G attempts per task from a checkpoint at the
// configured temperature and runs them through the same pipeline as `leap train`
// (runtime/pipeline/assembly.hpp: generator pool, gatekeeper with the rollout state machine,
// compiler and executor pools), retrying every failed attempt with its verdict's feedback up to
// eval.max_turns (no DCP in evaluation). Measures pass@1, Acc@1/2/3 (cumulative pass rate by
// turn) and per-task pass rates over the attempts that have verdicts; attempts lost to the
// infrastructure or not buildable by the CPU emulation are counted apart. By default it measures
// the held-out eval split (eval.split), and also Acc@k per task category and task set, and the
// task-suite hash. The samples come from the checkpoint, or with generation.source = "openai"
// from a server (runtime/workflows/openai_generation.hpp). Main thread; no CAF or LibTorch in
// this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <map>
#include <string>
#include <vector>

namespace leap::runtime {

struct eval_task_result {
  std::vector<int> solved_turn;      // per attempt: 1-based turn of the first pass, 0 = never
  std::vector<bool> ranked;          // per attempt: it has verdicts (not dropped / unsupported)
  std::map<std::string, int> turn1_status; // verdict status counts of the first turn
};

struct eval_category_result {
  std::vector<std::string> tasks;    // the evaluated tasks of this category
  std::vector<double> acc_at;        // acc_at[k-1] = Acc@k over those tasks' groups
};

struct eval_summary {
  std::string split;                 // "eval", "train" or "all": which tasks were measured
  std::string task_suite;            // env::task_suite_hash of the loaded suite
  double pass_at_1 = 0;              // fraction of ranked turn-1 samples that are correct
  std::vector<double> acc_at;        // acc_at[k-1] = Acc@k, k = 1..max(3, max_turns)
  double turns_per_pass = 0;
  std::map<std::string, eval_task_result> per_task;
  std::map<std::string, eval_category_result> per_category; // by category name
  // By task set (eval_set_of): bundled tasks apart from each kind of generated task.
  std::map<std::string, eval_category_result> per_set;
  long long samples = 0;             // completions generated, all turns
  long long generated_tokens = 0;
  long long no_code = 0;             // completions without extractable code (rejected)
  long long dropped = 0;             // attempts lost to the infrastructure
  long long unsupported = 0;         // attempts the CPU emulation could not build
  double generate_busy = 0, compile_busy = 0, execute_busy = 0; // busy fraction of each stage
  double seconds = 0;
};

// The set a task is reported in: "bundled", or for a generated task (env/taskgen)
// "generated_train", "generated_instance" (held-out instance) or "generated_composition"
// (held-out composition).
std::string eval_set_of(const std::string& task);

// eval.tasks may name generated tasks the catalog lacks (environment.generated_*): they are
// generated under environment.generated_seed and added first.
result<eval_summary> evaluate_checkpoint(services& svc, const std::string& checkpoint_dir,
                                         bool show_progress);

} // namespace leap::runtime
