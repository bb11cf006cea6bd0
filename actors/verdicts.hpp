// How a build and a run become a verdict, in one place for every caller (the rollout driver, the
// evaluator): a candidate that did not build (compile error, rejected by the guards, not runnable
// on the CPU emulation, compile timeout) is judged from its build; one that built, from its run,
// stamped with the build's timings and cache flag. Also the verdict of a completion without
// extractable code. Pure functions; any thread.
#pragma once

#include "algo/rollout.hpp"
#include "env/task.hpp"
#include "env/verdict.hpp"
#include "common/result.hpp"
#include "messages/env_messages.hpp"

#include <optional>
#include <string>

namespace leap::actors {

// The verdict of a candidate: from `build` when it did not build, else `run` (the executor's
// verdict, required then) with the build's seconds, stages and cache flag. An error when there is
// no verdict on the candidate: the build failed inside leap (internal_error) or was cancelled, or
// it built and no run is given.
result<env::verdict> verdict_of(const msg::compile_reply& build, const env::verdict* run,
                                const env::task_spec& task, env::backend backend);

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
