#include "runtime/pipeline/evaluator.hpp"

#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/verdicts.hpp"
#include "env/feedback.hpp"
#include "messages/error_text.hpp"
#include "messages/interfaces.hpp"
#include "runtime/cluster/env_pools.hpp"
#include "runtime/pipeline/options.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>

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
  std::uint64_t next_id = 1;

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
  caf::scoped_actor self{*I.sys};
  std::vector<result<check_outcome>> out(items.size(), make_error("not evaluated"));
  // Requests wait in the pools' queues: the budget covers the whole batch draining through the
  // workers (every job at its own time limit), so only a stuck pool ends in a timeout.
  double waves_c = std::ceil(2.0 * static_cast<double>(items.size())
                             / std::max(1, svc.cfg.compiler.workers));
  double waves_e = std::ceil(static_cast<double>(items.size()) / std::max(1, svc.cfg.executor.workers));
  auto compile_timeout =
    std::chrono::duration<double>(svc.cfg.compiler.timeout_seconds * 3 * waves_c + 60);
  auto exec_timeout =
    std::chrono::duration<double>((svc.cfg.executor.timeout_seconds * 2 + 10) * waves_e + 60);
  auto ct = std::chrono::duration_cast<std::chrono::milliseconds>(compile_timeout);
  auto et = std::chrono::duration_cast<std::chrono::milliseconds>(exec_timeout);

  struct pending {
    msg::compile_reply ref, cand;
    std::optional<std::string> failure; // why leap could not evaluate it
  };
  std::vector<pending> p(items.size());
  // 1. Compile references and candidates; the pool overlaps them up to its size.
  using handle_t = decltype(self->request(I.compilers, ct, msg::compile_atom_v, msg::compile_request{}));
  std::vector<std::pair<std::size_t, bool>> order;
  std::vector<handle_t> handles;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!svc.tasks->count(items[i].task)) {
      p[i].failure = "unknown task '" + items[i].task + "'";
      continue;
    }
    const auto& task = svc.tasks->at(items[i].task);
    msg::compile_request ref{I.next_id++, items[i].task, task.reference_source, svc.backend, true};
    handles.push_back(self->request(I.compilers, ct, msg::compile_atom_v, ref));
    order.emplace_back(i, true);
    if (!items[i].reference) {
      msg::compile_request cand{I.next_id++, items[i].task, items[i].source, svc.backend, false};
      handles.push_back(self->request(I.compilers, ct, msg::compile_atom_v, cand));
      order.emplace_back(i, false);
    }
  }
  for (std::size_t k = 0; k < handles.size(); ++k) {
    auto [i, is_ref] = order[k];
    handles[k].receive(
      [&, i = i, is_ref = is_ref](msg::compile_reply& r) {
        (is_ref ? p[i].ref : p[i].cand) = std::move(r);
        if (is_ref && items[i].reference)
          p[i].cand = p[i].ref;
      },
      [&, i = i](caf::error& e) {
        if (!p[i].failure)
          p[i].failure = "compiler pool: " + render(e, *I.sys);
      });
  }
  // 2. Build verdicts for what did not compile; run the rest.
  using exec_handle_t = decltype(self->request(I.executors, et, msg::exec_atom_v, msg::exec_request{}));
  std::vector<std::pair<std::size_t, exec_handle_t>> runs;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (p[i].failure) {
      out[i] = make_error(*p[i].failure);
      continue;
    }
    const auto& task = svc.tasks->at(items[i].task);
    if (p[i].ref.status != env::build_status::ok) {
      out[i] = make_error("the reference of task '" + items[i].task + "' does not build ("
                          + env::to_string(p[i].ref.status) + "): " + p[i].ref.diagnostics);
      continue;
    }
    const auto& c = p[i].cand;
    if (c.status != env::build_status::ok) {
      auto v = actors::verdict_from_build(c, task, svc.backend);
      if (!v) {
        out[i] = make_error("compiling '" + items[i].task + "' gave no verdict ("
                            + env::to_string(c.status) + "): " + c.diagnostics);
        continue;
      }
      check_outcome o;
      o.v = std::move(*v);
      out[i] = std::move(o);
      continue;
    }
    msg::exec_request req{I.next_id++, items[i].task, svc.backend, c.key,
                          p[i].ref.key, items[i].dump_inputs};
    runs.emplace_back(i, self->request(I.executors, et, msg::exec_atom_v, req));
  }
  for (auto& [i, h] : runs) {
    h.receive(
      [&, i = i](msg::exec_reply& r) {
        check_outcome o;
        o.v = std::move(r.v);
        o.v.compile_seconds = p[i].cand.seconds;
        o.v.compile_stages = p[i].cand.stages;
        o.v.cached = p[i].cand.cached;
        o.kept_dir = std::move(r.kept_dir);
        o.seed = r.seed;
        out[i] = std::move(o);
      },
      [&, i = i](caf::error& e) { out[i] = make_error("executor pool: " + render(e, *I.sys)); });
  }
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
