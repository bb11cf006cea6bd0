// Hand-computed cases for the pure LEAP math: DCP (including early decisions), the tournament,
// every advantage estimator, and the paper's metrics.
#include "algo/advantages.hpp"
#include "algo/dcp.hpp"
#include "algo/metrics.hpp"
#include "algo/tournament.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

using namespace leap::algo;

TEST(Dcp, ResolvesFractionsOfTheGroup) {
  dcp_config paper; // N_fail >= G/2, no hopeless pruning
  EXPECT_EQ(resolve(paper, 8).t_min, 4);
  EXPECT_EQ(resolve(paper, 8).t_max, 8);
  EXPECT_EQ(resolve(paper, 7).t_min, 4); // 3.5 rounds up
  EXPECT_EQ(resolve(paper, 7).t_max, 7);
  dcp_config abs{2, 5, false, true};
  EXPECT_EQ(resolve(abs, 8).t_min, 2);
  EXPECT_EQ(resolve(abs, 8).t_max, 5);
  EXPECT_EQ(resolve(dcp_config{0, 9, false, true}, 8).t_max, 8); // clamped to G
}

TEST(Dcp, DecidesAsSoonAsTheOutcomeIsCertain) {
  dcp_config paper;
  // 5 passed, 3 pending: at most 3 failures < 4: easy, before the stragglers finish.
  EXPECT_EQ(decide(paper, 8, 0, 5), dcp_decision::prune_easy);
  // 4 failed, 4 pending: N_fail in [4, 8] = [t_min, t_max]: expand now.
  EXPECT_EQ(decide(paper, 8, 4, 0), dcp_decision::expand);
  EXPECT_EQ(decide(paper, 8, 3, 1), dcp_decision::undecided); // [3, 7]
  EXPECT_EQ(decide(paper, 8, 2, 4), dcp_decision::undecided); // [2, 4]
  EXPECT_EQ(decide(paper, 8, 2, 5), dcp_decision::prune_easy); // [2, 3]
  EXPECT_EQ(decide(paper, 8, 8, 0), dcp_decision::expand);     // all failed: still debugged
  dcp_config band{2, 5, false, true};
  EXPECT_EQ(decide(band, 8, 6, 0), dcp_decision::prune_hopeless); // already 6 > 5
  EXPECT_EQ(decide(band, 8, 2, 4), dcp_decision::expand);         // [2, 4] within [2, 5]
  EXPECT_EQ(decide(band, 8, 5, 0), dcp_decision::undecided);      // [5, 8]
  EXPECT_EQ(decide(band, 8, 5, 3), dcp_decision::expand);         // exactly 5
}

TEST(Dcp, DisabledExpandsEveryGroupWithAFailure) {
  dcp_config off;
  off.enabled = false;
  EXPECT_EQ(decide(off, 8, 1, 0), dcp_decision::expand);
  EXPECT_EQ(decide(off, 8, 0, 3), dcp_decision::undecided);
  EXPECT_EQ(decide(off, 8, 0, 8), dcp_decision::prune_easy);
}

namespace {
trajectory_outcome solved(int turn, long long tokens, bool timed = false, double speedup = 0) {
  return {turn, timed, speedup, tokens};
}
} // namespace

TEST(Tournament, OrderByTurnThenTokens) {
  tournament_config cfg;
  // A: turn 1, 100 tokens; B: turn 2; C: unsolved; D: turn 1, 200 tokens.
  std::vector<trajectory_outcome> g{solved(1, 100), solved(2, 50), solved(0, 10), solved(1, 200)};
  auto r = play(g, cfg);
  EXPECT_EQ(r.wins, (std::vector<int>{3, 1, 0, 2}));
  EXPECT_EQ(r.losses, (std::vector<int>{0, 2, 3, 1}));
  EXPECT_DOUBLE_EQ(r.rewards[0], 1.0);
  EXPECT_DOUBLE_EQ(r.rewards[1], -1.0 / 3);
  EXPECT_DOUBLE_EQ(r.rewards[2], -1.0);
  EXPECT_DOUBLE_EQ(r.rewards[3], 1.0 / 3);
  EXPECT_NEAR(std::accumulate(r.rewards.begin(), r.rewards.end(), 0.0), 0.0, 1e-12);
}

TEST(Tournament, SpeedupWithMarginThenTokens) {
  tournament_config cfg; // 5% speedup margin, 10% token margin
  EXPECT_EQ(compare(solved(1, 100, true, 3.0), solved(1, 100, true, 2.0), cfg), 1);
  // 2.05 is not more than 5% above 2.0: tokens decide (90 * 1.1 = 99 < 100).
  EXPECT_EQ(compare(solved(1, 100, true, 2.05), solved(1, 90, true, 2.0), cfg), -1);
  // Within both margins: a draw.
  EXPECT_EQ(compare(solved(1, 100, true, 2.05), solved(1, 95, true, 2.0), cfg), 0);
  // Speedup is ignored unless both are measured.
  EXPECT_EQ(compare(solved(1, 100, true, 9.0), solved(1, 100, false, 0), cfg), 0);
  // Turn beats everything.
  EXPECT_EQ(compare(solved(2, 1, true, 50.0), solved(1, 1000, true, 1.0), cfg), -1);
  // An all-equal group gets all-zero rewards (still scale-free, no NaN).
  auto r = play({solved(1, 10), solved(1, 10), solved(1, 10)}, cfg);
  EXPECT_EQ(r.rewards, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(play({solved(1, 10)}, cfg).rewards, (std::vector<double>{0}));
}

TEST(Estimators, GrpoAndDrGrpo) {
  std::vector<trajectory> g{{{1}, {}}, {{0}, {}}, {{0, 0}, {}}, {{0, 1}, {}}};
  estimator_config cfg;
  cfg.kind = estimator::grpo;
  auto a = advantages(g, cfg);
  // Rewards [1, 0, 0, 1]: mean 0.5, population std 0.5.
  EXPECT_NEAR(a[0][0], 1.0, 1e-5);
  EXPECT_NEAR(a[1][0], -1.0, 1e-5);
  ASSERT_EQ(a[2].size(), 2u);
  EXPECT_NEAR(a[2][1], -1.0, 1e-5);
  EXPECT_NEAR(a[3][0], 1.0, 1e-5); // every turn of a trajectory gets its advantage
  cfg.kind = estimator::drgrpo;
  a = advantages(g, cfg);
  EXPECT_DOUBLE_EQ(a[0][0], 0.5);
  EXPECT_DOUBLE_EQ(a[1][0], -0.5);
}

TEST(Estimators, RankUsesTheTournament) {
  std::vector<trajectory> g{{{1}, solved(1, 100)}, {{0, 1}, solved(2, 50)}, {{0, 0}, solved(0, 10)}};
  estimator_config cfg; // rank
  auto a = advantages(g, cfg);
  EXPECT_DOUBLE_EQ(a[0][0], 1.0);
  EXPECT_DOUBLE_EQ(a[1][0], 0.0);
  EXPECT_DOUBLE_EQ(a[1][1], 0.0);
  EXPECT_DOUBLE_EQ(a[2][1], -1.0);
}

TEST(Estimators, TrlooRewardToGoWithLeaveOneOutPerTurn) {
  // Rewards-to-go: T0 [1, 1], T1 [1], T2 [0, 0], T3 [1, 1, 1].
  std::vector<trajectory> g{{{0, 1}, {}}, {{1}, {}}, {{0, 0}, {}}, {{0, 0, 1}, {}}};
  estimator_config cfg;
  cfg.kind = estimator::trloo;
  auto a = advantages(g, cfg);
  // Turn 1: [1, 1, 0, 1]: 1 - (3 - 1) / 3 = 1/3 and 0 - 3/3 = -1.
  EXPECT_NEAR(a[0][0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(a[1][0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(a[2][0], -1.0, 1e-12);
  EXPECT_NEAR(a[3][0], 1.0 / 3, 1e-12);
  // Turn 2 (T0, T2, T3 = 1, 0, 1): 1 - 1/2 = 0.5, 0 - 2/2 = -1.
  EXPECT_NEAR(a[0][1], 0.5, 1e-12);
  EXPECT_NEAR(a[2][1], -1.0, 1e-12);
  EXPECT_NEAR(a[3][1], 0.5, 1e-12);
  // Turn 3: only T3 reached it: no baseline, no signal.
  EXPECT_EQ(a[3][2], 0.0);
}

TEST(Estimators, DiscountedKevinStyle) {
  // Returns with gamma 0.4: [0.4, 1] and [1]; over the group: mean 0.8, std sqrt(0.08).
  std::vector<trajectory> g{{{0, 1}, {}}, {{1}, {}}};
  estimator_config cfg;
  cfg.kind = estimator::discounted;
  cfg.eps = 0;
  auto a = advantages(g, cfg);
  double sd = std::sqrt(0.08);
  EXPECT_NEAR(a[0][0], (0.4 - 0.8) / sd, 1e-12);
  EXPECT_NEAR(a[0][1], (1 - 0.8) / sd, 1e-12);
  EXPECT_NEAR(a[1][0], (1 - 0.8) / sd, 1e-12);
  estimator e;
  EXPECT_TRUE(parse_estimator("trloo", e));
  EXPECT_EQ(e, estimator::trloo);
  EXPECT_FALSE(parse_estimator("ppo", e));
}

TEST(Metrics, AccAtKTurnsActivationRecovery) {
  std::vector<group_record> groups{{{1, 2, 0, 3}, true}, {{1, 1, 1, 1}, false}};
  EXPECT_DOUBLE_EQ(acc_at_k(groups, 1), 5.0 / 8);
  EXPECT_DOUBLE_EQ(acc_at_k(groups, 2), 6.0 / 8);
  EXPECT_DOUBLE_EQ(acc_at_k(groups, 3), 7.0 / 8);
  EXPECT_DOUBLE_EQ(turns_per_pass(groups), 10.0 / 7);
  EXPECT_DOUBLE_EQ(activated_fraction(groups), 0.5);
  auto rec = per_group_recovery(groups);
  EXPECT_DOUBLE_EQ(rec[0], 2.0 / 3);
  EXPECT_DOUBLE_EQ(rec[1], -1.0);
  EXPECT_DOUBLE_EQ(mean_recovery(groups), 2.0 / 3);
  EXPECT_DOUBLE_EQ(acc_at_k({}, 1), 0.0);
}

TEST(Tournament, UnsolvedAttemptsDrawWhateverTheirLength) {
  tournament_config cfg;
  // A short failure does not beat a long one (the tokens key ranks solved attempts only).
  EXPECT_EQ(compare(solved(0, 10), solved(0, 1000), cfg), 0);
  EXPECT_EQ(compare(solved(0, 10, true, 5.0), solved(0, 1000, true, 1.0), cfg), 0);
  // Two solved, two unsolved of very different lengths: the failures draw with each other.
  auto r = play({solved(1, 100), solved(1, 300), solved(0, 5), solved(0, 900)}, cfg);
  EXPECT_EQ(r.wins, (std::vector<int>{3, 2, 0, 0}));
  EXPECT_EQ(r.losses, (std::vector<int>{0, 1, 2, 2}));
  EXPECT_EQ(r.draws, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(r.rewards[0], 1.0);
  EXPECT_DOUBLE_EQ(r.rewards[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(r.rewards[2], -2.0 / 3);
  EXPECT_DOUBLE_EQ(r.rewards[3], -2.0 / 3);
  // An all-failed group: no signal at all.
  auto f = play({solved(0, 5), solved(0, 50), solved(0, 500)}, cfg);
  EXPECT_EQ(f.rewards, (std::vector<double>{0, 0, 0}));
}

TEST(Tournament, TieKeysInConfiguredOrder) {
  tournament_config tokens_first;
  tokens_first.tie_keys = {tie_key::tokens, tie_key::speedup};
  // Faster but much longer: with tokens first the shorter one wins.
  EXPECT_EQ(compare(solved(1, 300, true, 3.0), solved(1, 100, true, 1.0), tokens_first), -1);
  EXPECT_EQ(compare(solved(1, 300, true, 3.0), solved(1, 100, true, 1.0), tournament_config{}), 1);
  tie_key k = tie_key::speedup;
  EXPECT_TRUE(parse_tie_key("tokens", k));
  EXPECT_EQ(k, tie_key::tokens);
  EXPECT_FALSE(parse_tie_key("latency", k));
}
