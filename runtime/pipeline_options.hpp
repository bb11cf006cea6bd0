// The options `leap train` and `leap bench` both derive from the configuration for the pipeline's
// actors: the judge's estimator, the gatekeeper's run shape (G, turns, DCP, sampling, pool
// sizes), the trainer's admission, and the prompt codec of a real policy. Pure functions; the
// main thread before spawning. No CAF calls here.
#pragma once

#include "actors/batch_buffer.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/trainer.hpp"
#include "algo/advantages.hpp"
#include "runtime/config.hpp"

#include <memory>

namespace leap::policy {
class tokenizer;
}

namespace leap::runtime {

algo::estimator_config estimator_of(const config::train_section& t);

// Everything but the prompt codec, the backend and the sequence limits.
actors::gatekeeper_options gatekeeper_options_of(const config::leap_config& cfg, bool sync,
                                                 bool dcp);

// B, steps, staleness (0 in sync mode), the seed and the task list.
actors::trainer_options trainer_options_of(const config::train_section& t, bool sync,
                                           std::vector<std::string> tasks);

// train.batch_order as the learners take it.
actors::batch_order batch_order_of(const config::train_section& t);

// encode_prompt / decode through the policy's prompt template and tokenizer.
void set_policy_codec(actors::gatekeeper_options& go, std::shared_ptr<const policy::tokenizer> tok,
                      std::shared_ptr<const actors::task_catalog> tasks);

} // namespace leap::runtime
