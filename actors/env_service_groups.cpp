#include "actors/env_service_state.hpp"

#include "actors/edit_answer.hpp"
#include "actors/verdicts.hpp"
#include "common/random_id.hpp"

namespace leap::actors::env_service_detail {

using algo::rollout_action;

namespace {

void append(std::vector<rollout_action>& to, std::vector<rollout_action> more) {
  to.insert(to.end(), more.begin(), more.end());
}

} // namespace

void service_state::open_group(msg::group_call& call, group_promise rp) {
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

std::vector<rollout_action> service_state::submit(std::uint64_t id, int a, msg::submission s) {
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

std::uint64_t service_state::number_of(const std::string& name) const {
  auto it = names.find(name);
  return it == names.end() ? 0 : it->second;
}

void service_state::turn(msg::turn_call& call, group_promise rp) {
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

void service_state::view(const std::string& name, group_promise rp) {
  auto id = number_of(name);
  if (id == 0)
    return (void)rp.deliver(refusal<msg::group_answer>(
      msg::serve_status::not_found, "no group '" + name + "' (never opened, or expired)"));
  groups.at(id).touched = clock_type::now();
  rp.deliver(answer(id));
}

void service_state::settle(std::uint64_t id) {
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

void service_state::expire() {
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

} // namespace leap::actors::env_service_detail
