// What the pipeline's actors are given, derived from the configuration: the judge's estimator,
// the gatekeeper's run shape (G, turns, DCP, sampling, pool sizes), the pools' sizes and retry
// counts, the trainer's admission, the learner's optimiser, and the prompt codec of a real
// policy. One derivation for `leap train`, `leap eval` and `leap bench`. Pure functions; the
// main thread before spawning. No CAF calls here.
#pragma once

#include "actors/gatekeeper.hpp"
#include "actors/pool_options.hpp"
#include "actors/trainer.hpp"
#include "algo/advantages.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/prompt.hpp"
#include "runtime/config/config.hpp"

#include <chrono>
#include <memory>

namespace leap::policy {
class tokenizer;
}

namespace leap::runtime {

algo::estimator_config estimator_of(const config::train_section& t);

// The rollout of `leap train` and `leap bench` ([train]: G, turns, DCP, cancel_pruned_turn1),
// sampling, mode and stage sizes; everything but the prompt codec, the backend and the
// sequence limits. `dcp` false expands every failure (the bench's DCP-off mode).
actors::gatekeeper_options gatekeeper_options_of(const config::leap_config& cfg,
                                                 msg::train_mode mode, bool dcp);
// Request timeouts for a batch whose jobs all wait in the pools' queues at once (`leap check`'s
// checks, an evaluation's groups): the batch draining through the workers, every job at its own
// time limit, plus 60 s, so a long queue on a busy machine is no timeout, only a stuck pool is.
// Compile: (compiler.timeout_seconds x 3) per wave of compiler.workers of the `builds`; execute:
// (executor.timeout_seconds x 2 + 10) per wave of executor.workers of the `runs`.
struct request_budget {
  std::chrono::milliseconds compile, execute;
};
request_budget batch_request_budget(const config::leap_config& cfg, double builds, double runs);

// The rollout of an evaluation (`ec`: G, turns, sampling; cfg.eval for `leap eval`, a one-turn
// variant for pretrain's self-repair sampling; no DCP: every failure is retried), with cfg's
// stage sizes, for `tasks` groups admitted at once: the compile and execute timeouts are the
// batch_request_budget of G x turns builds and runs per task plus one reference build per task,
// never below the gatekeeper's defaults.
actors::gatekeeper_options eval_gatekeeper_options_of(const config::leap_config& cfg,
                                                      const config::eval_section& ec,
                                                      std::size_t tasks);

// B, steps, staleness (0 in sync mode), the seed and the task list.
actors::trainer_options trainer_options_of(const config::train_section& t, msg::train_mode mode,
                                           std::vector<std::string> tasks);

// [compiler] and [executor]: workers and retries.
actors::pool_options compiler_pool_of(const config::leap_config& cfg);
actors::pool_options executor_pool_of(const config::leap_config& cfg);

// [learner] as the policy's optimiser takes it.
policy::rl_options rl_options_of(const config::leap_config& cfg);

// encode / decode through the policy's prompt template (in `format`) and tokenizer.
actors::prompt_codec policy_codec(std::shared_ptr<const policy::tokenizer> tok,
                                  std::shared_ptr<const actors::task_catalog> tasks,
                                  policy::chat_format format = policy::chat_format::leap);

} // namespace leap::runtime
