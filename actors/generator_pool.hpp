// The generator pool: generation requests (one prompt x G, or several prompts x 1) served by a
// supervised pool (actors/supervised_pool.hpp) whose workers each drive one policy replica of a
// policy::generation_engine (one compute thread per replica, so sampling never blocks CAF's
// scheduler). Replies carry the policy version that sampled them. The weights sink takes the
// learner's published versions and hands them to every replica, which swaps between jobs.
// Spawned by the pipeline assembly (runtime/pipeline/).
#pragma once

#include "actors/pool_options.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace leap::policy {
class generation_engine;
}

namespace leap::actors {

// `opts.workers` is ignored: the engine's replicas decide the pool's size.
msg::generator_pool_actor spawn_generator_pool(caf::actor_system& sys, pool_options opts,
                                               std::shared_ptr<policy::generation_engine> engine);

msg::weights_sink_actor spawn_weights_sink(caf::actor_system& sys,
                                           std::shared_ptr<policy::generation_engine> engine);

} // namespace leap::actors
