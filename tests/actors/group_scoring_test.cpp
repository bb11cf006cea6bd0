// The reward rules on hand-made finished groups (actors/group_scoring.hpp): solved on an earlier
// turn beats a later one, a shorter solution beats a longer one by the tie keys, unsolved
// attempts draw with each other, reward (wins - losses) / (n - 1) over the n ranked attempts,
// and attempts dropped by the infrastructure, cancelled, or not buildable by the emulation take
// no part (reward and advantages 0).
#include "actors/group_scoring.hpp"

#include <gtest/gtest.h>

#include <numeric>

using namespace leap;
using algo::attempt_end;

namespace {

msg::turn_record turn(env::status st, int tokens, bool judged = true, const std::string& reason = "") {
  msg::turn_record t;
  t.prompt = {1, 2};
  t.completion.assign(static_cast<std::size_t>(tokens), 7);
  t.logprobs.assign(static_cast<std::size_t>(tokens), -0.5f);
  t.judged = judged;
  t.status = st;
  t.reason = reason;
  return t;
}

msg::trajectory_record traj(std::vector<msg::turn_record> turns, int solved, attempt_end end) {
  msg::trajectory_record t;
  t.turns = std::move(turns);
  t.solved_turn = solved;
  t.end = end;
  return t;
}

// A: turn 1 (10 tokens); B: turn 2; C: unsolved, 5 tokens; D: unsolved, 500 tokens; E: dropped
// on its turn 2; F: its code the emulation cannot build; G: a cancelled straggler.
msg::group_result sample_group() {
  using env::status;
  msg::group_result g;
  g.task = "relu";
  g.trajectories = {
    traj({turn(status::correct, 10)}, 1, attempt_end::solved),
    traj({turn(status::wrong_answer, 20), turn(status::correct, 20)}, 2, attempt_end::solved),
    traj({turn(status::compile_error, 5)}, 0, attempt_end::not_expanded),
    traj({turn(status::wrong_answer, 250), turn(status::wrong_answer, 250)}, 0, attempt_end::out_of_turns),
    traj({turn(status::wrong_answer, 30), turn(status::rejected, 30, false)}, 0, attempt_end::dropped),
    traj({turn(status::rejected, 40, true, "emulation_unsupported")}, 0, attempt_end::unsupported),
    traj({turn(status::rejected, 12, false)}, 0, attempt_end::cancelled),
  };
  return g;
}

} // namespace

TEST(GroupScoring, RankRewardOverTheRankedAttemptsOnly) {
  algo::estimator_config cfg; // rank, tie keys speedup then tokens
  auto sg = actors::score_group(sample_group(), cfg);
  ASSERT_EQ(sg.rewards.size(), 7u);
  // n = 4 ranked (A, B, C, D): A beats all (3 - 0) / 3; B beats C and D, loses to A: 1/3;
  // C and D lose to A and B and draw with each other, however long each was: -2/3.
  EXPECT_DOUBLE_EQ(sg.rewards[0], 1.0);
  EXPECT_DOUBLE_EQ(sg.rewards[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(sg.rewards[2], -2.0 / 3);
  EXPECT_DOUBLE_EQ(sg.rewards[3], -2.0 / 3);
  EXPECT_NEAR(std::accumulate(sg.rewards.begin(), sg.rewards.end(), 0.0), 0.0, 1e-12);
  // Every turn of a ranked trajectory carries its reward.
  EXPECT_EQ(sg.advantages[1], (std::vector<double>{1.0 / 3, 1.0 / 3}));
  // Dropped, unsupported and cancelled: no reward, a zero advantage on every turn.
  for (std::size_t i : {4u, 5u, 6u}) {
    EXPECT_EQ(sg.rewards[i], 0.0) << i;
    EXPECT_EQ(sg.advantages[i], std::vector<double>(sg.group.trajectories[i].turns.size(), 0.0)) << i;
    EXPECT_FALSE(actors::is_ranked(sg.group.trajectories[i])) << i;
  }
}

TEST(GroupScoring, OneRankedAttemptGetsNoSignal) {
  auto g = sample_group();
  for (std::size_t i = 1; i < 4; ++i)
    g.trajectories[i].end = attempt_end::dropped;
  auto sg = actors::score_group(g, algo::estimator_config{});
  for (double r : sg.rewards)
    EXPECT_EQ(r, 0.0);
}

TEST(GroupScoring, TieKeysInTheConfiguredOrder) {
  using env::status;
  msg::group_result g;
  auto fast_long = traj({turn(status::correct, 300)}, 1, attempt_end::solved);
  fast_long.turns[0].timed = true;
  fast_long.turns[0].speedup = 3.0;
  auto slow_short = traj({turn(status::correct, 100)}, 1, attempt_end::solved);
  slow_short.turns[0].timed = true;
  slow_short.turns[0].speedup = 1.0;
  g.trajectories = {fast_long, slow_short};
  algo::estimator_config speed_first;
  auto a = actors::score_group(g, speed_first);
  EXPECT_DOUBLE_EQ(a.rewards[0], 1.0);
  algo::estimator_config tokens_first;
  tokens_first.tournament.tie_keys = {algo::tie_key::tokens, algo::tie_key::speedup};
  auto b = actors::score_group(g, tokens_first);
  EXPECT_DOUBLE_EQ(b.rewards[0], -1.0);
  algo::estimator_config no_keys;
  no_keys.tournament.tie_keys.clear();
  EXPECT_DOUBLE_EQ(actors::score_group(g, no_keys).rewards[0], 0.0);
}

TEST(GroupScoring, BaselineEstimatorsLeaveOutTheSameAttempts) {
  algo::estimator_config grpo;
  grpo.kind = algo::estimator::grpo;
  auto sg = actors::score_group(sample_group(), grpo);
  // Ranked rewards [1, 1, 0, 0]: mean 0.5, population std 0.5: advantages +-1.
  EXPECT_NEAR(sg.advantages[0][0], 1.0, 1e-5);
  EXPECT_NEAR(sg.advantages[3][1], -1.0, 1e-5);
  EXPECT_EQ(sg.advantages[4], (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(sg.rewards[5], 0.0);
}
