#include "actors/gatekeeper.hpp"

#include "actors/edit_answer.hpp"
#include "actors/group_record.hpp"
#include "actors/rollout_driver.hpp"
#include "actors/stage_barrier.hpp"
#include "actors/stage_meter.hpp"
#include "actors/verdicts.hpp"
#include "messages/error_text.hpp"
#include "policy/text/code_edit.hpp"
#include "policy/text/code_extract.hpp"

#include <caf/all.hpp>

#include <cstdio>
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

struct gk_state {
  msg::gatekeeper_actor::pointer self = nullptr;
  gatekeeper_options opts;
  std::shared_ptr<const task_catalog> tasks;
  msg::generator_pool_actor gen;
  msg::compiler_pool_actor comp;
  msg::executor_pool_actor exec;
  msg::judge_actor judge;
  std::map<std::uint64_t, group_record> groups; // the rollouts themselves are in `driver`
  std::unique_ptr<rollout_driver> driver;
  std::unique_ptr<stage_meter> meter;
  std::unique_ptr<stage_barrier> barrier;
  std::uint64_t next_id = 1;

  std::string render(const caf::error& e) { return msg::error_text(e, self->system()); }

  void init() {
    rollout_driver_options o;
    o.backend = opts.backend;
    o.older_groups_first = true; // the learner waits for the oldest groups
    o.reference_at_open = false; // a task whose attempts all fail to build needs none
    job_port port;
    // Sync mode: a job waits behind its stage's barrier; it goes out if its attempt still wants it.
    port.admit = [this](std::uint64_t gid, int a, attempt_phase ph, std::function<void()> start) {
      barrier->submit(ph == attempt_phase::compiling ? stage::compile : stage::execute,
                      [this, gid, a, ph, start = std::move(start)] {
                        if (!driver->awaiting(gid, a, ph))
                          return;
                        barrier->sent();
                        start();
                      });
    };
    port.not_sent = [this] { barrier->replied(); };
    port.compile = [this](std::uint64_t gid, int a, msg::compile_request req,
                          job_port::done_fn<msg::compile_reply> done) {
      if (a < 0) // a reference build: neither metered nor held
        return forward(comp, opts.compile_timeout, msg::compile_atom_v, std::move(req),
                       std::move(done));
      if (driver->rollout(gid).attempt(a).turns.size() >= 2)
        ++groups.at(gid).counts().compiles_later_turns;
      metered(stage::compile, comp, opts.compile_timeout, msg::compile_atom_v, std::move(req),
              std::move(done));
    };
    port.execute = [this](std::uint64_t, int, msg::exec_request req,
                          job_port::done_fn<msg::exec_reply> done) {
      metered(stage::execute, exec, opts.exec_timeout, msg::exec_atom_v, std::move(req),
              std::move(done));
    };
    port.cancel = [this](attempt_phase where, std::uint64_t job) {
      if (where == attempt_phase::compiling)
        self->send(comp, msg::cancel_atom_v, job);
      else if (where == attempt_phase::executing)
        self->send(exec, msg::cancel_atom_v, job);
    };
    driver_events ev;
    ev.generate = [this](std::uint64_t gid, const rollout_action& act,
                         std::vector<rollout_action>& more) { generate(gid, act, more); };
    ev.built = [this](std::uint64_t gid, int, const msg::compile_reply& r) {
      if (r.cached)
        ++groups.at(gid).counts().cache_hits;
      else
        ++groups.at(gid).counts().compiles;
    };
    ev.judged = [this](std::uint64_t gid, int a, const env::verdict& v, const msg::exec_reply*) {
      groups.at(gid).judged(a, v);
    };
    ev.dropped = [this](std::uint64_t gid, int, const std::string& why) {
      std::fprintf(stderr, "leap: an attempt at '%s' was dropped: %s\n",
                   groups.at(gid).start().task.c_str(), why.c_str());
    };
    ev.cancelled = [this](std::uint64_t gid, int) { ++groups.at(gid).counts().cancelled; };
    ev.finished = [this](std::uint64_t gid) { finish(gid); };
    driver = std::make_unique<rollout_driver>(o, std::move(port), std::move(ev));
  }

  // --- a group ---
  void start_group(const msg::group_start& gs) {
    if (groups.count(gs.group_id))
      return; // admitted twice: the first admission stands
    auto& rec = groups.try_emplace(gs.group_id, gs, opts.rollout.group_size).first->second;
    auto t = tasks->find(gs.task);
    if (t == tasks->end()) { // every attempt lost at once; the judge still gets the group
      algo::rollout r(opts.rollout);
      r.start();
      for (int a = 0; a < opts.rollout.group_size; ++a)
        r.dropped(a, "unknown task '" + gs.task + "'");
      auto res = rec.finish(r);
      groups.erase(gs.group_id);
      self->send(judge, msg::finished_atom_v, std::move(res));
      return;
    }
    driver->open(gs.group_id, opts.rollout, t->second);
    driver->perform(gs.group_id, driver->rollout(gs.group_id).start());
  }

  // --- generation ---
  // `more`: what an attempt without room for its prompt causes (it ends here).
  void generate(std::uint64_t gid, const rollout_action& act, std::vector<rollout_action>& more) {
    auto& r = driver->rollout(gid);
    auto& rec = groups.at(gid);
    std::vector<int> idxs;
    std::vector<std::vector<int>> prompts;
    const bool first = act.turn == 1;
    for (int a : act.attempts) {
      if (first && !prompts.empty()) { // turn 1: one prompt for the whole group
        rec.io(a).prompt = prompts.front();
        idxs.push_back(a);
        continue;
      }
      std::vector<std::string> codes, feedbacks;
      for (const auto& t : r.attempt(a).turns) {
        codes.push_back(t.code);
        feedbacks.push_back(t.feedback);
      }
      auto p = opts.codec.encode(rec.start().task, codes, feedbacks);
      if (static_cast<int>(p.size()) + 16 > opts.max_seq_len) {
        auto ended = r.no_room(a);
        more.insert(more.end(), ended.begin(), ended.end());
        continue;
      }
      rec.io(a).prompt = p;
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
      if (!driver->contains(gid))
        return;
      barrier->sent();
      metered(stage::generate, gen, opts.generate_timeout, msg::generate_atom_v, std::move(req),
              job_port::done_fn<msg::generate_reply>(
                [this, gid, idxs](result<msg::generate_reply> rep) {
                  if (rep)
                    return on_generated(gid, idxs, *rep);
                  for (int a : idxs)
                    if (driver->awaiting(gid, a, attempt_phase::generating))
                      driver->drop(gid, a, "generation failed: " + rep.message());
                }));
    });
  }

  // A request to a pool, answered on this thread with its reply or its error's text.
  template <class Reply, class Handle, class Atom, class Request>
  void forward(const Handle& to, std::chrono::milliseconds timeout, Atom atom, Request req,
               job_port::done_fn<Reply> done) {
    self->request(to, timeout, atom, std::move(req))
      .then([done](Reply& reply) mutable { done(std::move(reply)); },
            [this, done](caf::error& e) mutable { done(make_error(render(e))); });
  }

  // One stage's request, metered: the meter sees it out until its answer, then the barrier
  // learns that one request fewer is out.
  template <class Reply, class Handle, class Atom, class Request>
  void metered(stage s, const Handle& to, std::chrono::milliseconds timeout, Atom atom,
               Request req, job_port::done_fn<Reply> done) {
    meter->enter(s);
    forward<Reply>(to, timeout, atom, std::move(req),
                   job_port::done_fn<Reply>([this, s, done](result<Reply> r) mutable {
                     meter->leave(s);
                     done(std::move(r));
                     barrier->replied();
                   }));
  }

  // samples[k] belongs to attempt idxs[k] (one prompt x G on turn 1, a prompt each later).
  void on_generated(std::uint64_t gid, const std::vector<int>& idxs, msg::generate_reply& rep) {
    if (!driver->contains(gid))
      return;
    auto& r = driver->rollout(gid);
    auto& rec = groups.at(gid);
    std::vector<rollout_action> acts;
    for (std::size_t k = 0; k < idxs.size(); ++k) {
      const int a = idxs[k];
      if (!driver->awaiting(gid, a, attempt_phase::generating))
        continue;
      if (k >= rep.samples.size()) {
        append(acts, r.dropped(a, "the generator returned " + std::to_string(rep.samples.size())
                                    + " samples for " + std::to_string(idxs.size())));
        continue;
      }
      auto& s = rep.samples[k];
      rec.sampled(a, s, rep.policy_version);
      auto ids = s.tokens;
      if (!ids.empty() && ids.back() == opts.eos_id)
        ids.pop_back();
      auto ex = code_of(opts.codec.decode(ids), r.attempt(a).turns);
      const auto tokens = static_cast<long long>(s.tokens.size());
      if (ex.ok) {
        append(acts, r.sampled(a, ex.code, tokens));
      } else {
        auto v = no_code_verdict(rec.start().task, opts.backend, ex.reason);
        rec.judged(a, v);
        append(acts, r.sampled_without_code(a, tokens, v.feedback));
      }
    }
    driver->perform(gid, std::move(acts));
  }

  static void append(std::vector<rollout_action>& to, std::vector<rollout_action> more) {
    to.insert(to.end(), more.begin(), more.end());
  }

  void finish(std::uint64_t gid) {
    auto it = groups.find(gid);
    if (it == groups.end())
      return;
    auto res = it->second.finish(driver->rollout(gid));
    groups.erase(it);
    driver->close(gid);
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
  s.init();
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
