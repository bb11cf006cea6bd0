#include "actors/executor_pool.hpp"

#include "actors/supervised_pool.hpp"

namespace leap::actors {

msg::executor_pool_actor spawn_executor_pool(caf::actor_system& sys, pool_options opts,
                                             std::shared_ptr<env::executor> exec,
                                             std::shared_ptr<const task_catalog> tasks) {
  using runner_t = job_runner<msg::exec_request, msg::exec_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [exec, tasks](const msg::exec_request& req,
                                runner_t::done_fn done) -> runner_t::cancel_fn {
    auto t = tasks->find(req.task);
    if (t == tasks->end()) {
      done(make_error("unknown task '" + req.task + "'"));
      return {};
    }
    env::run_request rr{req.backend, req.candidate_exe, req.reference_exe, req.dump_inputs};
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
