// The executor pool actor: runs built candidates against their task's reference in worker
// processes (env::executor), one job per worker, supervised. Spawned once by runtime/boot; any
// actor may send it exec requests through msg::executor_pool_actor.
#pragma once

#include "actors/compiler_pool.hpp"
#include "env/executor.hpp"

namespace leap::actors {

msg::executor_pool_actor spawn_executor_pool(caf::actor_system& sys, std::size_t workers,
                                             std::shared_ptr<env::executor> exec,
                                             std::shared_ptr<const task_catalog> tasks,
                                             std::shared_ptr<job_trace> trace = nullptr);

} // namespace leap::actors
