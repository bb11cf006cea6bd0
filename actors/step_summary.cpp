#include "actors/step_summary.hpp"

#include "algo/metrics.hpp"

namespace leap::actors {

msg::step_report summarize_step(const std::vector<msg::scored_group>& groups,
                                task_progress& progress, std::size_t task_count) {
  msg::step_report rep;
  std::vector<algo::group_record> records;
  for (const auto& sg : groups) {
    const auto& g = sg.group;
    algo::group_record rec;
    rec.activated = g.activated;
    for (const auto& tr : g.trajectories)
      if (!tr.cancelled && !tr.turns.empty())
        rec.solved_turn.push_back(tr.solved_turn);
    records.push_back(std::move(rec));
    ++rep.groups;
    rep.attempts += g.attempts;
    rep.compiles += g.compiles;
    rep.cache_hits += g.cache_hits;
    rep.cancelled += g.cancelled;
    rep.compiles_later_turns += g.compiles_later_turns;
    rep.tasks.push_back(g.task);
    rep.epochs.push_back(g.epoch);
    rep.indices.push_back(g.index);
    progress.mark(g.epoch, g.index, task_count);
  }
  rep.acc_at_1 = algo::acc_at_k(records, 1);
  rep.acc_at_2 = algo::acc_at_k(records, 2);
  rep.acc_at_3 = algo::acc_at_k(records, 3);
  rep.turns_per_pass = algo::turns_per_pass(records);
  rep.activated_groups = algo::activated_fraction(records);
  return rep;
}

} // namespace leap::actors
