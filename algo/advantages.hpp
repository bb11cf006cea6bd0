// Advantage estimators over one finished group's ranked attempts, selectable in TOML
// (docs/design.md "The reward"): `rank` (LEAP's tournament), `grpo` (scalar reward, group
// mean/std), `drgrpo` (mean-centred only), `trloo` (Dr. Kernel: reward-to-go with a
// leave-one-out baseline per prompt and turn), `discounted` (Kevin: each turn's reward plus
// gamma-discounted later rewards, normalised over the group).
// The result holds one advantage per trajectory and turn, applied to every completion token
// of that turn. Pure functions, no I/O; any thread.
#pragma once

#include "algo/tournament.hpp"

#include <string>
#include <vector>

namespace leap::algo {

enum class estimator { rank, grpo, drgrpo, trloo, discounted };
const char* to_string(estimator e);
bool parse_estimator(const std::string& text, estimator& out);

struct trajectory {
  std::vector<double> turn_rewards; // scalar reward of each turn taken (e.g. 1 correct, 0 not)
  trajectory_outcome outcome;       // for the tournament
};

struct estimator_config {
  estimator kind = estimator::rank;
  double gamma = 0.4;   // `discounted`
  double eps = 1e-6;    // `grpo`, `discounted`: added to the standard deviation
  tournament_config tournament;
};

// advantages[i][k]: trajectory i, turn k (same shape as the turn_rewards).
std::vector<std::vector<double>> advantages(const std::vector<trajectory>& group,
                                            const estimator_config& cfg);

// The scalar trajectory reward used by grpo/drgrpo: the best turn reward.
double trajectory_reward(const trajectory& t);

} // namespace leap::algo
