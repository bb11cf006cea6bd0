#include "actors/env_service_state.hpp"

#include "actors/group_scoring.hpp"

namespace leap::actors::env_service_detail {

msg::attempt_state state_of(const algo::rollout_attempt& at) {
  if (at.end != algo::attempt_end::none)
    return msg::attempt_state::ended;
  if (at.phase == algo::attempt_phase::generating && !at.turns.empty())
    return msg::attempt_state::awaiting_turn;
  return msg::attempt_state::running;
}

void service_state::score(std::uint64_t id) {
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

msg::group_answer service_state::answer(std::uint64_t id) {
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

} // namespace leap::actors::env_service_detail
