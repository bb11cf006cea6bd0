#include "actors/env_service.hpp"

#include "actors/env_service_state.hpp"
#include "common/prometheus.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>

namespace leap::actors {

namespace env_service_detail {

using algo::attempt_phase;

void service_state::record_build(const msg::compile_reply& r) {
  if (!opts.metrics)
    return;
  if (r.cached) {
    opts.metrics->inc("leap_build_cache_hits_total");
  } else {
    opts.metrics->inc("leap_builds_total");
    opts.metrics->observe("leap_compile_seconds", r.seconds);
  }
  if (!r.cached)
    mean_compile = 0.8 * mean_compile + 0.2 * r.seconds;
}

void service_state::record_verdict(const env::verdict& v) {
  if (opts.metrics) {
    opts.metrics->inc("leap_verdicts_total", {{"status", env::to_string(v.st)}});
    if (v.run_seconds > 0)
      opts.metrics->observe("leap_run_seconds", v.run_seconds);
  }
  if (v.run_seconds > 0)
    mean_exec = 0.8 * mean_exec + 0.2 * v.run_seconds;
}

void service_state::init() {
  rollout_driver_options o;
  o.backend = opts.backend;
  o.older_groups_first = false; // checks and every client's groups: first come, first served
  job_port port;
  port.compile = [this](std::uint64_t, int, msg::compile_request req,
                        job_port::done_fn<msg::compile_reply> done) {
    job<msg::compile_reply>(comp, compile_jobs, opts.compile_timeout, msg::compile_atom_v,
                            std::move(req),
                            job_port::done_fn<msg::compile_reply>(
                              [this, done](result<msg::compile_reply> r) {
                                if (r)
                                  record_build(*r);
                                done(std::move(r));
                              }));
  };
  port.execute = [this](std::uint64_t, int, msg::exec_request req,
                        job_port::done_fn<msg::exec_reply> done) {
    job<msg::exec_reply>(exec, exec_jobs, opts.exec_timeout, msg::exec_atom_v, std::move(req),
                         std::move(done));
  };
  port.cancel = [this](attempt_phase where, std::uint64_t id) {
    if (where == attempt_phase::compiling)
      self->send(comp, msg::cancel_atom_v, id);
    else
      self->send(exec, msg::cancel_atom_v, id);
  };
  driver_events ev;
  ev.judged = [this](std::uint64_t id, int a, const env::verdict& v, const msg::exec_reply* run) {
    record_verdict(v);
    if (finish_check(id, v, run))
      return;
    groups.at(id).att[static_cast<std::size_t>(a)].verdicts.back() = v;
  };
  ev.dropped = [this](std::uint64_t id, int, const std::string& why) {
    if (drop_check(id, why))
      return;
    std::fprintf(stderr, "leap serve: an attempt at '%s' was dropped: %s\n",
                 driver->task(id).name.c_str(), why.c_str());
  };
  ev.finished = [this](std::uint64_t id) { score(id); };
  ev.settled = [this](std::uint64_t id) { settle(id); };
  driver = std::make_unique<rollout_driver>(o, std::move(port), std::move(ev));
}

msg::service_stats service_state::stats() {
  msg::service_stats s;
  s.groups_open = static_cast<std::uint32_t>(groups.size());
  s.compile_jobs = compile_jobs;
  s.exec_jobs = exec_jobs;
  s.waiting_jobs = waiting();
  s.groups_expired = expired;
  return s;
}

} // namespace env_service_detail

namespace {

using env_service_detail::service_state;
using service_actor = msg::env_service_actor::stateful_pointer<service_state>;

std::chrono::milliseconds tick_interval(std::chrono::milliseconds ttl) {
  return std::clamp(ttl / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(5000));
}

msg::env_service_actor::behavior_type env_service(service_actor self, env_service_options opts,
                                                  std::shared_ptr<const task_catalog> tasks,
                                                  msg::compiler_pool_actor comp,
                                                  msg::executor_pool_actor exec) {
  auto& s = self->state;
  s.self = self;
  s.opts = std::move(opts);
  s.tasks = std::move(tasks);
  s.comp = std::move(comp);
  s.exec = std::move(exec);
  s.init();
  self->delayed_send(self, tick_interval(s.opts.group_ttl), msg::tick_atom_v);
  return {
    [self](msg::check_atom, msg::check_call& c) {
      auto rp = self->make_response_promise<msg::check_answer>();
      self->state.check(c, rp);
      return rp;
    },
    [self](msg::group_atom, msg::group_call& c) {
      auto rp = self->make_response_promise<msg::group_answer>();
      self->state.open_group(c, rp);
      return rp;
    },
    [self](msg::turn_atom, msg::turn_call& c) {
      auto rp = self->make_response_promise<msg::group_answer>();
      self->state.turn(c, rp);
      return rp;
    },
    [self](msg::view_atom, const std::string& id) {
      auto rp = self->make_response_promise<msg::group_answer>();
      self->state.view(id, rp);
      return rp;
    },
    [self](msg::stats_atom) {
      auto rp = self->make_response_promise<msg::service_stats>();
      auto base = self->state.stats();
      auto timeout = std::chrono::seconds(5);
      self->request(self->state.comp, timeout, msg::stats_atom_v)
        .then(
          [self, rp, base, timeout](msg::pool_stats& c) mutable {
            base.compiler = c;
            self->request(self->state.exec, timeout, msg::stats_atom_v)
              .then(
                [rp, base](msg::pool_stats& e) mutable {
                  base.executor = e;
                  rp.deliver(base);
                },
                [rp, base](caf::error&) mutable { rp.deliver(base); });
          },
          [rp, base](caf::error&) mutable { rp.deliver(base); });
      return rp;
    },
    [self](msg::tick_atom) {
      self->state.expire();
      self->delayed_send(self, tick_interval(self->state.opts.group_ttl), msg::tick_atom_v);
    },
  };
}

} // namespace

void declare_service_metrics(prom::registry& m) {
  const std::vector<double> seconds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  m.declare("leap_verdicts_total", "Verdicts given, by status.", prom::kind::counter);
  m.declare("leap_builds_total", "Candidate and reference builds that ran the compiler.",
            prom::kind::counter);
  m.declare("leap_build_cache_hits_total", "Builds answered from the build cache.",
            prom::kind::counter);
  m.declare("leap_compile_seconds", "Wall time of builds that ran the compiler.",
            prom::kind::histogram, seconds);
  m.declare("leap_run_seconds", "Wall time of candidate runs against the reference.",
            prom::kind::histogram, seconds);
}

msg::env_service_actor spawn_env_service(caf::actor_system& sys, env_service_options opts,
                                         std::shared_ptr<const task_catalog> tasks,
                                         msg::compiler_pool_actor compilers,
                                         msg::executor_pool_actor executors) {
  return sys.spawn(env_service, std::move(opts), std::move(tasks), std::move(compilers),
                   std::move(executors));
}

} // namespace leap::actors
