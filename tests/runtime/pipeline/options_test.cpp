// runtime/pipeline/options: the gatekeeper options of an evaluation, whose request timeouts cover
// the whole batch queued in the pools (hand-computed cases).
#include "runtime/pipeline/options.hpp"

#include <gtest/gtest.h>

using namespace leap;
using std::chrono::milliseconds;

TEST(EvalGatekeeperOptions, RequestTimeoutsCoverTheWholeBatchDrainingThroughThePools) {
  config::leap_config cfg;
  cfg.compiler.workers = 2;
  cfg.compiler.timeout_seconds = 120;
  cfg.executor.workers = 2;
  cfg.executor.timeout_seconds = 30;
  config::eval_section ec;
  ec.group_size = 4;
  ec.max_turns = 1;
  // 300 tasks x 4 samples x 1 turn = 1,200 builds + 300 reference builds over 2 compilers: 750
  // waves of 120 s x 3, plus 60 s; 1,200 runs over 2 executors: 600 waves of (30 x 2 + 10) s.
  auto go = runtime::eval_gatekeeper_options_of(cfg, ec, 300);
  EXPECT_EQ(go.compile_timeout, milliseconds((750 * 360 + 60) * 1000));
  EXPECT_EQ(go.exec_timeout, milliseconds((600 * 70 + 60) * 1000));
  EXPECT_EQ(go.rollout.group_size, 4);
  EXPECT_EQ(go.rollout.max_turns, 1);
  EXPECT_FALSE(go.rollout.dcp.enabled);
  // 3 turns multiply the jobs: 2 tasks x 8 x 3 = 48 builds + 2 references over 2: 25 waves.
  ec.group_size = 8;
  ec.max_turns = 3;
  go = runtime::eval_gatekeeper_options_of(cfg, ec, 2);
  EXPECT_EQ(go.compile_timeout, milliseconds((25 * 360 + 60) * 1000));
  EXPECT_EQ(go.exec_timeout, milliseconds((24 * 70 + 60) * 1000));
}

TEST(EvalGatekeeperOptions, ASmallBatchKeepsTheGatekeepersDefaults) {
  config::leap_config cfg;
  cfg.compiler.workers = 8;
  cfg.compiler.timeout_seconds = 1;
  cfg.executor.workers = 8;
  cfg.executor.timeout_seconds = 1;
  config::eval_section ec;
  ec.group_size = 1;
  ec.max_turns = 1;
  const actors::gatekeeper_options defaults;
  auto go = runtime::eval_gatekeeper_options_of(cfg, ec, 1);
  EXPECT_EQ(go.compile_timeout, defaults.compile_timeout);
  EXPECT_EQ(go.exec_timeout, defaults.exec_timeout);
  EXPECT_EQ(go.generate_timeout, defaults.generate_timeout);
}
