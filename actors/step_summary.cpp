#include "actors/step_summary.hpp"

#include "actors/group_scoring.hpp"
#include "algo/metrics.hpp"

namespace leap::actors {

msg::group_summary summarize_group(const msg::scored_group& sg) {
  const auto& g = sg.group;
  msg::group_summary s;
  s.group_id = g.group_id;
  s.task = g.task;
  s.epoch = g.epoch;
  s.index = g.index;
  s.dcp = g.dcp;
  s.activated = g.activated;
  s.seconds = g.seconds;
  for (std::size_t i = 0; i < g.trajectories.size(); ++i) {
    const auto& tr = g.trajectories[i];
    msg::attempt_summary a;
    a.end = tr.end;
    a.end_reason = tr.end_reason;
    a.solved_turn = tr.solved_turn;
    a.reward = i < sg.rewards.size() ? sg.rewards[i] : 0.0;
    if (i < sg.advantages.size())
      a.advantages = sg.advantages[i];
    for (const auto& t : tr.turns)
      a.turns.push_back({t.judged, t.status, t.reason, static_cast<std::int32_t>(t.completion.size())});
    s.attempts.push_back(std::move(a));
  }
  return s;
}

msg::step_report summarize_step(const std::vector<msg::scored_group>& groups,
                                task_progress& progress, std::size_t task_count) {
  msg::step_report rep;
  std::vector<algo::group_record> records;
  for (const auto& sg : groups) {
    const auto& g = sg.group;
    for (const auto& tr : g.trajectories) {
      rep.dropped += tr.end == algo::attempt_end::dropped;
      rep.unsupported += tr.end == algo::attempt_end::unsupported;
    }
    records.push_back(record_of(g));
    ++rep.groups;
    rep.attempts += g.attempts;
    rep.compiles += g.compiles;
    rep.cache_hits += g.cache_hits;
    rep.cancelled += g.cancelled;
    rep.compiles_later_turns += g.compiles_later_turns;
    rep.tasks.push_back(g.task);
    rep.epochs.push_back(g.epoch);
    rep.indices.push_back(g.index);
    rep.group_details.push_back(summarize_group(sg));
    progress.mark(g.epoch, g.index, task_count);
  }
  rep.acc_at_1 = algo::acc_at_k(records, 1);
  rep.acc_at_2 = algo::acc_at_k(records, 2);
  rep.acc_at_3 = algo::acc_at_k(records, 3);
  rep.turns_per_pass = algo::turns_per_pass(records);
  rep.activated_groups = algo::activated_fraction(records);
  bool any_recovery = false;
  for (double r : algo::per_group_recovery(records))
    any_recovery = any_recovery || r >= 0;
  rep.recovery = any_recovery ? algo::mean_recovery(records) : -1.0;
  return rep;
}

} // namespace leap::actors
