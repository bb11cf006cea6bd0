#include "actors/env_service.hpp"

#include "actors/group_scoring.hpp"
#include "actors/rollout_driver.hpp"
#include "actors/edit_answer.hpp"
#include "actors/verdicts.hpp"
#include "common/prometheus.hpp"
#include "common/random_id.hpp"
#include "messages/error_text.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace leap::actors {

namespace {

using algo::attempt_phase;
using algo::rollout_action;
using clock_type = std::chrono::steady_clock;
using group_promise = caf::typed_response_promise<msg::group_answer>;

// What the rollout does not keep of one attempt (the driver keeps its jobs and build).
struct served_attempt {
  std::vector<std::optional<env::verdict>> verdicts; // per turn, once judged
  std::vector<std::int64_t> tokens;                  // per turn, as the client said
  std::vector<group_promise> waiting;                // turn calls waiting for this turn's end
};

// A group of the service: its client-facing name and what the client waits for; the rollout
// itself is the driver's, under the group's number.
struct served_group {
  std::string name;                   // 128 random bits, what the client names it by
  std::vector<served_attempt> att;
  std::vector<group_promise> opening; // the group call, until every turn-1 verdict is in
  clock_type::time_point touched = clock_type::now();
  std::optional<msg::scored_group> scores;
};

// A single check: a one-attempt, one-turn rollout of the driver.
using check_promise = caf::typed_response_promise<msg::check_answer>;

msg::attempt_state state_of(const algo::rollout_attempt& at) {
  if (at.end != algo::attempt_end::none)
    return msg::attempt_state::ended;
  if (at.phase == attempt_phase::generating && !at.turns.empty())
    return msg::attempt_state::awaiting_turn;
  return msg::attempt_state::running;
}

struct service_state {
  msg::env_service_actor::pointer self = nullptr;
  env_service_options opts;
  std::shared_ptr<const task_catalog> tasks;
  msg::compiler_pool_actor comp;
  msg::executor_pool_actor exec;
  std::map<std::uint64_t, served_group> groups;   // by the driver's number
  std::map<std::string, std::uint64_t> names;     // a group's name -> its number
  std::map<std::uint64_t, check_promise> checks;  // by the driver's number
  std::unique_ptr<rollout_driver> driver;
  std::uint64_t next_id = 1;
  std::uint32_t compile_jobs = 0, exec_jobs = 0;
  std::uint64_t expired = 0;
  double mean_compile = 0.5, mean_exec = 0.5; // seconds per job, smoothed (retry-after)

  std::string render(const caf::error& e) { return msg::error_text(e, self->system()); }
  // --- back-pressure ---
  std::uint32_t waiting() const {
    auto beyond = [](std::uint32_t jobs, int workers) {
      return jobs > static_cast<std::uint32_t>(workers) ? jobs - static_cast<std::uint32_t>(workers)
                                                        : 0u;
    };
    return beyond(compile_jobs, opts.compile_workers) + beyond(exec_jobs, opts.exec_workers);
  }
  bool busy() const { return opts.max_queue > 0 && waiting() >= static_cast<std::uint32_t>(opts.max_queue); }
  double retry_after() const {
    double s = mean_compile * std::max<double>(0, double(compile_jobs) - opts.compile_workers)
                 / std::max(1, opts.compile_workers)
               + mean_exec * std::max<double>(0, double(exec_jobs) - opts.exec_workers)
                   / std::max(1, opts.exec_workers);
    return std::max(1.0, std::ceil(s));
  }
  template <class Answer>
  Answer refusal(msg::serve_status st, std::string why) {
    Answer a;
    a.status = st;
    a.message = std::move(why);
    if (st == msg::serve_status::busy)
      a.retry_after = retry_after();
    return a;
  }
  std::string busy_text() const {
    return std::to_string(waiting()) + " jobs are waiting (serve.max_queue = "
           + std::to_string(opts.max_queue) + ")";
  }

  // --- metrics ---
  void record_build(const msg::compile_reply& r) {
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
  void record_verdict(const env::verdict& v) {
    if (opts.metrics) {
      opts.metrics->inc("leap_verdicts_total", {{"status", env::to_string(v.st)}});
      if (v.run_seconds > 0)
        opts.metrics->observe("leap_run_seconds", v.run_seconds);
    }
    if (v.run_seconds > 0)
      mean_exec = 0.8 * mean_exec + 0.2 * v.run_seconds;
  }

  // --- jobs (every compile and execute goes through these: counted for back-pressure) ---
  // One job of a pool, counted in `in_flight` until its reply or error.
  template <class Reply, class Pool, class Atom, class Request>
  void job(const Pool& pool, std::uint32_t& in_flight, std::chrono::milliseconds timeout,
           Atom atom, Request req, job_port::done_fn<Reply> done) {
    ++in_flight;
    self->request(pool, timeout, atom, std::move(req))
      .then(
        [&in_flight, done](Reply& r) mutable {
          --in_flight;
          done(std::move(r));
        },
        [this, &in_flight, done](caf::error& e) mutable {
          --in_flight;
          done(make_error(render(e)));
        });
  }

  void init() {
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
      if (auto c = checks.find(id); c != checks.end()) {
        msg::check_answer ans;
        ans.status = msg::serve_status::ok;
        ans.v = v;
        if (run) {
          ans.kept_dir = run->kept_dir;
          ans.seed = run->seed;
        }
        c->second.deliver(std::move(ans));
        checks.erase(c);
        return driver->close(id);
      }
      groups.at(id).att[static_cast<std::size_t>(a)].verdicts.back() = v;
    };
    ev.dropped = [this](std::uint64_t id, int, const std::string& why) {
      if (auto c = checks.find(id); c != checks.end()) {
        c->second.deliver(refusal<msg::check_answer>(msg::serve_status::failed, why));
        checks.erase(c);
        return driver->close(id);
      }
      std::fprintf(stderr, "leap serve: an attempt at '%s' was dropped: %s\n",
                   driver->task(id).name.c_str(), why.c_str());
    };
    ev.finished = [this](std::uint64_t id) { score(id); };
    ev.settled = [this](std::uint64_t id) { settle(id); };
    driver = std::make_unique<rollout_driver>(o, std::move(port), std::move(ev));
  }

  // --- a check ---
  void check(msg::check_call& call, check_promise rp) {
    auto t = tasks->find(call.task);
    if (t == tasks->end()) {
      rp.deliver(refusal<msg::check_answer>(msg::serve_status::not_found,
                                            "unknown task '" + call.task + "' (field task)"));
      return;
    }
    if (!call.s.has_code && !call.reference) {
      auto v = no_code_verdict(call.task, opts.backend, call.s.no_code_reason);
      record_verdict(v);
      msg::check_answer a;
      a.status = msg::serve_status::ok;
      a.v = std::move(v);
      rp.deliver(std::move(a));
      return;
    }
    if (busy()) {
      rp.deliver(refusal<msg::check_answer>(msg::serve_status::busy, busy_text()));
      return;
    }
    algo::rollout_config one;
    one.group_size = 1;
    one.max_turns = 1;
    driven_group_options go;
    go.dump_inputs = call.dump_inputs;
    go.candidate_is_reference = call.reference;
    auto id = next_id++;
    checks.emplace(id, rp);
    driver->open(id, one, t->second, go);
    auto& r = driver->rollout(id);
    (void)r.start(); // one generate action: the call's code is the sample
    auto code = call.reference ? t->second.reference_source : std::move(call.s.code);
    driver->perform(id, r.sampled(0, std::move(code), 0));
  }

  // --- groups ---
  void open_group(msg::group_call& call, group_promise rp) {
    if (!tasks->count(call.task))
      return (void)rp.deliver(refusal<msg::group_answer>(msg::serve_status::not_found,
                                                   "unknown task '" + call.task + "' (field task)"));
    if (call.attempts.empty())
      return (void)rp.deliver(refusal<msg::group_answer>(msg::serve_status::bad_request,
                                                   "field sources: a group needs at least one"));
    if (busy())
      return (void)rp.deliver(refusal<msg::group_answer>(msg::serve_status::busy, busy_text()));
    if (opts.max_groups > 0 && groups.size() >= static_cast<std::size_t>(opts.max_groups))
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::busy, std::to_string(groups.size())
                                   + " groups are open (serve.max_groups); finish or let some expire"));
    auto cfg = opts.rollout;
    cfg.group_size = static_cast<int>(call.attempts.size());
    auto id = next_id++;
    auto& g = groups[id];
    g.name = random_id();
    g.att.resize(call.attempts.size());
    g.opening.push_back(rp);
    names[g.name] = id;
    driver->open(id, cfg, tasks->at(call.task));
    auto& r = driver->rollout(id);
    (void)r.start(); // one generate action: the client's submissions are its samples
    std::vector<rollout_action> more;
    for (int a = 0; a < cfg.group_size; ++a)
      append(more, submit(id, a, std::move(call.attempts[static_cast<std::size_t>(a)])));
    driver->perform(id, std::move(more));
  }

  // The attempt's next turn arrived: the rollout's sampled event.
  std::vector<rollout_action> submit(std::uint64_t id, int a, msg::submission s) {
    auto& r = driver->rollout(id);
    auto& io = groups.at(id).att[static_cast<std::size_t>(a)];
    io.tokens.push_back(s.tokens);
    io.verdicts.emplace_back();
    if (!s.edit.empty()) { // SEARCH/REPLACE edits of the latest code (edit_answer.hpp)
      if (auto applied = apply_edit_answer(r.attempt(a).turns, s.edit)) {
        if (*applied)
          return r.sampled(a, std::move(**applied), s.tokens);
        s.no_code_reason = applied->message();
      }
    }
    if (s.has_code)
      return r.sampled(a, std::move(s.code), s.tokens);
    auto v = no_code_verdict(driver->task(id).name, opts.backend, s.no_code_reason);
    record_verdict(v);
    io.verdicts.back() = v;
    return r.sampled_without_code(a, s.tokens, v.feedback);
  }

  // The number of the group the client names; 0 when there is none.
  std::uint64_t number_of(const std::string& name) const {
    auto it = names.find(name);
    return it == names.end() ? 0 : it->second;
  }

  void turn(msg::turn_call& call, group_promise rp) {
    auto id = number_of(call.group);
    if (id == 0)
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::not_found, "no group '" + call.group + "' (never opened, or expired)"));
    auto& g = groups.at(id);
    g.touched = clock_type::now();
    const int n = static_cast<int>(g.att.size());
    if (call.attempt < 0 || call.attempt >= n)
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::bad_request,
        "field attempt: " + std::to_string(call.attempt) + " is not in [0, " + std::to_string(n)
          + ")"));
    const auto& at = driver->rollout(id).attempt(call.attempt);
    const int sent = static_cast<int>(at.turns.size());
    auto& io = g.att[static_cast<std::size_t>(call.attempt)];
    if (call.turn >= 1 && call.turn <= sent) {
      // A repeat: the first answer, once that turn is over.
      if (call.turn == sent && state_of(at) == msg::attempt_state::running)
        io.waiting.push_back(rp);
      else
        rp.deliver(answer(id));
      return;
    }
    if (state_of(at) != msg::attempt_state::awaiting_turn)
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::conflict,
        "attempt " + std::to_string(call.attempt) + " takes no turn " + std::to_string(call.turn)
          + ": it " + (at.end != algo::attempt_end::none
                         ? std::string("ended (") + algo::to_string(at.end) + ")"
                         : std::string("is still running turn ") + std::to_string(sent))));
    if (call.turn != sent + 1)
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::conflict, "field turn: attempt " + std::to_string(call.attempt)
                                       + " expects turn " + std::to_string(sent + 1) + ", not "
                                       + std::to_string(call.turn)));
    if (busy())
      return (void)rp.deliver(refusal<msg::group_answer>(msg::serve_status::busy, busy_text()));
    io.waiting.push_back(rp);
    driver->perform(id, submit(id, call.attempt, std::move(call.s)));
  }

  void view(const std::string& name, group_promise rp) {
    auto id = number_of(name);
    if (id == 0)
      return (void)rp.deliver(refusal<msg::group_answer>(
        msg::serve_status::not_found, "no group '" + name + "' (never opened, or expired)"));
    groups.at(id).touched = clock_type::now();
    rp.deliver(answer(id));
  }

  static void append(std::vector<rollout_action>& to, std::vector<rollout_action> more) {
    to.insert(to.end(), more.begin(), more.end());
  }

  // The judge's arithmetic over the finished group.
  void score(std::uint64_t id) {
    auto& g = groups.at(id);
    const auto& r = driver->rollout(id);
    msg::group_result res;
    res.task = driver->task(id).name;
    res.dcp = r.decision();
    res.activated = r.activated();
    std::vector<std::vector<std::int64_t>> tokens;
    for (std::size_t a = 0; a < g.att.size(); ++a) {
      const auto& at = r.attempt(static_cast<int>(a));
      msg::trajectory_record tr;
      tr.solved_turn = at.solved_turn;
      tr.end = at.end;
      tr.end_reason = at.end_reason;
      for (std::size_t k = 0; k < at.turns.size(); ++k) {
        msg::turn_record rec;
        const auto& v = g.att[a].verdicts.at(k);
        rec.judged = v.has_value();
        if (v) {
          rec.status = v->st;
          rec.reason = v->reason;
          rec.timed = v->timed;
          rec.speedup = v->speedup;
        }
        tr.turns.push_back(std::move(rec));
      }
      res.trajectories.push_back(std::move(tr));
      tokens.push_back(g.att[a].tokens);
    }
    g.scores = score_group(std::move(res), opts.estimator, &tokens);
  }

  // Answers the group call once no turn-1 job is left, and each turn call once its turn is over.
  void settle(std::uint64_t id) {
    auto it = groups.find(id);
    if (it == groups.end())
      return; // a check
    auto& g = it->second;
    const auto& r = driver->rollout(id);
    bool turn1_done = true;
    for (std::size_t a = 0; a < g.att.size(); ++a) {
      const auto& at = r.attempt(static_cast<int>(a));
      auto st = state_of(at);
      if (st == msg::attempt_state::running && at.turns.size() <= 1)
        turn1_done = false;
      if (st != msg::attempt_state::running && !g.att[a].waiting.empty()) {
        auto ans = answer(id);
        for (auto& rp : g.att[a].waiting)
          rp.deliver(ans);
        g.att[a].waiting.clear();
      }
    }
    if (turn1_done && !g.opening.empty()) {
      auto ans = answer(id);
      for (auto& rp : g.opening)
        rp.deliver(ans);
      g.opening.clear();
    }
  }

  msg::group_answer answer(std::uint64_t id) {
    const auto& g = groups.at(id);
    const auto& r = driver->rollout(id);
    const auto& task = driver->task(id).name;
    msg::group_answer ans;
    ans.status = msg::serve_status::ok;
    auto& v = ans.g;
    v.id = g.name;
    v.task = task;
    v.dcp = r.decision();
    v.activated = r.activated();
    v.finished = r.finished();
    v.turn1_failed = r.turn1_failed();
    v.turn1_passed = r.turn1_passed();
    v.turn1_lost = r.turn1_lost();
    v.estimator = algo::to_string(opts.estimator.kind);
    v.expires_in_seconds = std::chrono::duration<double>(
                             g.touched + opts.group_ttl - clock_type::now())
                             .count();
    for (std::size_t a = 0; a < g.att.size(); ++a) {
      const auto& at = r.attempt(static_cast<int>(a));
      msg::attempt_view av;
      av.attempt = static_cast<std::int32_t>(a);
      av.state = state_of(at);
      av.end = at.end;
      av.end_reason = at.end_reason;
      av.solved_turn = at.solved_turn;
      std::vector<std::string> codes, feedbacks;
      for (std::size_t k = 0; k < at.turns.size(); ++k) {
        msg::turn_view tv;
        tv.turn = static_cast<std::int32_t>(k + 1);
        if (const auto& verdict = g.att[a].verdicts.at(k)) {
          tv.judged = true;
          tv.v = *verdict;
        }
        av.turns.push_back(std::move(tv));
        codes.push_back(at.turns[k].code);
        feedbacks.push_back(at.turns[k].feedback);
      }
      if (av.state == msg::attempt_state::awaiting_turn) {
        av.next_turn = static_cast<std::int32_t>(at.turns.size() + 1);
        if (opts.render_prompt)
          av.next_prompt = opts.render_prompt(task, codes, feedbacks);
      }
      if (g.scores) {
        av.reward = g.scores->rewards.at(a);
        av.advantages = g.scores->advantages.at(a);
      }
      v.attempts.push_back(std::move(av));
    }
    return ans;
  }

  // Groups idle past the TTL with nobody waiting go; their jobs in flight are cancelled.
  void expire() {
    auto now = clock_type::now();
    for (auto it = groups.begin(); it != groups.end();) {
      auto& g = it->second;
      bool waited_on = !g.opening.empty();
      for (const auto& io : g.att)
        waited_on = waited_on || !io.waiting.empty();
      if (waited_on || now - g.touched < opts.group_ttl) {
        ++it;
        continue;
      }
      driver->close(it->first);
      names.erase(g.name);
      ++expired;
      it = groups.erase(it);
    }
  }

  msg::service_stats stats() {
    msg::service_stats s;
    s.groups_open = static_cast<std::uint32_t>(groups.size());
    s.compile_jobs = compile_jobs;
    s.exec_jobs = exec_jobs;
    s.waiting_jobs = waiting();
    s.groups_expired = expired;
    return s;
  }
};

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
