#include "actors/gatekeeper.hpp"

#include "actors/reference_cache.hpp"
#include "actors/stage_barrier.hpp"
#include "actors/stage_meter.hpp"
#include "actors/verdicts.hpp"
#include "messages/error_text.hpp"
#include "policy/code_extract.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <deque>
#include <map>

namespace leap::actors {

namespace {

using algo::attempt_phase;
using algo::rollout_action;
using clock_type = std::chrono::steady_clock;

// What the rollout does not keep: the tokens and timings of every turn, the prompt being
// sampled, the job in flight and the built executable.
struct attempt_io {
  std::vector<msg::turn_record> turns; // one per rollout turn
  std::vector<int> prompt;
  std::uint64_t job = 0;
  std::string executable;
};

struct group_state {
  msg::group_start start;
  const env::task_spec* task = nullptr;
  clock_type::time_point t0;
  algo::rollout r;
  std::vector<attempt_io> io;
  msg::group_result counts; // attempts, compiles, cache hits, cancelled, later-turn compiles
  explicit group_state(const algo::rollout_config& c) : r(c) {}
};

struct gk_state {
  msg::gatekeeper_actor::pointer self = nullptr;
  gatekeeper_options opts;
  std::shared_ptr<const task_catalog> tasks;
  msg::generator_pool_actor gen;
  msg::compiler_pool_actor comp;
  msg::executor_pool_actor exec;
  msg::judge_actor judge;
  std::map<std::uint64_t, group_state> groups;
  reference_cache refs;
  std::unique_ptr<stage_meter> meter;
  std::unique_ptr<stage_barrier> barrier;
  std::uint64_t next_id = 1;

  group_state* find(std::uint64_t gid) {
    auto it = groups.find(gid);
    return it == groups.end() ? nullptr : &it->second;
  }

  // The attempt still waits for a reply of this phase.
  group_state* awaiting(std::uint64_t gid, int a, attempt_phase ph) {
    auto* g = find(gid);
    if (!g)
      return nullptr;
    const auto& at = g->r.attempt(a);
    return at.end == algo::attempt_end::none && at.phase == ph ? g : nullptr;
  }

  static double since(const group_state& g) {
    return std::chrono::duration<double>(clock_type::now() - g.t0).count();
  }

  std::string render(const caf::error& e) { return msg::error_text(e, self->system()); }

  // --- a group ---
  void start_group(const msg::group_start& gs) {
    auto [it, fresh] = groups.try_emplace(gs.group_id, opts.rollout);
    if (!fresh)
      return; // admitted twice: the first admission stands
    auto& g = it->second;
    g.start = gs;
    g.t0 = clock_type::now();
    g.io.resize(static_cast<std::size_t>(std::max(0, opts.rollout.group_size)));
    auto t = tasks->find(gs.task);
    g.task = t == tasks->end() ? nullptr : &t->second;
    auto acts = g.r.start();
    if (!g.task) {
      acts.clear();
      for (int a = 0; a < opts.rollout.group_size; ++a)
        append(acts, g.r.dropped(a, "unknown task '" + gs.task + "'"));
    }
    perform(gs.group_id, std::move(acts));
  }

  static void append(std::vector<rollout_action>& to, std::vector<rollout_action> more) {
    to.insert(to.end(), more.begin(), more.end());
  }

  // Carries out the rollout's actions in order; events they cause append more.
  void perform(std::uint64_t gid, std::vector<rollout_action> acts) {
    std::deque<rollout_action> todo(acts.begin(), acts.end());
    while (!todo.empty()) {
      auto* g = find(gid);
      if (!g)
        return;
      auto act = std::move(todo.front());
      todo.pop_front();
      switch (act.what) {
        case rollout_action::kind::generate: generate(gid, *g, act, todo); break;
        case rollout_action::kind::compile: compile(gid, act.attempts.at(0)); break;
        case rollout_action::kind::execute: execute(gid, act.attempts.at(0)); break;
        case rollout_action::kind::cancel: cancel(*g, act.attempts.at(0), act.stage); break;
        case rollout_action::kind::finished: finish(gid); return;
      }
    }
  }

  void drop(std::uint64_t gid, int a, const std::string& why) {
    auto* g = find(gid);
    if (!g)
      return;
    std::fprintf(stderr, "leap: an attempt at '%s' was dropped: %s\n", g->start.task.c_str(),
                 why.c_str());
    perform(gid, g->r.dropped(a, why));
  }

  // --- generation ---
  void generate(std::uint64_t gid, group_state& g, const rollout_action& act,
                std::deque<rollout_action>& todo) {
    std::vector<int> idxs;
    std::vector<std::vector<int>> prompts;
    auto no_room = [&](int a) {
      auto more = g.r.no_room(a);
      todo.insert(todo.end(), more.begin(), more.end());
    };
    const bool first = act.turn == 1;
    for (int a : act.attempts) {
      const auto& at = g.r.attempt(a);
      std::vector<std::string> codes, feedbacks;
      for (const auto& t : at.turns) {
        codes.push_back(t.code);
        feedbacks.push_back(t.feedback);
      }
      if (first && !prompts.empty()) { // turn 1: one prompt for the whole group
        g.io[static_cast<std::size_t>(a)].prompt = prompts.front();
        idxs.push_back(a);
        continue;
      }
      auto p = opts.codec.encode(g.start.task, codes, feedbacks);
      if (static_cast<int>(p.size()) + 16 > opts.max_seq_len) {
        no_room(a);
        continue;
      }
      g.io[static_cast<std::size_t>(a)].prompt = p;
      idxs.push_back(a);
      prompts.push_back(std::move(p));
    }
    if (idxs.empty())
      return;
    msg::generate_request req;
    req.id = next_id++;
    req.group_id = gid;
    req.samples_per_prompt = first ? static_cast<std::int32_t>(idxs.size()) : 1;
    req.temperature = opts.temperature;
    req.top_p = opts.top_p;
    std::size_t longest = 0;
    for (auto& p : prompts)
      longest = std::max(longest, p.size());
    req.max_new_tokens = std::max<int>(
      1, std::min<int>(opts.max_new_tokens, opts.max_seq_len - static_cast<int>(longest)));
    req.seed = opts.seed * 0x9E3779B97F4A7C15ull + gid * 1000003ull
               + static_cast<std::uint64_t>(act.turn) * 7919ull + static_cast<std::uint64_t>(idxs[0]);
    req.prompts = std::move(prompts);
    barrier->submit(stage::generate, [this, gid, idxs, req = std::move(req)]() mutable {
      if (!find(gid))
        return;
      barrier->sent();
      meter->enter(stage::generate);
      self->request(gen, opts.generate_timeout, msg::generate_atom_v, std::move(req))
        .then(
          [this, gid, idxs](msg::generate_reply& rep) {
            meter->leave(stage::generate);
            on_generated(gid, idxs, rep);
            barrier->replied();
          },
          [this, gid, idxs](caf::error& e) {
            meter->leave(stage::generate);
            auto why = "generation failed: " + render(e);
            for (int a : idxs)
              drop(gid, a, why);
            barrier->replied();
          });
    });
  }

  // samples[k] belongs to attempt idxs[k] (one prompt x G on turn 1, a prompt each later).
  void on_generated(std::uint64_t gid, const std::vector<int>& idxs, msg::generate_reply& rep) {
    std::vector<rollout_action> acts;
    for (std::size_t k = 0; k < idxs.size(); ++k) {
      const int a = idxs[k];
      auto* g = awaiting(gid, a, attempt_phase::generating);
      if (!g)
        continue;
      if (k >= rep.samples.size()) {
        append(acts, g->r.dropped(a, "the generator returned " + std::to_string(rep.samples.size())
                                       + " samples for " + std::to_string(idxs.size())));
        continue;
      }
      auto& s = rep.samples[k];
      auto& io = g->io[static_cast<std::size_t>(a)];
      ++g->counts.attempts;
      msg::turn_record rec;
      rec.prompt = io.prompt;
      rec.completion = s.tokens;
      rec.logprobs = s.logprobs;
      rec.policy_version = rep.policy_version;
      rec.t_generated = since(*g);
      io.turns.push_back(std::move(rec));
      auto ids = s.tokens;
      if (!ids.empty() && ids.back() == opts.eos_id)
        ids.pop_back();
      auto ex = policy::extract_code(opts.codec.decode(ids));
      const auto tokens = static_cast<long long>(s.tokens.size());
      if (ex.ok) {
        append(acts, g->r.sampled(a, ex.code, tokens));
      } else {
        auto v = no_code_verdict(g->start.task, opts.backend, ex.reason);
        record(*g, a, v);
        append(acts, g->r.sampled_without_code(a, tokens, v.feedback));
      }
    }
    perform(gid, std::move(acts));
  }

  // --- compilation ---
  void compile(std::uint64_t gid, int a) {
    barrier->submit(stage::compile, [this, gid, a] {
      auto* g = awaiting(gid, a, attempt_phase::compiling);
      if (!g)
        return;
      const auto& at = g->r.attempt(a);
      if (at.turns.size() >= 2)
        ++g->counts.compiles_later_turns;
      auto job = next_id++;
      g->io[static_cast<std::size_t>(a)].job = job;
      msg::compile_request req{job, g->start.task, at.turns.back().code, opts.backend, false};
      barrier->sent();
      meter->enter(stage::compile);
      self->request(comp, opts.compile_timeout, msg::compile_atom_v, std::move(req))
        .then(
          [this, gid, a](msg::compile_reply& r) {
            meter->leave(stage::compile);
            on_compiled(gid, a, r);
            barrier->replied();
          },
          [this, gid, a](caf::error& e) {
            meter->leave(stage::compile);
            if (awaiting(gid, a, attempt_phase::compiling))
              drop(gid, a, "compile job failed: " + render(e));
            barrier->replied();
          });
    });
  }

  void on_compiled(std::uint64_t gid, int a, msg::compile_reply& r) {
    auto* g = awaiting(gid, a, attempt_phase::compiling);
    if (!g)
      return;
    auto& io = g->io[static_cast<std::size_t>(a)];
    io.job = 0;
    if (r.cached)
      ++g->counts.cache_hits;
    else
      ++g->counts.compiles;
    if (r.status == env::build_status::ok) {
      io.executable = r.executable;
      perform(gid, g->r.built(a));
      return;
    }
    auto v = verdict_from_build(r, *g->task, opts.backend);
    if (!v) {
      drop(gid, a, std::string("the build gave no verdict (") + env::to_string(r.status)
                     + "): " + r.diagnostics);
      return;
    }
    judge_turn(gid, a, *v);
  }

  // --- execution ---
  void execute(std::uint64_t gid, int a) {
    barrier->submit(stage::execute, [this, gid, a] {
      auto* g = awaiting(gid, a, attempt_phase::executing);
      if (!g)
        return;
      barrier->sent();
      with_reference(g->start.task, [this, gid, a](const result<std::string>& ref) {
        auto* g2 = awaiting(gid, a, attempt_phase::executing);
        if (!g2) {
          barrier->replied();
          return;
        }
        if (!ref) {
          drop(gid, a, ref.message());
          barrier->replied();
          return;
        }
        auto& io = g2->io[static_cast<std::size_t>(a)];
        io.job = next_id++;
        msg::exec_request req{io.job, g2->start.task, opts.backend, io.executable, *ref, false};
        meter->enter(stage::execute);
        self->request(exec, opts.exec_timeout, msg::exec_atom_v, std::move(req))
          .then(
            [this, gid, a](msg::exec_reply& r) {
              meter->leave(stage::execute);
              if (auto* g3 = awaiting(gid, a, attempt_phase::executing)) {
                g3->io[static_cast<std::size_t>(a)].job = 0;
                judge_turn(gid, a, r.v);
              }
              barrier->replied();
            },
            [this, gid, a](caf::error& e) {
              meter->leave(stage::execute);
              if (awaiting(gid, a, attempt_phase::executing))
                drop(gid, a, "execute job failed: " + render(e));
              barrier->replied();
            });
      });
    });
  }

  void with_reference(const std::string& task, reference_cache::callback cb) {
    if (!refs.request(task, std::move(cb)))
      return;
    msg::compile_request req{next_id++, task, tasks->at(task).reference_source, opts.backend, true};
    self->request(comp, opts.compile_timeout, msg::compile_atom_v, std::move(req))
      .then(
        [this, task](msg::compile_reply& r) {
          if (r.status == env::build_status::ok)
            refs.built(task, r.executable);
          else
            refs.failed(task,
                        "the reference of task '" + task + "' does not build ("
                          + env::to_string(r.status) + "): " + r.diagnostics,
                        r.status != env::build_status::cancelled);
        },
        [this, task](caf::error& e) {
          refs.failed(task, "building the reference of task '" + task + "' failed: " + render(e),
                      false);
        });
  }

  // --- verdicts ---
  void record(group_state& g, int a, const env::verdict& v) {
    auto& rec = g.io[static_cast<std::size_t>(a)].turns.back();
    rec.judged = true;
    rec.status = v.st;
    rec.reason = v.reason;
    rec.timed = v.timed;
    rec.speedup = v.speedup;
    rec.t_verdict = since(g);
  }

  void judge_turn(std::uint64_t gid, int a, const env::verdict& v) {
    auto* g = find(gid);
    if (!g)
      return;
    record(*g, a, v);
    algo::turn_judgement j;
    j.verdict = v.emulation_unsupported ? algo::turn_verdict::unsupported
                : v.st == env::status::correct ? algo::turn_verdict::correct
                                               : algo::turn_verdict::failed;
    j.feedback = v.feedback;
    j.timed = v.timed;
    j.speedup = v.speedup;
    perform(gid, g->r.judged(a, j));
  }

  // A straggler of a pruned group: its queued or running job is cancelled in its pool at once.
  void cancel(group_state& g, int a, attempt_phase where) {
    auto& io = g.io[static_cast<std::size_t>(a)];
    if (io.job != 0) {
      if (where == attempt_phase::compiling)
        self->send(comp, msg::cancel_atom_v, io.job);
      else if (where == attempt_phase::executing)
        self->send(exec, msg::cancel_atom_v, io.job);
    }
    ++g.counts.cancelled;
  }

  void finish(std::uint64_t gid) {
    auto it = groups.find(gid);
    if (it == groups.end())
      return;
    auto& g = it->second;
    msg::group_result res = std::move(g.counts);
    res.group_id = gid;
    res.task = g.start.task;
    res.epoch = g.start.epoch;
    res.index = g.start.index;
    res.dcp = g.r.decision();
    res.activated = g.r.activated();
    res.seconds = since(g);
    const auto& atts = g.r.attempts();
    for (std::size_t a = 0; a < atts.size(); ++a) {
      msg::trajectory_record tr;
      tr.solved_turn = atts[a].solved_turn;
      tr.end = atts[a].end;
      tr.end_reason = atts[a].end_reason;
      tr.turns = std::move(g.io[a].turns);
      res.trajectories.push_back(std::move(tr));
    }
    groups.erase(it);
    self->send(judge, msg::finished_atom_v, std::move(res));
  }
};

using gk_actor = msg::gatekeeper_actor::stateful_pointer<gk_state>;

msg::gatekeeper_actor::behavior_type gatekeeper(gk_actor self, gatekeeper_options opts,
                                                std::shared_ptr<const task_catalog> tasks,
                                                msg::generator_pool_actor gen,
                                                msg::compiler_pool_actor comp,
                                                msg::executor_pool_actor exec,
                                                msg::judge_actor judge) {
  auto& s = self->state;
  s.self = self;
  s.meter = std::make_unique<stage_meter>(opts.generators, opts.compilers, opts.executors);
  s.barrier = std::make_unique<stage_barrier>(opts.mode == msg::train_mode::sync);
  s.opts = std::move(opts);
  s.tasks = std::move(tasks);
  s.gen = std::move(gen);
  s.comp = std::move(comp);
  s.exec = std::move(exec);
  s.judge = std::move(judge);
  return {
    [self](msg::group_atom, msg::group_start& gs) { self->state.start_group(gs); },
    [self](msg::flush_atom) { self->state.barrier->arm(); },
    [self](msg::stats_atom) -> msg::stage_usage { return self->state.meter->usage(); },
  };
}

} // namespace

msg::gatekeeper_actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_options opts,
                                       std::shared_ptr<const task_catalog> tasks,
                                       msg::generator_pool_actor generators,
                                       msg::compiler_pool_actor compilers,
                                       msg::executor_pool_actor executors, msg::judge_actor judge) {
  return sys.spawn(gatekeeper, std::move(opts), std::move(tasks), std::move(generators),
                   std::move(compilers), std::move(executors), std::move(judge));
}

} // namespace leap::actors
