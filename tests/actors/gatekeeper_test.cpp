// The DCP gatekeeper with the real compiler and executor pools (nvcc + the CPU emulation) and a
// scripted generator pool (a test double with the generator pool's typed interface that answers
// with fixed kernels, so the verdicts are known in advance):
//  - with train.cancel_pruned_turn1, a pruned group cancels its stragglers at once: a compile
//    still queued never runs; by default they keep their verdicts;
//  - the early DCP decision starts turn 2 before the group's last turn-1 verdict is in;
//  - a later turn answered with SEARCH/REPLACE edits is built from the previous turn's code with
//    the edits applied, and an edit that does not apply is the answer's fault (rejected).
#include "tests/actors/real_pools_fixture.hpp"

#include "policy/text/code_edit.hpp"

using namespace leap;
using namespace leap::test;

TEST_F(gatekeeper_fixture, PrunedGroupCancelsItsStragglersAndTheirQueuedCompilesNeverRun) {
  start(1); // one compiler: the stragglers' compiles queue behind each other
  auto bad = candidate("compile_error.cu");
  auto good = candidate("grid_stride.cu");
  prewarm({{bad, false}, {svc->tasks->at("vector_add").reference_source, true}});
  auto before = compile_stats();
  // G = 8, DCP debugging only groups with 4 <= N_fail <= 4: five cached compile errors make the
  // group certainly hopeless (N_fail >= 5) while three never-compiled candidates behind them are
  // compiling (one, on the single compiler) or queued (two).
  auto sc = std::make_shared<script>();
  for (int i = 0; i < 5; ++i)
    sc->turn1.push_back(bad);
  for (int i = 0; i < 3; ++i)
    sc->turn1.push_back(uncached(good));
  sc->later = good;
  algo::dcp_config dcp;
  dcp.t_min = 0.5;
  dcp.t_max = 0.5;
  auto r = run_group(sc, 8, 3, dcp, /*cancel_pruned_turn1=*/true);
  EXPECT_EQ(r.dcp, algo::group_decision::prune_hopeless);
  EXPECT_FALSE(r.activated);
  EXPECT_EQ(r.cancelled, 3u);
  ASSERT_EQ(r.trajectories.size(), 8u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].solved_turn, 0) << i;
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].end, algo::attempt_end::not_expanded) << i;
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].turns.size(), 1u) << i;
  }
  for (int i = 5; i < 8; ++i)
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].end, algo::attempt_end::cancelled) << i;
  EXPECT_EQ(r.cache_hits, 5u);
  EXPECT_EQ(r.compiles, 0u);
  auto after = compile_stats();
  // Five hits and the reference ran; of the three stragglers at most the one already running
  // completed (killed): the queued ones were taken out of the queue and never started.
  EXPECT_LE(after.completed - before.completed, 6u + 1u);
  EXPECT_GE(after.cancelled - before.cancelled, 2u);
}

TEST_F(gatekeeper_fixture, EarlyDecisionStartsTurnTwoBeforeTheLastTurnOneVerdict) {
  start(2);
  auto bad = candidate("compile_error.cu");
  auto good = candidate("grid_stride.cu");
  prewarm({{bad, false}, {good, false}, {svc->tasks->at("vector_add").reference_source, true}});
  // G = 4, paper DCP: two fast compile errors make N_fail >= 2 certain; two slow, never compiled
  // candidates are still in flight when the failed attempts are sent to turn 2.
  auto sc = std::make_shared<script>();
  sc->turn1 = {bad, bad, uncached(good), uncached(good)};
  sc->later = good;
  auto r = run_group(sc, 4, 2);
  EXPECT_EQ(r.dcp, algo::group_decision::expand);
  EXPECT_TRUE(r.activated);
  EXPECT_EQ(r.cancelled, 0u);
  ASSERT_EQ(r.trajectories.size(), 4u);
  EXPECT_EQ(r.trajectories[0].solved_turn, 2);
  EXPECT_EQ(r.trajectories[1].solved_turn, 2);
  EXPECT_EQ(r.trajectories[2].solved_turn, 1);
  EXPECT_EQ(r.trajectories[3].solved_turn, 1);
  double first_turn2 = 1e9, last_turn1 = 0;
  for (auto& t : r.trajectories) {
    ASSERT_FALSE(t.turns.empty());
    last_turn1 = std::max(last_turn1, t.turns[0].t_verdict);
    if (t.turns.size() > 1)
      first_turn2 = std::min(first_turn2, t.turns[1].t_generated);
  }
  EXPECT_LT(first_turn2, last_turn1) << "turn 2 waited for the whole group";
  EXPECT_EQ(r.compiles_later_turns, 2u);
  EXPECT_EQ(r.trajectories[0].turns[0].status, env::status::compile_error);
}

// The default: a pruned group's turn-1 stragglers keep running and keep their verdicts (the
// rank reward needs them); only later turns are never started.
TEST_F(gatekeeper_fixture, PrunedGroupKeepsItsTurnOneStragglersByDefault) {
  start(2);
  auto bad = candidate("compile_error.cu");
  auto good = candidate("grid_stride.cu");
  prewarm({{bad, false}, {svc->tasks->at("vector_add").reference_source, true}});
  auto sc = std::make_shared<script>();
  sc->turn1 = {bad, bad, bad, uncached(good)}; // 3 failures > t_max = 2: hopeless
  sc->later = good;
  algo::dcp_config dcp;
  dcp.t_min = 0.25;
  dcp.t_max = 0.5;
  auto r = run_group(sc, 4, 3, dcp);
  EXPECT_EQ(r.dcp, algo::group_decision::prune_hopeless);
  EXPECT_EQ(r.cancelled, 0u);
  EXPECT_FALSE(r.activated);
  ASSERT_EQ(r.trajectories.size(), 4u);
  EXPECT_EQ(r.trajectories[3].end, algo::attempt_end::solved);
  EXPECT_EQ(r.trajectories[3].solved_turn, 1);
  EXPECT_TRUE(r.trajectories[3].turns[0].judged);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].end, algo::attempt_end::not_expanded);
    EXPECT_EQ(r.trajectories[static_cast<std::size_t>(i)].turns.size(), 1u);
  }
  EXPECT_EQ(r.compiles_later_turns, 0u);
}

TEST_F(gatekeeper_fixture, AnEditAnswerIsAppliedToThePreviousTurnsCode) {
  start(2);
  auto bad = candidate("compile_error.cu");
  auto good = candidate("grid_stride.cu");
  prewarm({{bad, false}, {good, false}, {svc->tasks->at("vector_add").reference_source, true}});
  auto sc = std::make_shared<script>();
  sc->turn1 = {bad, bad, good, good};
  sc->later = "The fix:\n" + policy::render_edit(bad, good) + "\n";
  sc->later_raw = true;
  auto r = run_group(sc, 4, 2);
  ASSERT_EQ(r.trajectories.size(), 4u);
  for (int i : {0, 1}) {
    const auto& t = r.trajectories[static_cast<std::size_t>(i)];
    EXPECT_EQ(t.solved_turn, 2) << i;
    ASSERT_EQ(t.turns.size(), 2u);
    EXPECT_EQ(t.turns[0].status, env::status::compile_error);
    EXPECT_EQ(t.turns[1].status, env::status::correct);
    // Each turn's record keeps the code the environment judged (turn 2: the edit applied) and
    // the feedback the next turn showed.
    EXPECT_EQ(t.turns[0].code, bad);
    EXPECT_EQ(t.turns[1].code, good);
    EXPECT_NE(t.turns[0].feedback.find("compile error"), std::string::npos) << t.turns[0].feedback;
  }
  // An edit whose SEARCH lines are not in the code: rejected, with the reason as feedback.
  sc->later = "```edit\n<<<<<<< SEARCH\nint no_such_line;\n=======\nint x;\n>>>>>>> REPLACE\n```";
  auto miss = run_group(sc, 4, 2);
  ASSERT_EQ(miss.trajectories.size(), 4u);
  const auto& t = miss.trajectories[0];
  ASSERT_EQ(t.turns.size(), 2u);
  EXPECT_EQ(t.turns[1].status, env::status::rejected);
  EXPECT_EQ(t.turns[1].reason, "no_code");
}
