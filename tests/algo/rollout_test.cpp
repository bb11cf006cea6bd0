// The multi-turn rollout state machine driven by hand-written event sequences: single turn,
// early DCP expansion before the stragglers finish, pruning with the stragglers kept or
// cancelled, attempts dropped by the infrastructure (the group still finishes), an all-dropped
// group, code the emulation cannot build, no code, no room, and late events that are ignored.
#include "algo/rollout.hpp"

#include <gtest/gtest.h>

using namespace leap::algo;
using kind = rollout_action::kind;

namespace {

rollout_config cfg(int g, int turns, bool cancel = false) {
  rollout_config c;
  c.group_size = g;
  c.max_turns = turns;
  c.cancel_pruned_turn1 = cancel; // DCP: the paper's N_fail >= G/2, no hopeless pruning
  return c;
}

turn_judgement pass() { return {turn_verdict::correct, "correct", false, 0}; }
turn_judgement fail(const std::string& fb = "wrong result") { return {turn_verdict::failed, fb, false, 0}; }

// Samples code for attempt a and builds it: the run (execute) is pending afterwards.
void sample_and_build(rollout& r, int a) {
  auto c = r.sampled(a, "code" + std::to_string(a), 10);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].what, kind::compile);
  auto e = r.built(a);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].what, kind::execute);
}

bool has(const std::vector<rollout_action>& acts, kind k) {
  for (auto& a : acts)
    if (a.what == k)
      return true;
  return false;
}

} // namespace

TEST(Rollout, SingleTurnEndsEveryAttemptAfterItsVerdict) {
  rollout r(cfg(3, 1));
  auto s = r.start();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].what, kind::generate);
  EXPECT_EQ(s[0].turn, 1);
  EXPECT_EQ(s[0].attempts, (std::vector<int>{0, 1, 2}));
  for (int a = 0; a < 3; ++a)
    sample_and_build(r, a);
  EXPECT_TRUE(r.judged(0, pass()).empty());
  EXPECT_TRUE(r.judged(1, fail()).empty());
  auto last = r.judged(2, fail());
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].what, kind::finished);
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.decision(), group_decision::single_turn);
  EXPECT_FALSE(r.activated());
  EXPECT_EQ(r.attempt(0).end, attempt_end::solved);
  EXPECT_EQ(r.attempt(0).solved_turn, 1);
  EXPECT_EQ(r.attempt(1).end, attempt_end::out_of_turns);
}

TEST(Rollout, ExpandsAsSoonAsCertainBeforeTheStragglersFinish) {
  rollout r(cfg(4, 3)); // t_min = 2 of 4
  r.start();
  for (int a = 0; a < 4; ++a)
    sample_and_build(r, a);
  // One failure: N_fail in [1, 4], undecided; the attempt waits.
  EXPECT_TRUE(r.judged(0, fail("err0")).empty());
  EXPECT_EQ(r.attempt(0).phase, attempt_phase::waiting_dcp);
  // A second: N_fail >= 2 is certain: both waiting attempts go to turn 2 at once.
  auto acts = r.judged(1, fail("err1"));
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  EXPECT_EQ(acts[0].turn, 2);
  EXPECT_EQ(acts[0].attempts, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.decision(), group_decision::expand);
  EXPECT_TRUE(r.activated());
  // The feedback of turn 1 is kept for the next prompt.
  EXPECT_EQ(r.attempt(1).turns[0].feedback, "err1");
  // A straggler that fails later goes to turn 2 on its own.
  auto late = r.judged(2, fail());
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].attempts, (std::vector<int>{2}));
  EXPECT_EQ(late[0].turn, 2);
  EXPECT_TRUE(r.judged(3, pass()).empty());
  EXPECT_EQ(r.attempt(3).end, attempt_end::solved);
  // Turn 2: attempt 0 solves; 1 and 2 fail again and get turn 3; then out of turns.
  sample_and_build(r, 0);
  EXPECT_TRUE(r.judged(0, pass()).empty());
  EXPECT_EQ(r.attempt(0).solved_turn, 2);
  for (int a : {1, 2}) {
    sample_and_build(r, a);
    auto t3 = r.judged(a, fail());
    ASSERT_EQ(t3.size(), 1u);
    EXPECT_EQ(t3[0].turn, 3);
  }
  sample_and_build(r, 1);
  EXPECT_TRUE(r.judged(1, fail()).empty());
  EXPECT_EQ(r.attempt(1).end, attempt_end::out_of_turns);
  sample_and_build(r, 2);
  auto fin = r.judged(2, fail());
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].what, kind::finished);
  EXPECT_EQ(r.attempt(2).turns.size(), 3u);
}

TEST(Rollout, PrunedEasyKeepsTurnOneStragglersByDefault) {
  rollout r(cfg(4, 3)); // t_min = 2 of 4
  r.start();
  for (int a = 0; a < 4; ++a)
    sample_and_build(r, a);
  r.judged(0, pass());
  r.judged(1, pass());
  // Three passed: at most one failure < 2: easy. No cancel: the stragglers keep their verdicts.
  auto acts = r.judged(2, pass());
  EXPECT_FALSE(has(acts, kind::cancel));
  EXPECT_EQ(r.decision(), group_decision::prune_easy);
  EXPECT_FALSE(r.finished());
  auto fin = r.judged(3, fail());
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].what, kind::finished);
  EXPECT_EQ(r.attempt(3).end, attempt_end::not_expanded);
  EXPECT_TRUE(is_ranked(r.attempt(3).end));
  EXPECT_FALSE(r.activated());
}

TEST(Rollout, PrunedGroupCancelsTurnOneStragglersWhenAsked) {
  rollout r(cfg(4, 3, /*cancel=*/true));
  r.start();
  for (int a = 0; a < 3; ++a)
    sample_and_build(r, a);
  r.sampled(3, "slow", 10); // still compiling
  r.judged(0, pass());
  r.judged(1, pass());
  auto acts = r.judged(2, pass());
  ASSERT_EQ(acts.size(), 2u);
  EXPECT_EQ(acts[0].what, kind::cancel);
  EXPECT_EQ(acts[0].attempts, (std::vector<int>{3}));
  EXPECT_EQ(acts[0].stage, attempt_phase::compiling);
  EXPECT_EQ(acts[1].what, kind::finished);
  EXPECT_EQ(r.attempt(3).end, attempt_end::cancelled);
  EXPECT_FALSE(is_ranked(r.attempt(3).end));
  // Its late build reply is ignored.
  EXPECT_TRUE(r.built(3).empty());
  EXPECT_TRUE(r.judged(3, fail()).empty());
}

TEST(Rollout, PrunedHopelessNeverStartsALaterTurn) {
  rollout_config c = cfg(4, 3);
  c.dcp = dcp_config{1, 2, false, true}; // expand only when 1 <= N_fail <= 2
  rollout r(c);
  r.start();
  for (int a = 0; a < 4; ++a)
    sample_and_build(r, a);
  EXPECT_TRUE(r.judged(0, fail()).empty());
  EXPECT_TRUE(r.judged(1, fail()).empty()); // [2, 4]: undecided
  auto acts = r.judged(2, fail());          // 3 > 2: hopeless
  EXPECT_FALSE(has(acts, kind::generate));
  EXPECT_EQ(r.decision(), group_decision::prune_hopeless);
  EXPECT_EQ(r.attempt(0).end, attempt_end::not_expanded);
  r.judged(3, fail());
  EXPECT_TRUE(r.finished());
}

// Today's stuck group: a dropped turn-1 attempt must count, or the decision never comes and the
// failed attempt waits forever.
TEST(Rollout, DroppedTurnOneAttemptsLetDcpDecideOnTheRest) {
  rollout r(cfg(4, 3)); // t_min = ceil(0.5 * n)
  r.start();
  for (int a = 0; a < 2; ++a)
    sample_and_build(r, a);
  r.sampled(2, "code2", 10);
  r.sampled(3, "code3", 10);
  EXPECT_TRUE(r.judged(0, fail()).empty()); // N_fail in [1, 3] of 4, t_min 2: undecided
  EXPECT_TRUE(r.judged(1, pass()).empty());
  EXPECT_EQ(r.attempt(0).phase, attempt_phase::waiting_dcp);
  // Attempt 2's compile job fails on every try: dropped, out of the ranking; still undecided
  // (n = 3, t_min = 2, N_fail in [1, 2]).
  EXPECT_TRUE(r.dropped(2, "compiler_pool: job failed after 2 tries").empty());
  EXPECT_EQ(r.attempt(2).end, attempt_end::dropped);
  EXPECT_EQ(r.attempt(2).end_reason, "compiler_pool: job failed after 2 tries");
  EXPECT_FALSE(is_ranked(r.attempt(2).end));
  EXPECT_EQ(r.decision(), group_decision::undecided);
  // Attempt 3 too: n = 2, t_min = 1, N_fail = 1: expand, and the waiting attempt moves on.
  auto acts = r.dropped(3, "executor_pool: the reference crashed");
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  EXPECT_EQ(acts[0].attempts, (std::vector<int>{0}));
  EXPECT_EQ(acts[0].turn, 2);
  EXPECT_EQ(r.decision(), group_decision::expand);
  EXPECT_EQ(r.turn1_lost(), 2);
}

TEST(Rollout, DropWhileUndecidedShrinksTheGroupDcpDecidesOn) {
  rollout r(cfg(4, 3)); // t_min = 2 of 4
  r.start();
  for (int a = 0; a < 4; ++a)
    sample_and_build(r, a);
  r.judged(0, fail());
  r.judged(1, pass());
  r.judged(2, pass()); // N_fail in [1, 2]: undecided
  EXPECT_EQ(r.decision(), group_decision::undecided);
  // The last attempt is lost: n = 3, t_min = ceil(1.5) = 2, N_fail = 1: easy. Nothing waits
  // forever; the waiting attempt ends not expanded and the group finishes.
  auto acts = r.dropped(3, "executor_pool: the reference crashed");
  EXPECT_EQ(r.decision(), group_decision::prune_easy);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::finished);
  EXPECT_EQ(r.attempt(0).end, attempt_end::not_expanded);
}

TEST(Rollout, AllDroppedGroupFinishesWithNoVerdicts) {
  rollout r(cfg(3, 3));
  auto s = r.start();
  // The turn-1 generation failed: every attempt of the request is dropped.
  std::vector<rollout_action> last;
  for (int a : s[0].attempts)
    last = r.dropped(a, "generation failed");
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].what, kind::finished);
  EXPECT_EQ(r.decision(), group_decision::no_verdicts);
  for (auto& at : r.attempts())
    EXPECT_EQ(at.end, attempt_end::dropped);
  EXPECT_EQ(r.turn1_lost(), 3);
}

TEST(Rollout, LaterTurnDropEndsTheAttemptOnly) {
  rollout r(cfg(2, 3));
  r.start();
  sample_and_build(r, 0);
  sample_and_build(r, 1);
  r.judged(0, fail());
  r.judged(1, pass());
  sample_and_build(r, 0); // turn 2
  auto acts = r.dropped(0, "lost");
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::finished);
  EXPECT_EQ(r.turn1_lost(), 0); // its turn-1 verdict was counted
  EXPECT_EQ(r.attempt(0).end, attempt_end::dropped);
}

TEST(Rollout, UnsupportedCodeIsLeftOutOfDcpAndRanking) {
  rollout r(cfg(4, 3)); // t_min = 2 of n
  r.start();
  for (int a = 0; a < 4; ++a)
    sample_and_build(r, a);
  r.judged(0, {turn_verdict::unsupported, "not evaluated", false, 0});
  r.judged(1, {turn_verdict::unsupported, "not evaluated", false, 0});
  // n = 2, t_min = 1: one failure is enough to expand.
  auto acts = r.judged(2, fail());
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  EXPECT_EQ(r.attempt(0).end, attempt_end::unsupported);
  EXPECT_FALSE(is_ranked(r.attempt(0).end));
  EXPECT_EQ(r.turn1_lost(), 2);
}

TEST(Rollout, NoCodeIsAFailedTurnWithItsFeedback) {
  rollout r(cfg(2, 2));
  r.start();
  // t_min = ceil(0.5 * 2) = 1 and N_fail >= 1 is certain at once: expand to turn 2.
  auto acts = r.sampled_without_code(0, 7, "rejected: no code block");
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  EXPECT_EQ(acts[0].turn, 2);
  EXPECT_EQ(r.attempt(0).turns[0].feedback, "rejected: no code block");
  EXPECT_FALSE(r.attempt(0).turns[0].has_code);
  EXPECT_EQ(r.attempt(0).turns[0].tokens, 7);
}

TEST(Rollout, NoRoomEndsAnAttemptUnsolvedButRanked) {
  rollout r(cfg(2, 3));
  r.start();
  sample_and_build(r, 0);
  sample_and_build(r, 1);
  r.judged(1, pass());
  auto acts = r.judged(0, fail());
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  auto fin = r.no_room(0);
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].what, kind::finished);
  EXPECT_EQ(r.attempt(0).end, attempt_end::no_room);
  EXPECT_TRUE(is_ranked(attempt_end::no_room));
}

TEST(Rollout, DcpOffExpandsTheFirstFailure) {
  rollout_config c = cfg(3, 2);
  c.dcp.enabled = false;
  rollout r(c);
  r.start();
  for (int a = 0; a < 3; ++a)
    sample_and_build(r, a);
  r.judged(0, pass());
  auto acts = r.judged(1, fail());
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::generate);
  EXPECT_EQ(r.decision(), group_decision::expand);
}

// A job cancelled by someone other than the rollout (a pool shutting down): the attempt ends
// cancelled, out of the ranking; on turn 1 it is lost to DCP like a drop.
TEST(Rollout, CancelledFromOutsideEndsTheAttemptAndCountsAsLost) {
  rollout r(cfg(2, 3)); // t_min = ceil(0.5 * n)
  r.start();
  sample_and_build(r, 0);
  sample_and_build(r, 1);
  EXPECT_TRUE(r.judged(0, pass()).empty()); // n = 2, t_min 1: N_fail in [0, 1], undecided
  auto acts = r.cancelled(1);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].what, kind::finished);
  EXPECT_EQ(r.attempt(1).end, attempt_end::cancelled);
  EXPECT_FALSE(is_ranked(r.attempt(1).end));
  EXPECT_EQ(r.turn1_lost(), 1);
  EXPECT_EQ(r.decision(), group_decision::prune_easy); // n = 1, t_min 1, N_fail 0
  EXPECT_TRUE(r.cancelled(1).empty());                 // once
}

TEST(Rollout, LateAndDuplicateEventsAreIgnored) {
  rollout r(cfg(2, 1));
  r.start();
  sample_and_build(r, 0);
  sample_and_build(r, 1);
  r.judged(0, pass());
  EXPECT_TRUE(r.judged(0, fail()).empty());  // a second verdict
  EXPECT_TRUE(r.sampled(0, "x", 1).empty()); // a sample for an ended attempt
  EXPECT_TRUE(r.dropped(0, "late").empty());
  EXPECT_TRUE(r.built(1).empty());           // already executing
  EXPECT_TRUE(r.judged(5, pass()).empty());  // no such attempt
  EXPECT_EQ(r.attempt(0).end, attempt_end::solved);
  r.judged(1, fail());
  EXPECT_TRUE(r.finished());
  EXPECT_TRUE(r.judged(1, pass()).empty());
}

TEST(Rollout, NamesRoundTrip) {
  for (auto e : {attempt_end::solved, attempt_end::dropped, attempt_end::unsupported,
                 attempt_end::no_room}) {
    attempt_end back = attempt_end::none;
    EXPECT_TRUE(parse_attempt_end(to_string(e), back));
    EXPECT_EQ(back, e);
  }
  group_decision d = group_decision::undecided;
  EXPECT_TRUE(parse_group_decision("no_verdicts", d));
  EXPECT_EQ(d, group_decision::no_verdicts);
  EXPECT_FALSE(parse_group_decision("maybe", d));
}
