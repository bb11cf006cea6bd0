// `leap eval`: samples G attempts per task from a checkpoint at the configured temperature and
// runs them through the same pipeline as `leap train` (runtime/pipeline/assembly.hpp: generator
// pool, gatekeeper with the rollout state machine, compiler and executor pools), retrying every
// failed attempt with its verdict's feedback up to eval.max_turns (no DCP in evaluation). Reports
// pass@1, Acc@1/2/3 (cumulative pass rate by turn) and per-task pass rates over the attempts
// that have verdicts; attempts lost to the infrastructure or not buildable by the CPU emulation
// are counted apart. By default it measures the held-out eval split (eval.split), and it also
// reports Acc@k per task category and the task-suite hash. Main thread; no CAF or LibTorch in
// this header.
#pragma once

#include "common/result.hpp"
#include "policy/prompt.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/pipeline/services.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace leap::policy {
class generation_engine;
class tokenizer;
} // namespace leap::policy

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

int cmd_eval(services& svc, const std::string& checkpoint_dir, bool json);

struct sampled_failures {
  std::vector<failed_turn> failures;
  long long samples = 0; // turn-1 samples with verdicts (dropped and emulation-unsupported left out)
  long long passed = 0;
  double seconds = 0;
};

// `group_size` turn-1 samples of each of `tasks` from the checkpoint in `dir` (always the
// checkpoint itself, whatever generation.source says), judged by the environment through the
// pipeline of `leap eval` (eval.temperature, eval.max_new_tokens, eval.seed; one turn), and the
// attempts that failed. Used by `leap pretrain`'s self-repair
// phase (sft.self_repair_steps). Main thread; sets LibTorch to one compute thread per replica.
result<sampled_failures> sample_failures(services& svc, const std::string& checkpoint_dir,
                                         const std::vector<std::string>& tasks, int group_size,
                                         bool show_progress);

// generation.source = "openai": a generation engine whose jobs go to the [openai] server, one
// request per prompt (n = samples per prompt, seed = the job's seed + the prompt's index, as the
// in-process generators seed it), answered with token ids and behaviour log-probs (an answer
// without token ids is re-encoded from its text with `tok`; without log-probs they are 0).
// A choice that stopped (finish_reason "stop") gets `format`'s end-of-turn token appended, the
// token the in-process sampler keeps at the end of a sample.
// Used by `leap eval` and `leap bench`. An error names the key (openai.model, openai.url).
result<std::shared_ptr<policy::generation_engine>>
openai_generation_engine(const config::leap_config& cfg,
                         std::shared_ptr<const policy::tokenizer> tok,
                         policy::chat_format format = policy::chat_format::leap);

} // namespace leap::runtime
