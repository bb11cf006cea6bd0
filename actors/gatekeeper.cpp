#include "actors/gatekeeper.hpp"

#include "actors/edit_answer.hpp"
#include "actors/group_record.hpp"
#include "actors/reference_cache.hpp"
#include "actors/stage_barrier.hpp"
#include "actors/stage_meter.hpp"
#include "actors/verdicts.hpp"
#include "messages/error_text.hpp"
#include "policy/code_edit.hpp"
#include "policy/code_extract.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <deque>
#include <map>

namespace leap::actors {

namespace {

// The code of a sampled answer: SEARCH/REPLACE edits apply to the attempt's latest code
// (edit_answer.hpp), anything else is extracted as a file.
policy::extracted code_of(const std::string& text, const std::vector<algo::rollout_turn>& turns) {
  auto applied = policy::has_edits(text) ? apply_edit_answer(turns, text) : std::nullopt;
  if (!applied)
    return policy::extract_code(text);
  policy::extracted ex;
  ex.ok = applied->ok();
  if (ex.ok)
    ex.code = std::move(**applied);
  else
    ex.reason = applied->message();
  return ex;
}

using algo::attempt_phase;
using algo::rollout_action;

struct group_state {
  algo::rollout r;
  group_record rec;
  const env::task_spec* task = nullptr;
  group_state(const algo::rollout_config& c, const msg::group_start& gs)
      : r(c), rec(gs, c.group_size) {}
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

  std::string render(const caf::error& e) { return msg::error_text(e, self->system()); }

  // --- a group ---
  void start_group(const msg::group_start& gs) {
    auto [it, fresh] = groups.try_emplace(gs.group_id, opts.rollout, gs);
    if (!fresh)
      return; // admitted twice: the first admission stands
    auto& g = it->second;
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
    std::deque<rollout_action> queue(acts.begin(), acts.end());
    while (!queue.empty()) {
      auto* g = find(gid);
      if (!g)
        return;
      auto act = std::move(queue.front());
      queue.pop_front();
      switch (act.what) {
        case rollout_action::kind::generate: generate(gid, *g, act, queue); break;
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
    std::fprintf(stderr, "leap: an attempt at '%s' was dropped: %s\n", g->rec.start().task.c_str(),
                 why.c_str());
    perform(gid, g->r.dropped(a, why));
  }

  // --- generation ---
  // `queue`: perform()'s actions still to carry out; an attempt without room for its prompt
  // ends here, and what that causes joins the queue.
  void generate(std::uint64_t gid, group_state& g, const rollout_action& act,
                std::deque<rollout_action>& queue) {
    std::vector<int> idxs;
    std::vector<std::vector<int>> prompts;
    auto no_room = [&](int a) {
      auto more = g.r.no_room(a);
      queue.insert(queue.end(), more.begin(), more.end());
    };
    const bool first = act.turn == 1;
    for (int a : act.attempts) {
      if (first && !prompts.empty()) { // turn 1: one prompt for the whole group
        g.rec.io(a).prompt = prompts.front();
        idxs.push_back(a);
        continue;
      }
      std::vector<std::string> codes, feedbacks;
      for (const auto& t : g.r.attempt(a).turns) {
        codes.push_back(t.code);
        feedbacks.push_back(t.feedback);
      }
      auto p = opts.codec.encode(g.rec.start().task, codes, feedbacks);
      if (static_cast<int>(p.size()) + 16 > opts.max_seq_len) {
        no_room(a);
        continue;
      }
      g.rec.io(a).prompt = p;
      idxs.push_back(a);
      prompts.push_back(std::move(p));
    }
    if (idxs.empty())
      return;
    msg::generate_request req;
    req.id = next_id++;
    req.group_id = gid;
    req.priority = gid; // older groups' turns first
    req.samples_per_prompt = first ? static_cast<std::int32_t>(idxs.size()) : 1;
    req.temperature = opts.temperature;
    req.top_p = opts.top_p;
    std::size_t longest = 0;
    for (auto& p : prompts)
      longest = std::max(longest, p.size());
    req.max_new_tokens = std::max<int>(
      1, std::min<int>(opts.max_new_tokens, opts.max_seq_len - static_cast<int>(longest)));
    req.seed = opts.seed * 0x9E3779B97F4A7C15ull + gid * 1000003ull
               + static_cast<std::uint64_t>(act.turn) * 7919ull
               + static_cast<std::uint64_t>(idxs[0]);
    req.prompts = std::move(prompts);
    barrier->submit(stage::generate, [this, gid, idxs, req = std::move(req)]() mutable {
      if (!find(gid))
        return;
      barrier->sent();
      metered<msg::generate_reply>(
        stage::generate, gen, opts.generate_timeout, msg::generate_atom_v, std::move(req),
        [this, gid, idxs](msg::generate_reply& rep) { on_generated(gid, idxs, rep); },
        [this, gid, idxs](const std::string& why) {
          for (int a : idxs)
            drop(gid, a, "generation failed: " + why);
        });
    });
  }

  // One stage's request, metered; `ok` or `failed` (the pool's error text) runs with its
  // answer, then the barrier learns that one request fewer is out.
  template <class Reply, class Handle, class Atom, class Request, class Ok>
  void metered(stage s, const Handle& to, std::chrono::milliseconds timeout, Atom atom,
               Request req, Ok ok, std::function<void(const std::string&)> failed) {
    meter->enter(s);
    self->request(to, timeout, atom, std::move(req))
      .then(
        [this, s, ok](Reply& reply) mutable {
          meter->leave(s);
          ok(reply);
          barrier->replied();
        },
        [this, s, failed](caf::error& e) {
          meter->leave(s);
          failed(render(e));
          barrier->replied();
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
      g->rec.sampled(a, s, rep.policy_version);
      auto ids = s.tokens;
      if (!ids.empty() && ids.back() == opts.eos_id)
        ids.pop_back();
      auto ex = code_of(opts.codec.decode(ids), g->r.attempt(a).turns);
      const auto tokens = static_cast<long long>(s.tokens.size());
      if (ex.ok) {
        append(acts, g->r.sampled(a, ex.code, tokens));
      } else {
        auto v = no_code_verdict(g->rec.start().task, opts.backend, ex.reason);
        g->rec.judged(a, v);
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
        ++g->rec.counts().compiles_later_turns;
      auto job = next_id++;
      g->rec.io(a).job = job;
      // Older groups first (see msg::compile_request::priority): the learner waits for them.
      msg::compile_request req{job, g->rec.start().task, at.turns.back().code, opts.backend,
                               false, gid};
      barrier->sent();
      metered<msg::compile_reply>(
        stage::compile, comp, opts.compile_timeout, msg::compile_atom_v, std::move(req),
        [this, gid, a](msg::compile_reply& r) { on_compiled(gid, a, r); },
        [this, gid, a](const std::string& why) {
          if (awaiting(gid, a, attempt_phase::compiling))
            drop(gid, a, "compile job failed: " + why);
        });
    });
  }

  void on_compiled(std::uint64_t gid, int a, msg::compile_reply& r) {
    auto* g = awaiting(gid, a, attempt_phase::compiling);
    if (!g)
      return;
    auto& io = g->rec.io(a);
    io.job = 0;
    if (r.cached)
      ++g->rec.counts().cache_hits;
    else
      ++g->rec.counts().compiles;
    if (r.status == env::build_status::ok) {
      io.build = r.key;
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
      with_reference(g->rec.start().task, [this, gid, a](const result<std::string>& ref) {
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
        auto& io = g2->rec.io(a);
        io.job = next_id++;
        msg::exec_request req{io.job, g2->rec.start().task, opts.backend, io.build, *ref,
                              false, gid};
        metered<msg::exec_reply>(
          stage::execute, exec, opts.exec_timeout, msg::exec_atom_v, std::move(req),
          [this, gid, a](msg::exec_reply& r) {
            if (auto* g3 = awaiting(gid, a, attempt_phase::executing)) {
              g3->rec.io(a).job = 0;
              judge_turn(gid, a, r.v);
            }
          },
          [this, gid, a](const std::string& why) {
            if (awaiting(gid, a, attempt_phase::executing))
              drop(gid, a, "execute job failed: " + why);
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
          refs.build_answered(task, r.status, r.key, r.diagnostics);
        },
        [this, task](caf::error& e) { refs.build_lost(task, render(e)); });
  }

  // --- verdicts ---
  void judge_turn(std::uint64_t gid, int a, const env::verdict& v) {
    auto* g = find(gid);
    if (!g)
      return;
    g->rec.judged(a, v);
    perform(gid, g->r.judged(a, judgement_of(v)));
  }

  // A straggler of a pruned group: its queued or running job is cancelled in its pool at once.
  void cancel(group_state& g, int a, attempt_phase where) {
    auto& io = g.rec.io(a);
    if (io.job != 0) {
      if (where == attempt_phase::compiling)
        self->send(comp, msg::cancel_atom_v, io.job);
      else if (where == attempt_phase::executing)
        self->send(exec, msg::cancel_atom_v, io.job);
    }
    ++g.rec.counts().cancelled;
  }

  void finish(std::uint64_t gid) {
    auto it = groups.find(gid);
    if (it == groups.end())
      return;
    auto res = it->second.rec.finish(it->second.r);
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
