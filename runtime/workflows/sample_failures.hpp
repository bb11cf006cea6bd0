// The failure-sampling workflow (the warm start's self-repair phase, sft.self_repair_steps): turn-1
// samples of some tasks from a checkpoint, judged by the environment through the evaluation
// pipeline, and the attempts that failed with their feedback. Main thread; no CAF or LibTorch in
// this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/pipeline/services.hpp"

#include <string>
#include <vector>

namespace leap::runtime {

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

} // namespace leap::runtime
