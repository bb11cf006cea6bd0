// Verdicts that do not come from the executor: a candidate that did not build (compile error,
// rejected by the guards, not runnable on the CPU emulation, compile timeout) and a completion
// without extractable code. Shared by the evaluator and the gatekeeper so both judge alike.
// Pure functions; any thread.
#pragma once

#include "algo/rollout.hpp"
#include "env/task.hpp"
#include "env/verdict.hpp"
#include "messages/env_messages.hpp"

#include <optional>
#include <string>

namespace leap::actors {

// The verdict for a compile reply whose status is not ok; nullopt when the status is no verdict
// on the candidate (internal_error: a failure inside leap; cancelled).
std::optional<env::verdict> verdict_from_build(const msg::compile_reply& c, const env::task_spec& task,
                                               env::backend backend);

// A verdict as the rollout takes it: correct, the candidate's failure, or code the CPU
// emulation cannot build (not the candidate's fault); with its feedback and speedup.
algo::turn_judgement judgement_of(const env::verdict& v);

// `rejected` with the extractor's reason as feedback.
env::verdict no_code_verdict(const std::string& task, env::backend backend,
                             const std::string& reason);

} // namespace leap::actors
