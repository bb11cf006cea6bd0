#include "actors/group_scoring.hpp"

namespace leap::actors {

bool is_ranked(const msg::trajectory_record& t) {
  return algo::is_ranked(t.end) && !t.turns.empty();
}

algo::group_record record_of(const msg::group_result& g) {
  algo::group_record rec;
  rec.activated = g.activated;
  for (const auto& tr : g.trajectories)
    if (is_ranked(tr))
      rec.solved_turn.push_back(tr.solved_turn);
  return rec;
}

msg::scored_group score_group(msg::group_result g, const algo::estimator_config& cfg,
                              const std::vector<std::vector<std::int64_t>>* tokens) {
  std::vector<algo::trajectory> ranked;
  std::vector<std::size_t> where; // ranked index -> trajectory index
  for (std::size_t i = 0; i < g.trajectories.size(); ++i) {
    const auto& tr = g.trajectories[i];
    if (!is_ranked(tr))
      continue;
    algo::trajectory t;
    long long total = 0;
    for (std::size_t k = 0; k < tr.turns.size(); ++k) {
      const auto& turn = tr.turns[k];
      t.turn_rewards.push_back(turn.judged && turn.status == env::status::correct ? 1.0 : 0.0);
      const bool given = tokens && i < tokens->size() && k < (*tokens)[i].size();
      total += given ? static_cast<long long>((*tokens)[i][k])
                     : static_cast<long long>(turn.completion.size());
    }
    t.outcome.solved_turn = tr.solved_turn;
    t.outcome.total_tokens = total;
    if (tr.solved_turn > 0 && static_cast<std::size_t>(tr.solved_turn) <= tr.turns.size()) {
      const auto& win = tr.turns[static_cast<std::size_t>(tr.solved_turn - 1)];
      t.outcome.timed = win.timed;
      t.outcome.speedup = win.speedup;
    }
    ranked.push_back(std::move(t));
    where.push_back(i);
  }
  msg::scored_group sg;
  sg.rewards.assign(g.trajectories.size(), 0.0);
  sg.advantages.resize(g.trajectories.size());
  for (std::size_t i = 0; i < g.trajectories.size(); ++i)
    sg.advantages[i].assign(g.trajectories[i].turns.size(), 0.0);
  if (!ranked.empty()) {
    auto adv = algo::advantages(ranked, cfg);
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      sg.advantages[where[k]] = adv[k];
      // rank: every turn's advantage is the tournament reward (algo::advantages).
      sg.rewards[where[k]] = cfg.kind == algo::estimator::rank && !adv[k].empty()
                               ? adv[k].front()
                               : algo::trajectory_reward(ranked[k]);
    }
  }
  sg.group = std::move(g);
  return sg;
}

} // namespace leap::actors
