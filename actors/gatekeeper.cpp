#include "actors/gatekeeper.hpp"

#include "actors/verdicts.hpp"
#include "policy/code_extract.hpp"

#include <caf/all.hpp>

#include <array>
#include <cstdio>
#include <map>

namespace leap::actors {

namespace {

enum class phase { generating, compiling, executing, waiting_dcp, done };
enum stage { stage_compile = 0, stage_execute = 1, stage_generate = 2 };

struct turn_data {
  msg::turn_record rec;
  std::string code;      // extracted ("" when the completion had none)
  std::string feedback;  // the verdict's feedback text, shown on the next turn
};

struct attempt_state {
  std::vector<turn_data> turns;
  std::vector<int> pending_prompt; // the prompt of the turn being generated
  phase ph = phase::generating;
  std::uint64_t job = 0;           // compile or execute job in flight (0 = none sent yet)
  bool cancelled = false;
  int solved_turn = 0;
};

struct group_state {
  msg::group_start start;
  std::chrono::steady_clock::time_point t0;
  std::vector<attempt_state> att;
  int failed1 = 0, passed1 = 0;
  algo::dcp_decision decision = algo::dcp_decision::undecided;
  msg::group_result res;
};

struct gk_state {
  caf::event_based_actor* self = nullptr;
  gatekeeper_options opts;
  std::shared_ptr<const task_catalog> tasks;
  msg::generator_pool_actor gen;
  msg::compiler_pool_actor comp;
  msg::executor_pool_actor exec;
  caf::actor judge;
  std::map<std::uint64_t, group_state> groups;
  std::map<std::string, std::string> ref_exe, ref_error;
  using ref_cb = std::function<void(const std::string* exe, const std::string& error)>;
  std::map<std::string, std::vector<ref_cb>> ref_waiters;
  std::uint64_t next_id = 1;
  // sync mode: operations in flight in the current stage, and the later stages' queues.
  int outstanding = 0;
  bool flush_armed = false;
  std::array<std::vector<std::function<void()>>, 3> buffered;
  // Stage utilisation: jobs in flight per stage, integrated over time (capped at the workers).
  std::array<int, 3> in_stage{0, 0, 0};
  std::array<double, 3> busy{0, 0, 0};
  std::chrono::steady_clock::time_point t_start = std::chrono::steady_clock::now(), t_mark = t_start;
  void account() {
    auto now = std::chrono::steady_clock::now();
    double dt = std::chrono::duration<double>(now - t_mark).count();
    t_mark = now;
    const std::array<int, 3> cap{opts.compilers, opts.executors, opts.generators};
    for (int s = 0; s < 3; ++s)
      busy[static_cast<std::size_t>(s)] +=
        dt * std::min(in_stage[static_cast<std::size_t>(s)], cap[static_cast<std::size_t>(s)])
        / std::max(1, cap[static_cast<std::size_t>(s)]);
  }
  void enter(stage s) {
    account();
    ++in_stage[s];
  }
  void leave(stage s) {
    account();
    --in_stage[s];
  }

  // --- stage barriers (sync) or straight through (async) ---
  void run(stage s, std::function<void()> f) {
    if (!opts.sync) {
      f();
      return;
    }
    buffered[s].push_back(std::move(f));
  }
  void sent() {
    if (opts.sync)
      ++outstanding;
  }
  void replied() {
    if (opts.sync) {
      --outstanding;
      maybe_flush();
    }
  }
  void maybe_flush() {
    if (!opts.sync || !flush_armed)
      return;
    while (outstanding == 0) {
      bool ran = false;
      for (int s : {stage_compile, stage_execute, stage_generate}) {
        if (buffered[s].empty())
          continue;
        auto todo = std::move(buffered[s]);
        buffered[s].clear();
        for (auto& f : todo)
          f();
        ran = true;
        break;
      }
      if (!ran) {
        flush_armed = false; // idle: the next step's groups wait for their flush
        return;
      }
    }
  }

  static double since(const group_state& g) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - g.t0).count();
  }

  attempt_state* alive(std::uint64_t gid, std::size_t a) {
    auto it = groups.find(gid);
    if (it == groups.end())
      return nullptr;
    auto& at = it->second.att[a];
    if (at.cancelled || at.ph == phase::done)
      return nullptr;
    return &at;
  }

  // --- a group ---
  void start_group(const msg::group_start& gs) {
    auto t = tasks->find(gs.task);
    auto& g = groups[gs.group_id];
    g.start = gs;
    g.t0 = std::chrono::steady_clock::now();
    g.res.group_id = gs.group_id;
    g.res.task = gs.task;
    g.res.epoch = gs.epoch;
    g.res.index = gs.index;
    g.att.resize(static_cast<std::size_t>(opts.group_size));
    if (t == tasks->end()) {
      for (std::size_t a = 0; a < g.att.size(); ++a)
        drop(gs.group_id, a, "unknown task '" + gs.task + "'");
      return;
    }
    auto prompt = opts.encode_prompt(gs.task, {}, {});
    std::vector<std::size_t> all;
    for (std::size_t a = 0; a < g.att.size(); ++a) {
      g.att[a].pending_prompt = prompt;
      all.push_back(a);
    }
    generate(gs.group_id, all, {prompt}, opts.group_size);
  }

  void generate(std::uint64_t gid, std::vector<std::size_t> idxs,
                std::vector<std::vector<int>> prompts, int per_prompt) {
    run(stage_generate, [this, gid, idxs, prompts, per_prompt] {
      auto it = groups.find(gid);
      if (it == groups.end())
        return;
      msg::generate_request req;
      req.id = next_id++;
      req.group_id = gid;
      req.samples_per_prompt = per_prompt;
      req.temperature = opts.temperature;
      req.top_p = opts.top_p;
      std::size_t longest = 0;
      for (auto& p : prompts)
        longest = std::max(longest, p.size());
      req.max_new_tokens = std::max<int>(
        1, std::min<int>(opts.max_new_tokens, opts.max_seq_len - static_cast<int>(longest)));
      auto turn = it->second.att[idxs[0]].turns.size() + 1;
      req.seed = opts.seed * 0x9E3779B97F4A7C15ull + gid * 1000003ull + turn * 7919ull + idxs[0];
      req.prompts = std::move(prompts);
      sent();
      enter(stage_generate);
      self->request(gen, opts.generate_timeout, msg::generate_atom_v, std::move(req))
        .then(
          [this, gid, idxs](msg::generate_reply& r) {
            leave(stage_generate);
            on_generated(gid, idxs, r);
            replied();
          },
          [this, gid, idxs](caf::error& e) {
            leave(stage_generate);
            for (auto a : idxs)
              if (alive(gid, a))
                drop(gid, a, "generation failed: " + caf::to_string(e));
            replied();
          });
    });
  }

  // samples[k] belongs to attempt idxs[k] (one prompt x G on turn 1, a prompt each later).
  void on_generated(std::uint64_t gid, const std::vector<std::size_t>& idxs,
                    msg::generate_reply& r) {
    for (std::size_t k = 0; k < r.samples.size() && k < idxs.size(); ++k) {
      auto a = idxs[k];
      auto* at = alive(gid, a);
      if (!at)
        continue;
      auto& g = groups[gid];
      ++g.res.attempts;
      auto& s = r.samples[k];
      turn_data td;
      td.rec.prompt = at->pending_prompt;
      td.rec.completion = s.tokens;
      td.rec.logprobs = s.logprobs;
      td.rec.policy_version = r.policy_version;
      td.rec.t_generated = since(g);
      auto ids = s.tokens;
      if (!ids.empty() && ids.back() == opts.eos_id)
        ids.pop_back();
      auto ex = policy::extract_code(opts.decode(ids));
      td.code = ex.ok ? ex.code : std::string();
      at->turns.push_back(std::move(td));
      if (!ex.ok) {
        on_verdict(gid, a, no_code_verdict(g.start.task, opts.backend, ex.reason));
        continue;
      }
      compile(gid, a);
    }
  }

  void compile(std::uint64_t gid, std::size_t a) {
    groups[gid].att[a].ph = phase::compiling;
    run(stage_compile, [this, gid, a] {
      auto* at = alive(gid, a);
      if (!at)
        return;
      auto& g = groups[gid];
      at->job = next_id++;
      if (at->turns.size() >= 2)
        ++g.res.compiles_later_turns;
      msg::compile_request req{at->job, g.start.task, at->turns.back().code, opts.backend, false};
      sent();
      enter(stage_compile);
      self->request(comp, opts.compile_timeout, msg::compile_atom_v, std::move(req))
        .then(
          [this, gid, a](msg::compile_reply& r) {
            leave(stage_compile);
            on_compiled(gid, a, r);
            replied();
          },
          [this, gid, a](caf::error& e) {
            leave(stage_compile);
            if (alive(gid, a))
              drop(gid, a, "compile job failed: " + caf::to_string(e));
            replied();
          });
    });
  }

  void on_compiled(std::uint64_t gid, std::size_t a, msg::compile_reply& r) {
    auto* at = alive(gid, a);
    if (!at)
      return;
    auto& g = groups[gid];
    at->job = 0;
    if (r.cached)
      ++g.res.cache_hits;
    else
      ++g.res.compiles;
    if (r.status == "ok") {
      execute(gid, a, r.executable);
      return;
    }
    auto v = verdict_from_build(r, tasks->at(g.start.task), opts.backend);
    if (!v) {
      drop(gid, a, "compiling failed inside leap (" + r.status + "): " + r.diagnostics);
      return;
    }
    on_verdict(gid, a, *v);
  }

  void with_reference(const std::string& task, ref_cb cb) {
    if (auto it = ref_exe.find(task); it != ref_exe.end())
      return cb(&it->second, "");
    if (auto it = ref_error.find(task); it != ref_error.end())
      return cb(nullptr, it->second);
    auto& w = ref_waiters[task];
    w.push_back(std::move(cb));
    if (w.size() > 1)
      return;
    msg::compile_request req{next_id++, task, tasks->at(task).reference_source, opts.backend, true};
    auto finish = [this, task](const std::string* exe, const std::string& err) {
      if (exe)
        ref_exe[task] = *exe;
      else
        ref_error[task] = err;
      auto waiters = std::move(ref_waiters[task]);
      ref_waiters.erase(task);
      for (auto& f : waiters)
        f(exe ? &ref_exe[task] : nullptr, err);
    };
    self->request(comp, opts.compile_timeout, msg::compile_atom_v, std::move(req))
      .then(
        [finish, task](msg::compile_reply& r) {
          if (r.status == "ok")
            finish(&r.executable, "");
          else
            finish(nullptr, "the reference of task '" + task + "' does not build (" + r.status
                              + "): " + r.diagnostics);
        },
        [finish](caf::error& e) { finish(nullptr, "building the reference: " + caf::to_string(e)); });
  }

  void execute(std::uint64_t gid, std::size_t a, std::string exe) {
    groups[gid].att[a].ph = phase::executing;
    run(stage_execute, [this, gid, a, exe] {
      if (!alive(gid, a))
        return;
      sent();
      with_reference(groups[gid].start.task, [this, gid, a, exe](const std::string* ref,
                                                                 const std::string& err) {
        auto* at = alive(gid, a);
        if (!at) {
          replied();
          return;
        }
        if (!ref) {
          drop(gid, a, err);
          replied();
          return;
        }
        at->job = next_id++;
        msg::exec_request req{at->job, groups[gid].start.task, opts.backend, exe, *ref, false};
        enter(stage_execute);
        self->request(this->exec, opts.exec_timeout, msg::exec_atom_v, std::move(req))
          .then(
            [this, gid, a](msg::exec_reply& r) {
              leave(stage_execute);
              if (auto* at2 = alive(gid, a)) {
                at2->job = 0;
                on_verdict(gid, a, r.v);
              }
              replied();
            },
            [this, gid, a](caf::error& e) {
              leave(stage_execute);
              if (alive(gid, a))
                drop(gid, a, "execute job failed: " + caf::to_string(e));
              replied();
            });
      });
    });
  }

  // --- verdicts, DCP, next turns ---
  void on_verdict(std::uint64_t gid, std::size_t a, const env::verdict& v) {
    auto& g = groups[gid];
    auto& at = g.att[a];
    auto& td = at.turns.back();
    td.rec.status = env::to_string(v.st);
    td.rec.reason = v.reason;
    td.rec.timed = v.timed;
    td.rec.speedup = v.speedup;
    td.rec.t_verdict = since(g);
    td.feedback = v.feedback;
    const int turn = static_cast<int>(at.turns.size());
    const bool ok = v.st == env::status::correct;
    const bool multi = opts.max_turns > 1;
    if (ok) {
      at.solved_turn = turn;
      at.ph = phase::done;
    } else if (turn >= opts.max_turns) {
      at.ph = phase::done;
    } else if (turn == 1) {
      if (g.decision == algo::dcp_decision::expand)
        next_turns(gid, {a});
      else if (g.decision == algo::dcp_decision::undecided)
        at.ph = phase::waiting_dcp;
      else
        at.ph = phase::done;
    } else {
      next_turns(gid, {a});
    }
    if (turn == 1 && multi) {
      (ok ? g.passed1 : g.failed1)++;
      if (g.decision == algo::dcp_decision::undecided) {
        auto d = algo::decide(opts.dcp, opts.group_size, g.failed1, g.passed1);
        if (d != algo::dcp_decision::undecided)
          apply(gid, d);
      }
    }
    check_finished(gid);
  }

  void apply(std::uint64_t gid, algo::dcp_decision d) {
    auto& g = groups[gid];
    g.decision = d;
    std::vector<std::size_t> waiting;
    for (std::size_t a = 0; a < g.att.size(); ++a) {
      auto& at = g.att[a];
      if (at.ph == phase::waiting_dcp) {
        if (d == algo::dcp_decision::expand)
          waiting.push_back(a);
        else
          at.ph = phase::done;
      } else if (d != algo::dcp_decision::expand && !at.cancelled && at.ph != phase::done
                 && at.turns.size() <= 1) {
        cancel(gid, a);
      }
    }
    if (!waiting.empty())
      next_turns(gid, waiting);
  }

  // A straggler of a pruned group: its queued or running job is cancelled in its pool at once.
  void cancel(std::uint64_t gid, std::size_t a) {
    auto& g = groups[gid];
    auto& at = g.att[a];
    if (at.ph == phase::compiling && at.job != 0)
      self->send(comp, msg::cancel_atom_v, at.job);
    else if (at.ph == phase::executing && at.job != 0)
      self->send(exec, msg::cancel_atom_v, at.job);
    ++g.res.cancelled;
    at.cancelled = true;
    at.ph = phase::done;
  }

  void next_turns(std::uint64_t gid, const std::vector<std::size_t>& idxs) {
    auto& g = groups[gid];
    std::vector<std::size_t> go;
    std::vector<std::vector<int>> prompts;
    for (auto a : idxs) {
      auto& at = g.att[a];
      std::vector<std::string> codes, feedbacks;
      for (auto& t : at.turns) {
        codes.push_back(t.code);
        feedbacks.push_back(t.feedback);
      }
      auto p = opts.encode_prompt(g.start.task, codes, feedbacks);
      if (static_cast<int>(p.size()) + 16 > opts.max_seq_len) {
        at.ph = phase::done; // no room left to answer
        continue;
      }
      g.res.activated = true;
      at.ph = phase::generating;
      at.pending_prompt = p;
      go.push_back(a);
      prompts.push_back(std::move(p));
    }
    if (!go.empty())
      generate(gid, go, std::move(prompts), 1);
  }

  void drop(std::uint64_t gid, std::size_t a, const std::string& why) {
    auto& g = groups[gid];
    auto& at = g.att[a];
    std::fprintf(stderr, "leap: an attempt at '%s' was dropped: %s\n", g.start.task.c_str(),
                 why.c_str());
    at.cancelled = true;
    at.ph = phase::done;
    check_finished(gid);
  }

  void check_finished(std::uint64_t gid) {
    auto it = groups.find(gid);
    if (it == groups.end())
      return;
    auto& g = it->second;
    for (auto& at : g.att)
      if (at.ph != phase::done)
        return;
    auto res = std::move(g.res);
    res.dcp = opts.max_turns > 1 ? algo::to_string(g.decision) : "single_turn";
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g.t0).count();
    for (auto& at : g.att) {
      msg::trajectory_record tr;
      tr.solved_turn = at.solved_turn;
      tr.cancelled = at.cancelled;
      for (auto& t : at.turns)
        tr.turns.push_back(std::move(t.rec));
      res.trajectories.push_back(std::move(tr));
    }
    groups.erase(it);
    self->send(judge, msg::finished_atom_v, std::move(res));
  }
};

using gk_actor = caf::stateful_actor<gk_state>;

caf::behavior gatekeeper(gk_actor* self, gatekeeper_options opts,
                         std::shared_ptr<const task_catalog> tasks,
                         msg::generator_pool_actor gen, msg::compiler_pool_actor comp,
                         msg::executor_pool_actor exec, caf::actor judge) {
  auto& s = self->state;
  s.self = self;
  s.opts = std::move(opts);
  s.tasks = std::move(tasks);
  s.gen = std::move(gen);
  s.comp = std::move(comp);
  s.exec = std::move(exec);
  s.judge = std::move(judge);
  return {
    [self](msg::group_atom, msg::group_start& gs) { self->state.start_group(gs); },
    [self](msg::flush_atom) {
      self->state.flush_armed = true;
      self->state.maybe_flush();
    },
    [self](msg::stats_atom) -> std::vector<double> {
      auto& st = self->state;
      st.account();
      double elapsed = std::chrono::duration<double>(st.t_mark - st.t_start).count();
      return {elapsed, st.busy[stage_generate], st.busy[stage_compile], st.busy[stage_execute]};
    },
  };
}

} // namespace

caf::actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_options opts,
                            std::shared_ptr<const task_catalog> tasks,
                            msg::generator_pool_actor generators,
                            msg::compiler_pool_actor compilers,
                            msg::executor_pool_actor executors, caf::actor judge) {
  return sys.spawn(gatekeeper, std::move(opts), std::move(tasks), std::move(generators),
                   std::move(compilers), std::move(executors), std::move(judge));
}

} // namespace leap::actors
