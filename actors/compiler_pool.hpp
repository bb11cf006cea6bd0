// The compiler pool actor: compiles candidates and references (env::compiler) with bounded
// concurrency (one job per worker), supervised (actors/supervised_pool.hpp). A build that fails
// inside leap (build_status::internal_error: a compiler stage killed by a signal, a tool that
// would not start) is an infrastructure failure: retried, then the request fails with an error;
// it never becomes a verdict. `source_of`, when given, chooses what a candidate request builds
// instead of its source (`leap bench` builds bundled corpus candidates). Spawned by the pipeline
// assembly (runtime/pipeline/) and the evaluator; any actor may send it compile requests through
// msg::compiler_pool_actor.
#pragma once

#include "actors/pool_options.hpp"
#include "env/compiler.hpp"
#include "messages/interfaces.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace caf {
class actor_system;
}

namespace leap::actors {

using task_catalog = std::map<std::string, env::task_spec>;

// The reply for job `id` from the compiler's result (shared with the benchmark's pools).
msg::compile_reply compile_reply_of(std::uint64_t id, const env::build_result& r);

msg::compiler_pool_actor spawn_compiler_pool(caf::actor_system& sys, pool_options opts,
                                             std::shared_ptr<env::compiler> comp,
                                             std::shared_ptr<const task_catalog> tasks,
                                             std::function<std::string(const msg::compile_request&)>
                                               source_of = {});

} // namespace leap::actors
