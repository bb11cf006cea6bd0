#include "runtime/pipeline/evaluator.hpp"

#include "actors/compiler_pool.hpp"
#include "actors/env_service.hpp"
#include "actors/executor_pool.hpp"
#include "messages/error_text.hpp"
#include "messages/interfaces.hpp"
#include "runtime/pipeline/env_pools.hpp"
#include "runtime/pipeline/options.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace leap::runtime {

namespace {

std::string render(const caf::error& e, caf::actor_system& sys) {
  return msg::error_text(e, sys);
}

} // namespace

struct evaluator::impl {
  services& svc;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys; // made once cfg is prepared (create())
  env_pools pools;
  msg::compiler_pool_actor compilers;
  msg::executor_pool_actor executors;

  explicit impl(services& s) : svc(s) {}
  ~impl() { pools.shutdown(); }
};

evaluator::evaluator(passkey<evaluator>, std::unique_ptr<impl> i) : impl_(std::move(i)) {}
evaluator::~evaluator() = default;

result<std::unique_ptr<evaluator>> evaluator::create(services& svc) {
  auto i = std::make_unique<impl>(svc);
  if (auto r = prepare_actor_system(i->cfg, svc.cfg); !r)
    return r.err();
  i->sys = std::make_unique<caf::actor_system>(i->cfg);
  auto pools = spawn_env_pools(*i->sys, svc, compiler_pool_of(svc.cfg), executor_pool_of(svc.cfg));
  if (!pools)
    return pools.err();
  i->pools = std::move(*pools);
  i->compilers = i->pools.compilers;
  i->executors = i->pools.executors;
  return std::make_unique<evaluator>(passkey<evaluator>(), std::move(i));
}

result<msg::cluster_status> evaluator::cluster_status() {
  return query_cluster(*impl_->sys, impl_->pools);
}

std::vector<result<check_outcome>> evaluator::evaluate(const std::vector<check_item>& items) {
  auto& I = *impl_;
  auto& svc = I.svc;
  std::vector<result<check_outcome>> out(items.size(), make_error("not evaluated"));
  // Every item is a check of an environment service over the pools: one rollout driver judges
  // here as in training and `leap serve`. Requests wait in the pools' queues: the budget covers the
  // whole batch draining through the workers (a build and a reference build, and a run, per item),
  // so only a stuck pool ends in a timeout; no back-pressure (the batch is the whole queue).
  const double n = static_cast<double>(items.size());
  const auto budget = batch_request_budget(svc.cfg, 2.0 * n, n);
  actors::env_service_options o;
  o.backend = svc.backend;
  o.compile_workers = svc.cfg.compiler.workers;
  o.exec_workers = svc.cfg.executor.workers;
  o.max_queue = 0;
  o.max_groups = 0;
  o.compile_timeout = budget.compile;
  o.exec_timeout = budget.execute;
  auto service = actors::spawn_env_service(*I.sys, o, svc.tasks, I.compilers, I.executors);
  caf::scoped_actor self{*I.sys};
  using handle_t = decltype(self->request(service, caf::infinite, msg::check_atom_v,
                                          msg::check_call{}));
  std::vector<std::pair<std::size_t, handle_t>> calls;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!svc.tasks->count(items[i].task)) {
      out[i] = make_error("unknown task '" + items[i].task + "'");
      continue;
    }
    msg::check_call c;
    c.task = items[i].task;
    c.s.has_code = !items[i].reference;
    c.s.code = items[i].source;
    c.reference = items[i].reference;
    c.dump_inputs = items[i].dump_inputs;
    calls.emplace_back(i, self->request(service, caf::infinite, msg::check_atom_v, std::move(c)));
  }
  for (auto& [i, h] : calls) {
    h.receive(
      [&, i = i](msg::check_answer& a) {
        if (a.status != msg::serve_status::ok) {
          out[i] = make_error(a.message);
          return;
        }
        check_outcome o;
        o.v = std::move(a.v);
        o.kept_dir = std::move(a.kept_dir);
        o.seed = a.seed;
        out[i] = std::move(o);
      },
      [&, i = i](caf::error& e) { out[i] = make_error(render(e, *I.sys)); });
  }
  self->send_exit(service, caf::exit_reason::user_shutdown);
  return out;
}

namespace {
template <class Pool>
msg::pool_stats query_stats(caf::actor_system& sys, const Pool& pool) {
  caf::scoped_actor self{sys};
  msg::pool_stats s;
  self->request(pool, std::chrono::seconds(10), msg::stats_atom_v)
    .receive([&](msg::pool_stats& r) { s = r; }, [&](caf::error&) {});
  return s;
}
} // namespace

msg::pool_stats evaluator::compiler_stats() { return query_stats(*impl_->sys, impl_->compilers); }
msg::pool_stats evaluator::executor_stats() { return query_stats(*impl_->sys, impl_->executors); }


} // namespace leap::runtime
