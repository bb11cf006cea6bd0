#include "actors/executor_pool.hpp"

#include "actors/supervised_pool.hpp"

#include <filesystem>

namespace leap::actors {

msg::executor_pool_actor spawn_executor_pool(caf::actor_system& sys, pool_options opts,
                                             std::shared_ptr<env::executor> exec,
                                             std::shared_ptr<const task_catalog> tasks,
                                             std::string cache_dir) {
  using runner_t = job_runner<msg::exec_request, msg::exec_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [exec, tasks, cache_dir](const msg::exec_request& req,
                                runner_t::done_fn done) -> runner_t::cancel_fn {
    auto t = tasks->find(req.task);
    if (t == tasks->end()) {
      done(make_error("unknown task '" + req.task + "'"));
      return {};
    }
    env::run_request rr{req.backend, env::build_executable(cache_dir, req.candidate_build),
                        env::build_executable(cache_dir, req.reference_build), req.dump_inputs};
    std::error_code ec;
    for (const auto* exe : {&rr.candidate_exe, &rr.reference_exe})
      if (!std::filesystem::exists(*exe, ec)) {
        done(make_error("no build " + *exe + " in this process's build cache"));
        return {};
      }
    auto id = req.id;
    auto h = exec->start(t->second, rr, [done, id](result<env::run_result> r) {
      if (!r) {
        done(r.err());
        return;
      }
      msg::exec_reply rep;
      rep.id = id;
      rep.v = std::move(r->v);
      rep.kept_dir = std::move(r->kept_dir);
      rep.seed = r->seed;
      done(std::move(rep));
    });
    return [exec, h] { exec->cancel(h); };
  };
  // Cancellations are counted by the pool when it forwards them.
  runner->count = [](const msg::exec_reply&, msg::pool_stats&) {};
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::exec_atom, msg::exec_request, msg::exec_reply>,
                   std::string("executor_pool"), opts.workers, runner);
}

} // namespace leap::actors
