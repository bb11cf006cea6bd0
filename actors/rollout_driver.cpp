#include "actors/rollout_driver.hpp"

#include "actors/verdicts.hpp"

#include <deque>
#include <utility>

namespace leap::actors {

using algo::attempt_phase;
using algo::rollout_action;

rollout_driver::rollout_driver(rollout_driver_options opts, job_port port, driver_events events)
    : opts_(opts), port_(std::move(port)), ev_(std::move(events)) {}

rollout_driver::group* rollout_driver::find(std::uint64_t id) {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

bool rollout_driver::open(std::uint64_t id, const algo::rollout_config& cfg,
                          const env::task_spec& task, driven_group_options go) {
  if (!groups_.try_emplace(id, cfg, task, go).second)
    return false;
  if (opts_.reference_at_open && !go.candidate_is_reference)
    with_reference(task, [](const result<std::string>&) {});
  return true;
}

void rollout_driver::close(std::uint64_t id) {
  auto* g = find(id);
  if (!g)
    return;
  for (std::size_t a = 0; a < g->att.size(); ++a)
    cancel(*g, static_cast<int>(a));
  groups_.erase(id);
}

bool rollout_driver::awaiting(std::uint64_t id, int a, attempt_phase ph) const {
  auto it = groups_.find(id);
  if (it == groups_.end())
    return false;
  const auto& at = it->second.r.attempt(a);
  return at.end == algo::attempt_end::none && at.phase == ph;
}

void rollout_driver::perform(std::uint64_t id, std::vector<rollout_action> acts) {
  std::deque<rollout_action> queue(std::make_move_iterator(acts.begin()),
                                   std::make_move_iterator(acts.end()));
  std::vector<rollout_action> more;
  while (!queue.empty() && find(id)) {
    auto act = std::move(queue.front());
    queue.pop_front();
    run(id, act, more);
    for (auto& m : more)
      queue.push_back(std::move(m));
    more.clear();
  }
  if (find(id) && ev_.settled)
    ev_.settled(id);
}

void rollout_driver::run(std::uint64_t id, const rollout_action& act,
                         std::vector<rollout_action>& more) {
  auto& g = *find(id);
  switch (act.what) {
    case rollout_action::kind::generate:
      if (ev_.generate)
        ev_.generate(id, act, more);
      break;
    case rollout_action::kind::compile: compile(id, act.attempts.at(0)); break;
    case rollout_action::kind::execute: execute(id, act.attempts.at(0)); break;
    case rollout_action::kind::cancel:
      cancel(g, act.attempts.at(0));
      if (ev_.cancelled)
        ev_.cancelled(id, act.attempts.at(0));
      break;
    case rollout_action::kind::finished:
      if (ev_.finished)
        ev_.finished(id);
      break;
  }
}

void rollout_driver::drop(std::uint64_t id, int a, const std::string& why) {
  auto* g = find(id);
  if (!g)
    return;
  g->att.at(static_cast<std::size_t>(a)).job = 0;
  if (ev_.dropped)
    ev_.dropped(id, a, why);
  if (find(id))
    perform(id, g->r.dropped(a, why));
}

void rollout_driver::admit(std::uint64_t id, int a, attempt_phase stage,
                           std::function<void()> start) {
  if (port_.admit)
    port_.admit(id, a, stage, std::move(start));
  else
    start();
}

void rollout_driver::not_sent() {
  if (port_.not_sent)
    port_.not_sent();
}

// --- compile ---
void rollout_driver::compile(std::uint64_t id, int a) {
  admit(id, a, attempt_phase::compiling, [this, id, a] {
    auto* g = find(id);
    if (!g)
      return not_sent();
    auto& io = g->att.at(static_cast<std::size_t>(a));
    io.job = next_job_++;
    io.stage = attempt_phase::compiling;
    msg::compile_request req{io.job, g->task->name, g->r.attempt(a).turns.back().code,
                             opts_.backend, false, priority(id)};
    if (g->go.candidate_is_reference) {
      req.source = g->task->reference_source;
      req.reference = true;
    }
    port_.compile(id, a, std::move(req), [this, id, a](result<msg::compile_reply> r) {
      on_built(id, a, r);
    });
  });
}

void rollout_driver::on_built(std::uint64_t id, int a, result<msg::compile_reply>& r) {
  if (!awaiting(id, a, attempt_phase::compiling))
    return;
  if (!r)
    return drop(id, a, "compile job failed: " + r.message());
  auto& g = *find(id);
  auto& io = g.att.at(static_cast<std::size_t>(a));
  io.job = 0;
  if (ev_.built)
    ev_.built(id, a, *r);
  if (!find(id))
    return;
  if (g.go.candidate_is_reference) { // this build is the task's reference build
    refs_.build_answered(g.task->name, r->status, r->key, r->diagnostics);
    if (r->status == env::build_status::cancelled)
      return drop(id, a, "the reference build of task '" + g.task->name + "' was cancelled");
    if (r->status != env::build_status::ok) { // remembered as broken: the cache says why at once
      std::string why;
      refs_.request(g.task->name, [&why](const result<std::string>& k) {
        if (!k)
          why = k.message();
      });
      return drop(id, a, why);
    }
  }
  if (r->status == env::build_status::ok) {
    io.build = std::move(*r);
    perform(id, g.r.built(a));
    return;
  }
  auto v = verdict_of(*r, nullptr, *g.task, opts_.backend);
  if (!v)
    return drop(id, a, v.message());
  judge(id, a, *v, nullptr);
}

// --- execute: the task's reference first (built once), then the run ---
void rollout_driver::execute(std::uint64_t id, int a) {
  admit(id, a, attempt_phase::executing, [this, id, a] {
    auto* g = find(id);
    if (!g)
      return not_sent();
    with_reference(*g->task, [this, id, a](const result<std::string>& ref) {
      if (!awaiting(id, a, attempt_phase::executing))
        return not_sent();
      if (!ref) {
        drop(id, a, ref.message());
        return not_sent();
      }
      auto& g2 = *find(id);
      auto& io = g2.att.at(static_cast<std::size_t>(a));
      io.job = next_job_++;
      io.stage = attempt_phase::executing;
      msg::exec_request req{io.job, g2.task->name, opts_.backend, io.build.key, *ref,
                            g2.go.dump_inputs, priority(id)};
      port_.execute(id, a, std::move(req), [this, id, a](result<msg::exec_reply> r) {
        on_ran(id, a, r);
      });
    });
  });
}

void rollout_driver::on_ran(std::uint64_t id, int a, result<msg::exec_reply>& r) {
  if (!awaiting(id, a, attempt_phase::executing))
    return;
  if (!r)
    return drop(id, a, "execute job failed: " + r.message());
  auto& g = *find(id);
  auto& io = g.att.at(static_cast<std::size_t>(a));
  io.job = 0;
  auto v = verdict_of(io.build, &r->v, *g.task, opts_.backend);
  if (!v)
    return drop(id, a, v.message());
  judge(id, a, *v, &*r);
}

void rollout_driver::with_reference(const env::task_spec& task, reference_cache::callback cb) {
  if (!refs_.request(task.name, std::move(cb)))
    return;
  msg::compile_request req{next_job_++, task.name, task.reference_source, opts_.backend, true};
  auto name = task.name;
  port_.compile(0, -1, std::move(req), [this, name](result<msg::compile_reply> r) {
    if (r)
      refs_.build_answered(name, r->status, r->key, r->diagnostics);
    else
      refs_.build_lost(name, r.message());
  });
}

// --- verdicts and cancellation ---
void rollout_driver::judge(std::uint64_t id, int a, const env::verdict& v,
                           const msg::exec_reply* run) {
  if (ev_.judged)
    ev_.judged(id, a, v, run);
  if (auto* g = find(id))
    perform(id, g->r.judged(a, judgement_of(v)));
}

void rollout_driver::cancel(group& g, int a) {
  auto& io = g.att.at(static_cast<std::size_t>(a));
  if (io.job == 0)
    return;
  if (port_.cancel)
    port_.cancel(io.stage, io.job);
  io.job = 0;
}

} // namespace leap::actors
