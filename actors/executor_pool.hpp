// The executor pool actor: runs built candidates against their task's reference in worker
// processes (env::executor), one job per worker, supervised (actors/supervised_pool.hpp). A run
// that fails inside leap (the reference crashed, a temporary directory could not be made) is an
// infrastructure failure: retried, then the request fails with an error, never a verdict.
// Requests name builds by content address; the pool finds them under `cache_dir`
// (env::build_executable), and a build that is not there fails the job with an error.
// Spawned by the pipeline assembly (runtime/pipeline/) and the evaluator; any actor may send it
// exec requests through msg::executor_pool_actor.
#pragma once

#include "actors/compiler_pool.hpp"
#include "env/executor.hpp"

namespace leap::actors {

msg::executor_pool_actor spawn_executor_pool(caf::actor_system& sys, pool_options opts,
                                             std::shared_ptr<env::executor> exec,
                                             std::shared_ptr<const task_catalog> tasks,
                                             std::string cache_dir);

} // namespace leap::actors
