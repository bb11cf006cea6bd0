// The rollout driver without actors: a port that keeps every job until the test answers it, so
// each case says exactly which jobs went out, in which order, and what the driver made of the
// answers (verdicts with their build's timings, drops for the infrastructure's failures, one
// reference build per task, held jobs that are no longer wanted).
#include "actors/rollout_driver.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace leap::actors {
namespace {

using algo::attempt_phase;

struct fake_pools {
  struct compile_job {
    std::uint64_t group;
    int attempt;
    msg::compile_request req;
    job_port::done_fn<msg::compile_reply> done;
  };
  struct exec_job {
    std::uint64_t group;
    int attempt;
    msg::exec_request req;
    job_port::done_fn<msg::exec_reply> done;
  };
  std::deque<compile_job> compiles;
  std::deque<exec_job> execs;
  std::vector<std::uint64_t> cancelled;
  std::vector<std::function<void()>> held; // admitted jobs, when holding
  bool hold = false;
  int not_sent = 0;

  job_port port() {
    job_port p;
    p.admit = [this](std::uint64_t, int, attempt_phase, std::function<void()> start) {
      if (hold)
        held.push_back(std::move(start));
      else
        start();
    };
    p.not_sent = [this] { ++not_sent; };
    p.compile = [this](std::uint64_t g, int a, msg::compile_request r,
                       job_port::done_fn<msg::compile_reply> d) {
      compiles.push_back({g, a, std::move(r), std::move(d)});
    };
    p.execute = [this](std::uint64_t g, int a, msg::exec_request r,
                       job_port::done_fn<msg::exec_reply> d) {
      execs.push_back({g, a, std::move(r), std::move(d)});
    };
    p.cancel = [this](attempt_phase, std::uint64_t job) { cancelled.push_back(job); };
    return p;
  }
};

msg::compile_reply built(const std::string& key, double seconds) {
  msg::compile_reply r;
  r.status = env::build_status::ok;
  r.key = key;
  r.seconds = seconds;
  r.stages = {seconds};
  return r;
}

msg::compile_reply failed_build(env::build_status st, const std::string& why) {
  msg::compile_reply r;
  r.status = st;
  r.stage = "nvcc";
  r.diagnostics = why;
  return r;
}

msg::exec_reply ran(env::status st) {
  msg::exec_reply r;
  r.v.st = st;
  r.v.feedback = env::to_string(st);
  r.v.run_seconds = 0.25;
  r.seed = 42;
  return r;
}

struct driver_fixture : ::testing::Test {
  env::task_spec task;
  fake_pools pools;
  std::vector<std::pair<int, env::verdict>> verdicts;
  std::vector<std::pair<int, std::string>> drops;
  int finished = 0;
  std::unique_ptr<rollout_driver> driver;

  void SetUp() override {
    task.name = "vector_add";
    task.reference_source = "// the reference";
    make(true);
  }

  void make(bool reference_at_open) {
    rollout_driver_options o;
    o.reference_at_open = reference_at_open;
    driver_events ev;
    ev.judged = [this](std::uint64_t, int a, const env::verdict& v, const msg::exec_reply*) {
      verdicts.emplace_back(a, v);
    };
    ev.dropped = [this](std::uint64_t, int a, const std::string& why) { drops.emplace_back(a, why); };
    ev.finished = [this](std::uint64_t) { ++finished; };
    driver = std::make_unique<rollout_driver>(o, pools.port(), std::move(ev));
  }

  algo::rollout_config one_turn(int g) {
    algo::rollout_config c;
    c.group_size = g;
    c.max_turns = 1;
    return c;
  }

  // Opens group `id` and samples `codes` as the attempts' turn-1 code.
  void start(std::uint64_t id, const std::vector<std::string>& codes,
             driven_group_options go = {}) {
    ASSERT_TRUE(driver->open(id, one_turn(static_cast<int>(codes.size())), task, go));
    auto& r = driver->rollout(id);
    (void)r.start();
    std::vector<algo::rollout_action> acts;
    for (std::size_t a = 0; a < codes.size(); ++a) {
      auto more = r.sampled(static_cast<int>(a), codes[a], 10);
      acts.insert(acts.end(), more.begin(), more.end());
    }
    driver->perform(id, std::move(acts));
  }

  fake_pools::compile_job take_compile() {
    EXPECT_FALSE(pools.compiles.empty());
    auto j = std::move(pools.compiles.front());
    pools.compiles.pop_front();
    return j;
  }
};

TEST_F(driver_fixture, BuildsTheReferenceOnceAndStampsTheBuildOnTheRunsVerdict) {
  start(1, {"good", "bad"});
  // The reference (opened with the group), then both candidates.
  ASSERT_EQ(pools.compiles.size(), 3u);
  auto ref = take_compile();
  EXPECT_TRUE(ref.req.reference);
  EXPECT_EQ(ref.attempt, -1);
  EXPECT_EQ(ref.req.source, "// the reference");
  auto good = take_compile();
  auto bad = take_compile();
  EXPECT_EQ(good.req.source, "good");
  EXPECT_EQ(good.req.priority, 1u); // older groups first
  bad.done(failed_build(env::build_status::compile_error, "error: expected ';'"));
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].first, 1);
  EXPECT_EQ(verdicts[0].second.st, env::status::compile_error);
  good.done(built("cand-key", 1.5));
  EXPECT_TRUE(pools.execs.empty()); // waits for the reference
  ref.done(built("ref-key", 2.0));
  ASSERT_EQ(pools.execs.size(), 1u);
  EXPECT_EQ(pools.execs[0].req.candidate_build, "cand-key");
  EXPECT_EQ(pools.execs[0].req.reference_build, "ref-key");
  pools.execs[0].done(ran(env::status::correct));
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[1].second.st, env::status::correct);
  EXPECT_DOUBLE_EQ(verdicts[1].second.compile_seconds, 1.5);
  EXPECT_EQ(verdicts[1].second.compile_stages, std::vector<double>{1.5});
  EXPECT_EQ(finished, 1);
  // A second group of the task: no second reference build.
  start(2, {"again"});
  ASSERT_EQ(pools.compiles.size(), 1u);
  EXPECT_FALSE(pools.compiles[0].req.reference);
}

TEST_F(driver_fixture, AJobLostInsideLeapDropsTheAttemptAndIsNoVerdict) {
  start(1, {"a", "b"});
  take_compile(); // the reference, never answered here
  auto a = take_compile();
  auto b = take_compile();
  a.done(make_error("compiling failed inside leap (spawn): no such file"));
  b.done(failed_build(env::build_status::internal_error, "worker crashed"));
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_NE(drops[0].second.find("compile job failed: compiling failed inside leap"),
            std::string::npos)
    << drops[0].second;
  EXPECT_NE(drops[1].second.find("gave no verdict (internal_error)"), std::string::npos)
    << drops[1].second;
  EXPECT_TRUE(verdicts.empty());
  EXPECT_EQ(driver->rollout(1).attempt(0).end, algo::attempt_end::dropped);
  EXPECT_EQ(finished, 1);
}

TEST_F(driver_fixture, AReferenceThatDoesNotBuildDropsEveryRunAndIsRemembered) {
  start(1, {"a"});
  auto ref = take_compile();
  take_compile().done(built("cand", 1));
  ref.done(failed_build(env::build_status::compile_error, "reference broken"));
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_NE(drops[0].second.find("the reference of task 'vector_add' does not build"),
            std::string::npos)
    << drops[0].second;
  start(2, {"b"});
  ASSERT_EQ(pools.compiles.size(), 1u); // remembered: not built again
  take_compile().done(built("cand2", 1));
  EXPECT_EQ(drops.size(), 2u);
  EXPECT_TRUE(pools.execs.empty());
}

TEST_F(driver_fixture, TheReferenceCheckedAsACandidateIsBuiltOnceAsTheReference) {
  driven_group_options go;
  go.candidate_is_reference = true;
  go.dump_inputs = true;
  start(1, {"ignored"}, go);
  ASSERT_EQ(pools.compiles.size(), 1u); // no separate reference build
  auto only = take_compile();
  EXPECT_TRUE(only.req.reference);
  EXPECT_EQ(only.req.source, "// the reference");
  only.done(built("ref-key", 3));
  ASSERT_EQ(pools.execs.size(), 1u);
  EXPECT_EQ(pools.execs[0].req.candidate_build, "ref-key");
  EXPECT_EQ(pools.execs[0].req.reference_build, "ref-key");
  EXPECT_TRUE(pools.execs[0].req.dump_inputs);
  // Its failure to build is the reference's failure, not a verdict.
  task.name = "other";
  start(2, {"ignored"}, go);
  take_compile().done(failed_build(env::build_status::compile_error, "broken"));
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_NE(drops[0].second.find("the reference of task 'other' does not build"),
            std::string::npos)
    << drops[0].second;
}

TEST_F(driver_fixture, AHeldJobOfAnAttemptThatEndedMeanwhileNeverGoesOut) {
  make(false); // the reference only when a run needs it
  pools.hold = true;
  start(1, {"a", "b"});
  EXPECT_TRUE(pools.compiles.empty());
  ASSERT_EQ(pools.held.size(), 2u);
  // Attempt 1 is lost before its compile leaves the barrier; the owner asks awaiting().
  driver->drop(1, 1, "the node went away");
  EXPECT_TRUE(driver->awaiting(1, 0, attempt_phase::compiling));
  EXPECT_FALSE(driver->awaiting(1, 1, attempt_phase::compiling));
  pools.held[0]();
  ASSERT_EQ(pools.compiles.size(), 1u);
  EXPECT_EQ(pools.compiles[0].attempt, 0);
  // Its execute is held too; the reference is asked for only when it goes out.
  take_compile().done(built("cand", 1));
  ASSERT_EQ(pools.held.size(), 3u);
  EXPECT_TRUE(pools.compiles.empty());
  pools.held[2]();
  ASSERT_EQ(pools.compiles.size(), 1u);
  EXPECT_TRUE(pools.compiles[0].req.reference);
  // Closed while it waits for the reference: nothing is sent, and the owner is told.
  driver->close(1);
  take_compile().done(built("ref", 1));
  EXPECT_TRUE(pools.execs.empty());
  EXPECT_EQ(pools.not_sent, 1);
}

TEST_F(driver_fixture, ClosingAGroupCancelsItsJobsInFlight) {
  start(1, {"a", "b"});
  take_compile();
  auto a = take_compile();
  auto b = take_compile();
  driver->close(1);
  EXPECT_EQ(pools.cancelled, (std::vector<std::uint64_t>{a.req.id, b.req.id}));
  a.done(built("late", 1)); // a late answer finds no group
  EXPECT_TRUE(pools.execs.empty());
  EXPECT_TRUE(verdicts.empty());
  EXPECT_FALSE(driver->contains(1));
}

} // namespace
} // namespace leap::actors
