// `leap eval`: samples G attempts per task from a checkpoint at the configured temperature,
// runs them through the real environment, retries failed attempts with the verdict's feedback up
// to eval.max_turns, and reports pass@1, Acc@1/2/3 (cumulative pass rate by turn) and per-task
// pass rates. Main thread; no CAF or LibTorch in this header.
#pragma once

#include "common/result.hpp"
#include "runtime/services.hpp"

#include <map>
#include <string>
#include <vector>

namespace leap::runtime {

struct eval_task_result {
  std::vector<int> solved_turn;      // per attempt: 1-based turn of the first pass, 0 = never
  std::map<std::string, int> turn1_status; // verdict status counts of the first turn
};

struct eval_summary {
  double pass_at_1 = 0;              // fraction of turn-1 samples that are correct
  std::vector<double> acc_at;        // acc_at[k-1] = Acc@k, k = 1..max_turns
  double turns_per_pass = 0;
  std::map<std::string, eval_task_result> per_task;
  long long samples = 0;             // completions generated, all turns
  long long generated_tokens = 0;
  double generation_seconds = 0, verify_seconds = 0, seconds = 0;
  long long no_code = 0;             // completions without extractable code (rejected)
  long long emulation_unsupported = 0;
};

result<eval_summary> evaluate_checkpoint(services& svc, const std::string& checkpoint_dir,
                                         bool show_progress);

int cmd_eval(services& svc, const std::string& checkpoint_dir, bool json);

} // namespace leap::runtime
