#include "actors/judge.hpp"

#include "messages/interfaces.hpp"

#include <caf/all.hpp>

namespace leap::actors {

namespace {

caf::behavior judge(caf::event_based_actor* self, algo::estimator_config cfg, caf::actor learner) {
  return {
    [self, cfg, learner](msg::finished_atom, msg::group_result& g) {
      std::vector<algo::trajectory> group;
      std::vector<std::size_t> where; // group index -> trajectory index
      for (std::size_t i = 0; i < g.trajectories.size(); ++i) {
        const auto& tr = g.trajectories[i];
        if (tr.cancelled || tr.turns.empty())
          continue;
        algo::trajectory t;
        long long tokens = 0;
        for (auto& turn : tr.turns) {
          t.turn_rewards.push_back(turn.status == "correct" ? 1.0 : 0.0);
          tokens += static_cast<long long>(turn.completion.size());
        }
        t.outcome.solved_turn = tr.solved_turn;
        t.outcome.total_tokens = tokens;
        if (tr.solved_turn > 0) {
          const auto& win = tr.turns[static_cast<std::size_t>(tr.solved_turn - 1)];
          t.outcome.timed = win.timed;
          t.outcome.speedup = win.speedup;
        }
        group.push_back(std::move(t));
        where.push_back(i);
      }
      msg::scored_group sg;
      sg.rewards.assign(g.trajectories.size(), 0.0);
      sg.advantages.resize(g.trajectories.size());
      if (!group.empty()) {
        auto adv = algo::advantages(group, cfg);
        for (std::size_t k = 0; k < group.size(); ++k) {
          sg.advantages[where[k]] = adv[k];
          // rank: every turn's advantage is the tournament reward (algo::advantages).
          sg.rewards[where[k]] = cfg.kind == algo::estimator::rank
                                   ? adv[k].front()
                                   : algo::trajectory_reward(group[k]);
        }
      }
      sg.group = std::move(g);
      self->send(learner, msg::scored_atom_v, std::move(sg));
    },
  };
}

} // namespace

caf::actor spawn_judge(caf::actor_system& sys, algo::estimator_config cfg, caf::actor learner) {
  return sys.spawn(judge, cfg, std::move(learner));
}

} // namespace leap::actors
