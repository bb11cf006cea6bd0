// The gatekeeper's pure helpers: the stage meter's utilisation arithmetic, the sync-mode stage
// barrier's order (compile, execute, then the next generations, each only when nothing is out),
// and the reference cache (a broken reference is remembered; one lost to the infrastructure is
// built again).
#include "actors/reference_cache.hpp"
#include "actors/stage_barrier.hpp"
#include "actors/stage_meter.hpp"

#include <gtest/gtest.h>

using namespace leap;
using namespace std::chrono_literals;

TEST(StageMeter, BusyWorkerSecondsPerWorkerCappedAtTheWorkers) {
  auto t0 = std::chrono::steady_clock::time_point{};
  actors::stage_meter m(2, 1, 1, t0);
  m.enter(actors::stage::generate, t0);
  m.enter(actors::stage::compile, t0);
  m.enter(actors::stage::compile, t0); // two jobs on one compiler: capped at 1
  m.leave(actors::stage::generate, t0 + 2s);
  auto u = m.usage(t0 + 4s);
  EXPECT_DOUBLE_EQ(u.elapsed_seconds, 4.0);
  EXPECT_DOUBLE_EQ(u.generate, 1.0); // 1 of 2 workers for 2 s
  EXPECT_DOUBLE_EQ(u.compile, 4.0);
  EXPECT_DOUBLE_EQ(u.execute, 0.0);
}

TEST(StageBarrier, AsyncRunsAtOnce) {
  actors::stage_barrier b(false);
  int ran = 0;
  b.submit(actors::stage::execute, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

TEST(StageBarrier, SyncRunsOneStageAtATimeInOrder) {
  actors::stage_barrier b(true);
  std::vector<std::string> log;
  b.submit(actors::stage::generate, [&] {
    log.push_back("generate");
    b.sent();
  });
  EXPECT_TRUE(log.empty()); // waits for arm()
  b.arm();
  ASSERT_EQ(log, (std::vector<std::string>{"generate"}));
  // While the generation is out, work of later stages queues.
  b.submit(actors::stage::execute, [&] { log.push_back("execute"); });
  b.submit(actors::stage::compile, [&] { log.push_back("compile"); });
  b.submit(actors::stage::generate, [&] { log.push_back("generate 2"); });
  EXPECT_EQ(log.size(), 1u);
  b.replied(); // nothing out: compile first, then execute, then the next generations
  EXPECT_EQ(log, (std::vector<std::string>{"generate", "compile", "execute", "generate 2"}));
}

TEST(ReferenceCache, BuildsOnceAndAnswersEveryWaiter) {
  actors::reference_cache c;
  std::vector<std::string> got;
  auto cb = [&](const result<std::string>& r) { got.push_back(r ? *r : "error: " + r.message()); };
  EXPECT_TRUE(c.request("relu", cb));  // the first starts the build
  EXPECT_FALSE(c.request("relu", cb)); // the second waits
  c.built("relu", "/cache/ref");
  EXPECT_EQ(got, (std::vector<std::string>{"/cache/ref", "/cache/ref"}));
  EXPECT_FALSE(c.request("relu", cb)); // known: answered at once
  EXPECT_EQ(got.size(), 3u);
}

TEST(ReferenceCache, BrokenReferenceIsRememberedInfrastructureFailureIsNot) {
  actors::reference_cache c;
  std::vector<std::string> got;
  auto cb = [&](const result<std::string>& r) { got.push_back(r ? *r : "error: " + r.message()); };
  EXPECT_TRUE(c.request("a", cb));
  c.failed("a", "does not build", /*permanent=*/true);
  EXPECT_FALSE(c.request("a", cb));
  EXPECT_EQ(got, (std::vector<std::string>{"error: does not build", "error: does not build"}));
  EXPECT_TRUE(c.request("b", cb));
  c.failed("b", "its compile job failed on 2 tries", /*permanent=*/false);
  EXPECT_TRUE(c.request("b", cb)); // built again
  c.built("b", "/cache/b");
  EXPECT_EQ(got.back(), "/cache/b");
}
