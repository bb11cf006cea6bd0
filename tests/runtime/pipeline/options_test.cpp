// runtime/pipeline/options: the request budget of a batch queued in the pools, and the
// gatekeeper options of an evaluation, whose timeouts are that budget (hand-computed cases).
#include "runtime/pipeline/options.hpp"

#include <gtest/gtest.h>

using namespace leap;
using std::chrono::milliseconds;

namespace {

// A configuration with `workers` compilers and executors and these per-job time limits.
config::leap_config pools(int workers, double compile_seconds, double exec_seconds) {
  config::leap_config cfg;
  cfg.compiler.workers = cfg.executor.workers = workers;
  cfg.compiler.timeout_seconds = compile_seconds;
  cfg.executor.timeout_seconds = exec_seconds;
  return cfg;
}

config::eval_section eval_of(int group_size, int max_turns) {
  config::eval_section ec;
  ec.group_size = group_size;
  ec.max_turns = max_turns;
  return ec;
}

} // namespace

// `leap check`'s batch of 5 checks over 2 workers: 10 builds in 5 waves, 5 runs in 3 waves.
TEST(BatchRequestBudget, WavesOfTheWorkersEachAtItsJobsTimeLimit) {
  auto b = runtime::batch_request_budget(pools(2, 120, 30), 10, 5);
  EXPECT_EQ(b.compile, milliseconds((5 * 360 + 60) * 1000));
  EXPECT_EQ(b.execute, milliseconds((3 * 70 + 60) * 1000));
}

TEST(EvalGatekeeperOptions, RequestTimeoutsCoverTheWholeBatchDrainingThroughThePools) {
  const auto cfg = pools(2, 120, 30);
  const auto ec = eval_of(4, 1);
  // 300 tasks x 4 samples x 1 turn = 1,200 builds + 300 reference builds over 2 compilers: 750
  // waves of 120 s x 3, plus 60 s; 1,200 runs over 2 executors: 600 waves of (30 x 2 + 10) s.
  auto go = runtime::eval_gatekeeper_options_of(cfg, ec, 300);
  EXPECT_EQ(go.compile_timeout, milliseconds((750 * 360 + 60) * 1000));
  EXPECT_EQ(go.exec_timeout, milliseconds((600 * 70 + 60) * 1000));
  EXPECT_EQ(go.rollout.group_size, 4);
  EXPECT_EQ(go.rollout.max_turns, 1);
  EXPECT_FALSE(go.rollout.dcp.enabled);
  // 3 turns multiply the jobs: 2 tasks x 8 x 3 = 48 builds + 2 references over 2: 25 waves.
  go = runtime::eval_gatekeeper_options_of(cfg, eval_of(8, 3), 2);
  EXPECT_EQ(go.compile_timeout, milliseconds((25 * 360 + 60) * 1000));
  EXPECT_EQ(go.exec_timeout, milliseconds((24 * 70 + 60) * 1000));
}

TEST(EvalGatekeeperOptions, ASmallBatchKeepsTheGatekeepersDefaults) {
  const actors::gatekeeper_options defaults;
  auto go = runtime::eval_gatekeeper_options_of(pools(8, 1, 1), eval_of(1, 1), 1);
  EXPECT_EQ(go.compile_timeout, defaults.compile_timeout);
  EXPECT_EQ(go.exec_timeout, defaults.exec_timeout);
  EXPECT_EQ(go.generate_timeout, defaults.generate_timeout);
}
