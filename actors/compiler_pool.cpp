#include "actors/compiler_pool.hpp"

#include "actors/supervised_pool.hpp"

namespace leap::actors {

msg::compile_reply compile_reply_of(std::uint64_t id, const env::build_result& r) {
  msg::compile_reply rep;
  rep.id = id;
  rep.status = r.st;
  rep.diagnostics = r.diagnostics;
  rep.stage = r.stage;
  rep.seconds = r.seconds;
  rep.stages = r.stages;
  rep.cached = r.cached;
  rep.key = r.key;
  return rep;
}

msg::compiler_pool_actor spawn_compiler_pool(caf::actor_system& sys, pool_options opts,
                                             std::shared_ptr<env::compiler> comp,
                                             std::shared_ptr<const task_catalog> tasks,
                                             std::function<std::string(const msg::compile_request&)>
                                               source_of) {
  using runner_t = job_runner<msg::compile_request, msg::compile_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [comp, tasks, source_of](const msg::compile_request& req,
                                           runner_t::done_fn done) -> runner_t::cancel_fn {
    auto t = tasks->find(req.task);
    if (t == tasks->end()) {
      done(make_error("unknown task '" + req.task + "'"));
      return {};
    }
    env::build_request br{req.source, req.backend, req.reference};
    if (source_of && !req.reference)
      br.source = source_of(req);
    auto id = req.id;
    auto h = comp->start(t->second, br, [done, id](env::build_result r) {
      if (r.st == env::build_status::internal_error) {
        done(make_error("compiling failed inside leap (" + r.stage + "): " + r.diagnostics));
        return;
      }
      done(compile_reply_of(id, r));
    });
    return [comp, h] { comp->cancel(h); };
  };
  runner->count = [](const msg::compile_reply& r, msg::pool_stats& s) {
    if (r.cached)
      ++s.cache_hits;
    if (r.status == env::build_status::emulation_unsupported)
      ++s.emulation_unsupported;
  };
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::compile_atom, msg::compile_request, msg::compile_reply>,
                   std::string("compiler_pool"), opts.workers, runner);
}

} // namespace leap::actors
