// The benchmark harness's pure parts: latency draws, attempt keys, the deadline timer, scenario
// files (errors with file:line and key), and the figures derived from hand-made traces.
#include "bench/pipeline/latency_model.hpp"
#include "bench/pipeline/report.hpp"
#include "bench/pipeline/results.hpp"
#include "bench/pipeline/scenario.hpp"
#include "bench/pipeline/timeline_svg.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace leap::bench;
using kind = leap::bench::job_event::kind;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "leap-bench-harness-test";
  std::filesystem::create_directories(dir);
  auto p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

const char* minimal_scenario = R"([train]
steps = 2
batch_groups = 2
group_size = 4

[bench]
time_scale = 0.5

[bench.compile]
model = "lognormal"
mean_seconds = 1.5
sigma = 0.5

[[bench.tasks]]
name = "easy"
count = 2
success = [0.9, 0.5]
)";

} // namespace

TEST(LatencyModel, FixedIsTheMeanAndLognormalHasTheRequestedMean) {
  latency_dist fixed{latency_dist::kind::fixed, 0.5, 0.0};
  EXPECT_DOUBLE_EQ(fixed.sample(0.1, 0.9), 0.5);
  latency_dist ln{latency_dist::kind::lognormal, 1.5, 0.5};
  double sum = 0, sum_log = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    auto h = mix({7, static_cast<std::uint64_t>(i)});
    double x = ln.sample(unit(h), unit(mix({h, 1})));
    ASSERT_GT(x, 0.0);
    sum += x;
    sum_log += std::log(x);
  }
  EXPECT_NEAR(sum / n, 1.5, 0.015);                            // E[X] = mean
  EXPECT_NEAR(sum_log / n, std::log(1.5) - 0.125, 0.005);     // E[ln X] = mu = ln(mean) - s^2/2
}

TEST(LatencyModel, DrawsDependOnEveryPartOfTheKey) {
  attempt_key a{1, 10, 2, 1};
  auto b = a;
  b.turn = 2;
  auto c = a;
  c.attempt = 3;
  EXPECT_EQ(a.draw(1, draw_kind::compile), attempt_key(a).draw(1, draw_kind::compile));
  EXPECT_NE(a.draw(1, draw_kind::compile), b.draw(1, draw_kind::compile));
  EXPECT_NE(a.draw(1, draw_kind::compile), c.draw(1, draw_kind::compile));
  EXPECT_NE(a.draw(1, draw_kind::compile), a.draw(2, draw_kind::compile));
  EXPECT_NE(a.draw(1, draw_kind::compile), a.draw(1, draw_kind::outcome));
  for (int i = 0; i < 1000; ++i) {
    double u = unit(mix({static_cast<std::uint64_t>(i)}));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(LatencyModel, AttemptKeysRoundTripThroughCodeAndTokens) {
  attempt_key k{5, (1ull << 40) + 12345, 7, 3};
  auto code = to_code(k, "mid_2");
  auto back = parse_code("```cuda\n" + code + "\n```");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->task, 5u);
  EXPECT_EQ(back->group, k.group);
  EXPECT_EQ(back->attempt, 7u);
  EXPECT_EQ(back->turn, 3u);
  auto t = from_tokens(to_tokens(k));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->group, k.group);
  EXPECT_EQ(t->turn, 3u);
  EXPECT_FALSE(parse_code("__global__ void k() {}").has_value());
  EXPECT_FALSE(from_tokens({1, 2}).has_value());
}

TEST(DeadlineTimer, RunsInDeadlineOrderAndCancelledJobsNeverRun) {
  deadline_timer timer;
  std::mutex mtx;
  std::vector<int> order;
  std::atomic<int> ran{0};
  auto push = [&](int v) {
    std::lock_guard<std::mutex> lk(mtx);
    order.push_back(v);
    ++ran;
  };
  using ms = std::chrono::milliseconds;
  timer.schedule(ms(60), [&] { push(3); });
  auto cancelled = timer.schedule(ms(30), [&] { push(99); });
  timer.schedule(ms(10), [&] { push(1); });
  timer.schedule(ms(40), [&] { push(2); });
  EXPECT_TRUE(timer.cancel(cancelled));
  EXPECT_FALSE(timer.cancel(cancelled));
  auto fast = timer.schedule(ms(0), [&] { push(0); });
  for (int i = 0; i < 400 && ran.load() < 4; ++i)
    std::this_thread::sleep_for(ms(5));
  EXPECT_FALSE(timer.cancel(fast)); // already ran
  std::lock_guard<std::mutex> lk(mtx);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Scenario, LoadsOrdinarySectionsAndBench) {
  auto r = load_scenario(write_temp("ok.toml", minimal_scenario));
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->name, "ok");
  EXPECT_EQ(r->cfg.train.batch_groups, 2);
  EXPECT_DOUBLE_EQ(r->time_scale, 0.5);
  EXPECT_EQ(r->compile.dist.k, latency_dist::kind::lognormal);
  EXPECT_DOUBLE_EQ(r->compile.dist.mean, 1.5);
  EXPECT_EQ(r->task_names(), (std::vector<std::string>{"easy_1", "easy_2"}));
  EXPECT_EQ(r->task_success()[1], (std::vector<double>{0.9, 0.5}));
}

TEST(Scenario, ErrorsNameFileLineAndKey) {
  std::string text = minimal_scenario;
  text.replace(text.find("sigma = 0.5"), 11, "sigma = -1.0\ncolour = 3");
  auto path = write_temp("bad.toml", text);
  auto r = load_scenario(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), path + ":12:9: [bench.compile] sigma: must be at least 0 (got -1.0)\n"
                          + path + ":13:1: [bench.compile] colour: unknown key; known keys: model, "
                                   "mean_seconds, sigma, source");

  std::string bad_p = minimal_scenario;
  bad_p.replace(bad_p.find("[0.9, 0.5]"), 10, "[0.9, 1.5]");
  const auto badp = write_temp("badp.toml", bad_p);
  auto r2 = load_scenario(badp);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.message(), badp + ":17:17: [bench.tasks[0]] success: element [1]: must be between 0 "
                                 "and 1 (got 1.5)");

  std::string no_bench = minimal_scenario;
  no_bench.resize(no_bench.find("[bench]"));
  const auto nb = write_temp("nobench.toml", no_bench);
  auto r4 = load_scenario(nb);
  ASSERT_FALSE(r4);
  EXPECT_EQ(r4.message(), nb + ":1:1: bench: missing required table [bench] (see "
                               "configs/bench/compile_bound.toml)");

  std::string ordinary = minimal_scenario;
  ordinary.replace(ordinary.find("group_size = 4"), 14, "group_sise = 4");
  const auto ord = write_temp("ord.toml", ordinary);
  auto r3 = load_scenario(ord);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.message(),
            ord + ":4:1: [train] group_sise: unknown key; did you mean 'group_size'?");
}

TEST(Scenario, ShippedScenariosLoad) {
  int n = 0;
  const std::string dir = std::string(LEAP_SOURCE_DIR) + "/configs/bench";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".toml")
      continue;
    auto r = load_scenario(e.path().string());
    EXPECT_TRUE(r) << r.message();
    ++n;
  }
  EXPECT_GE(n, 3);
}

TEST(Scenario, RejectsCombinationsThatCannotRun) {
  std::string no_tasks = minimal_scenario;
  no_tasks.resize(no_tasks.find("[[bench.tasks]]"));
  auto r = load_scenario(write_temp("notasks.toml", no_tasks));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("needs [[bench.tasks]]"), std::string::npos) << r.message();

  auto s = load_scenario(write_temp("ok2.toml", minimal_scenario));
  ASSERT_TRUE(s);
  auto real_compile = *s;
  real_compile.compile.real = true;
  EXPECT_FALSE(validate(real_compile)); // nvcc without the backend
  real_compile.execute.real = true;
  real_compile.tasks.clear();
  EXPECT_FALSE(validate(real_compile)); // real stages cannot run at time_scale 0.5
  real_compile.time_scale = 1.0;
  EXPECT_TRUE(validate(real_compile));
  real_compile.generate.real = true;
  EXPECT_FALSE(validate(real_compile)); // the policy needs a checkpoint
}

TEST(Scenario, OverridesAndSweepAxes) {
  auto s = load_scenario(write_temp("ok3.toml", minimal_scenario));
  ASSERT_TRUE(s);
  EXPECT_TRUE(apply_axis(*s, "compilers", 16));
  EXPECT_EQ(s->cfg.compiler.workers, 16);
  EXPECT_TRUE(apply_axis(*s, "compile_mean", 0.1));
  EXPECT_DOUBLE_EQ(s->compile.dist.mean, 0.1);
  EXPECT_FALSE(apply_axis(*s, "compilers", 1.5));
  EXPECT_FALSE(apply_axis(*s, "colour", 1));
  EXPECT_TRUE(apply_bench_override(*s, "bench.learner.seconds=2"));
  EXPECT_DOUBLE_EQ(s->learner_seconds, 2.0);
  EXPECT_TRUE(apply_bench_override(*s, "bench.compile.sigma=0.25"));
  EXPECT_DOUBLE_EQ(s->compile.dist.sigma, 0.25);
  auto bad = apply_bench_override(*s, "bench.time_scale=0");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(), "--set bench.time_scale=0: must be greater than 0 (got 0.0)");
  EXPECT_DOUBLE_EQ(s->time_scale, 0.5) << "a failed --set leaves the scenario unchanged";
  EXPECT_EQ(apply_bench_override(*s, "bench.compile.sigma=x").message(),
            "--set bench.compile.sigma=x: expected a number, got 'x'");
  EXPECT_EQ(apply_bench_override(*s, "bench.compile.sigam=1").message(),
            "--set bench.compile.sigam=1: unknown key; did you mean bench.compile.sigma?");
  EXPECT_EQ(apply_bench_override(*s, "bench.compile.model=gcc").message(),
            "--set bench.compile.model=gcc: must be one of \"fixed\", \"lognormal\", \"nvcc\" "
            "(got \"gcc\")");
}

TEST(Results, PercentileIsNearestRank) {
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.99), 4.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.0), 1.0);
}

// Two workers over 10 s: job 1 queued at 0, runs 0-4 on slot 0; job 2 queued at 1, runs 2-6 on
// slot 1; job 3 queued at 3, runs 4-10 on slot 0; job 4 queued at 5, withdrawn at 6.
mode_run hand_made_run() {
  mode_run r;
  r.mode = "async";
  r.wall_seconds = 10;
  pool_run p;
  p.stage = "compile";
  p.workers = 2;
  p.events = {{kind::queued, 1, 0, 0}, {kind::started, 1, 0, 0}, {kind::queued, 2, 0, 1},
              {kind::started, 2, 1, 2}, {kind::queued, 3, 0, 3}, {kind::finished, 1, 0, 4},
              {kind::started, 3, 0, 4}, {kind::queued, 4, 0, 5}, {kind::finished, 2, 1, 6},
              {kind::withdrawn, 4, 0, 6}, {kind::finished, 3, 0, 10}};
  p.cancelled = 1;
  r.pools.push_back(p);
  step_point s1, s2;
  s1.t = 4;
  s1.groups = 2;
  s1.attempts = 8;
  s1.compiles_later_turns = 3;
  s2.t = 10;
  s2.groups = 2;
  s2.attempts = 12;
  s2.compiles_later_turns = 5;
  r.steps = {s1, s2};
  r.learner = {{4, 5}, {10, 10.5}};
  return r;
}

TEST(Results, FiguresFromAHandMadeTrace) {
  auto f = figures_of(hand_made_run());
  EXPECT_EQ(f.steps, 2);
  EXPECT_EQ(f.attempts, 20u);
  EXPECT_DOUBLE_EQ(f.attempts_per_second, 2.0);
  EXPECT_DOUBLE_EQ(f.groups_per_second, 0.4);
  EXPECT_EQ(f.compiles_later_turns, 8u);
  EXPECT_EQ(f.compiles_cancelled, 1u);
  ASSERT_EQ(f.stages.size(), 1u);
  auto& c = f.stages[0];
  EXPECT_EQ(c.jobs, 3u);
  EXPECT_DOUBLE_EQ(c.busy_seconds, 4 + 4 + 6);
  EXPECT_DOUBLE_EQ(c.utilisation, 14.0 / 20.0);
  EXPECT_DOUBLE_EQ(c.queue_p50, 1.0); // waits 0, 1, 1
  EXPECT_DOUBLE_EQ(c.queue_p99, 1.0);
  EXPECT_DOUBLE_EQ(f.learner_busy, 1.0 / 10.0); // the second update ends after the last step
}

TEST(Results, BatchedJobsOnOneWorkerCountItsBusyTimeOnce) {
  // One generator slot decodes jobs 1 and 2 as one batch (0-2 s and 1-3 s), then job 3 (5-6 s):
  // busy 3 + 1 = 4 s of 10, not 2 + 2 + 1 = 5.
  mode_run r;
  r.wall_seconds = 10;
  pool_run p;
  p.stage = "generate";
  p.workers = 1;
  using k = job_event::kind;
  p.events = {{k::started, 1, 0, 0.0}, {k::started, 2, 0, 1.0}, {k::finished, 1, 0, 2.0},
              {k::finished, 2, 0, 3.0}, {k::started, 3, 0, 5.0}, {k::finished, 3, 0, 6.0}};
  r.pools = {p};
  auto f = figures_of(r);
  ASSERT_EQ(f.stages.size(), 1u);
  EXPECT_EQ(f.stages[0].jobs, 3u);
  EXPECT_DOUBLE_EQ(f.stages[0].busy_seconds, 4.0);
  EXPECT_DOUBLE_EQ(f.stages[0].utilisation, 0.4);
  // The generator pool puts a batch's prompts on different slots of its one replica: the same.
  r.pools[0].events = {{k::started, 1, 0, 0.0}, {k::started, 2, 1, 1.0}, {k::finished, 1, 0, 2.0},
                       {k::finished, 2, 1, 3.0}, {k::started, 3, 2, 5.0}, {k::finished, 3, 2, 6.0}};
  EXPECT_DOUBLE_EQ(figures_of(r).stages[0].busy_seconds, 4.0);
  // Two compile workers each busy 0-2 s: 4 s.
  r.pools[0].workers = 2;
  r.pools[0].events = {{k::started, 1, 0, 0.0}, {k::started, 2, 1, 0.0}, {k::finished, 1, 0, 2.0},
                       {k::finished, 2, 1, 2.0}};
  EXPECT_DOUBLE_EQ(figures_of(r).stages[0].busy_seconds, 4.0);
}

TEST(Results, AnalyticBoundCountsTheSharedCpu) {
  mode_run r;
  r.mode = "async";
  r.wall_seconds = 10;
  step_point s1, s2;
  s1.t = 5;
  s2.t = 10;
  s1.groups = s2.groups = 1;
  s1.attempts = s2.attempts = 20;
  r.steps = {s1, s2};
  r.cpu_seconds = 16; // 40 attempts: 0.4 CPU s each
  auto ref = figures_of(r);
  EXPECT_DOUBLE_EQ(ref.cpu_seconds_per_attempt, 0.4);
  nominal_service n;
  n.generate = 0.1; // 1 / 0.1 = 10/s
  n.compile = 0.5;  // 4 / 0.5 = 8/s
  n.execute = 0.2;  // 2 / 0.2 = 10/s
  // Each stage alone could do 8/s, but 2 cores at 0.4 CPU s per attempt give 5/s.
  auto b = analytic_bound(n, ref, 1, 4, 2, 2);
  EXPECT_DOUBLE_EQ(b.attempts_per_second, 5.0);
  EXPECT_EQ(b.bottleneck, "cpu");
  EXPECT_EQ(b.cores, 2u);
  ASSERT_EQ(b.stages.size(), 4u);
  EXPECT_EQ(b.stages[3].stage, "cpu");
  // With 4 cores the CPU term (10/s) no longer binds: compile does.
  EXPECT_EQ(analytic_bound(n, ref, 1, 4, 2, 4).bottleneck, "compile");
  // Without cores (latency models) or without a measurement there is no CPU term.
  EXPECT_EQ(analytic_bound(n, ref, 1, 4, 2).stages.size(), 3u);
  r.cpu_seconds = -1;
  EXPECT_EQ(analytic_bound(n, figures_of(r), 1, 4, 2, 2).stages.size(), 3u);
}

TEST(Results, AnalyticBoundIsTheSmallestStageCapacity) {
  mode_figures ref;
  ref.attempts = 100;
  ref.steps = 4;
  ref.stages = {{"generate", 2, 10, 20.0, 0, 0, 0}};
  nominal_service n;
  n.generate = -1;  // measured: 20 busy s / 100 attempts = 0.2 s -> 2 workers / 0.2 = 10/s
  n.compile = 1.5;  // 6 / 1.5 = 4/s
  n.execute = 0.25; // 2 / 0.25 = 8/s
  n.learner_step = 5; // 25 attempts per step / 5 s = 5/s
  auto b = analytic_bound(n, ref, 2, 6, 2);
  EXPECT_DOUBLE_EQ(b.attempts_per_second, 4.0);
  EXPECT_EQ(b.bottleneck, "compile");
  ASSERT_EQ(b.stages.size(), 4u);
  EXPECT_DOUBLE_EQ(b.stages[0].attempts_per_second, 10.0);
  EXPECT_TRUE(b.stages[0].measured);
  EXPECT_DOUBLE_EQ(b.stages[3].attempts_per_second, 5.0);
  n.execute = 0.5; // 4/s: a tie
  EXPECT_EQ(analytic_bound(n, ref, 2, 6, 2).bottleneck, "compile=execute");
}

TEST(Results, NodeFiguresAreTheRunsPartAndStagesOnNodesLeaveTheBound) {
  auto node = [](std::string name, std::uint64_t c, std::uint64_t e, std::uint64_t hits,
                 std::string problem = "") {
    node_figures f;
    f.node = std::move(name);
    f.compiles = c;
    f.executes = e;
    f.compile_cache_hits = hits;
    f.cpu_seconds = 3;
    f.problem = std::move(problem);
    return f;
  };
  auto d = node_figures_between(
    {node("a:1", 5, 3, 1), node("b:2", 0, 0, 0, "connection refused")},
    {node("a:1", 12, 7, 2), node("b:2", 4, 4, 0), node("c:3", 1, 1, 0)});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].node, "a:1");
  EXPECT_EQ(d[0].compiles, 7u);
  EXPECT_EQ(d[0].executes, 4u);
  EXPECT_EQ(d[0].compile_cache_hits, 1u);
  EXPECT_EQ(d[0].cpu_seconds, -1);
  EXPECT_TRUE(d[0].problem.empty());
  EXPECT_EQ(d[1].problem, "connection refused"); // no figures rather than wrong ones
  EXPECT_EQ(d[2].problem, "not asked before the run");

  mode_figures ref;
  ref.attempts = 100;
  ref.steps = 4;
  ref.stages = {{"generate", 2, 100, 20.0, 0, 0, 0}, {"compile", 2, 0, 0.0, 0, 0, 0},
                {"execute", 2, 0, 0.0, 0, 0, 0}};
  ref.stages[1].on_nodes = ref.stages[2].on_nodes = true;
  nominal_service n; // every stage real: measured from the traces, which on nodes are empty
  auto b = analytic_bound(n, ref, 2, 2, 2);
  ASSERT_EQ(b.stages.size(), 1u);
  EXPECT_EQ(b.stages[0].stage, "generate");
  EXPECT_DOUBLE_EQ(b.attempts_per_second, 10.0);
}

TEST(Report, DerivedFiguresAndJsonKeys) {
  comparison c;
  c.scenario = "s";
  mode_figures a, s, n;
  a.mode = "async";
  a.attempts_per_second = 3.6;
  a.compiles_later_turns = 60;
  a.compiles_cancelled = 7;
  s.mode = "sync";
  s.attempts_per_second = 1.2;
  n.mode = "async_no_dcp";
  n.compiles_later_turns = 100;
  c.modes = {a, s, n};
  c.bound.attempts_per_second = 4.0;
  derive(c);
  EXPECT_DOUBLE_EQ(c.fraction_of_bound, 0.9);
  EXPECT_DOUBLE_EQ(c.speedup_vs_sync, 3.0);
  EXPECT_DOUBLE_EQ(c.dcp_multiturn_compile_reduction, 0.4);
  EXPECT_EQ(c.compiles_avoided_by_dcp, 40);
  EXPECT_EQ(c.compiles_avoided_by_cancellation, 7u);
  auto j = nlohmann::json::parse(render_json(c));
  for (auto* k : {"async_attempts_per_second", "sync_attempts_per_second", "speedup_vs_sync",
                  "analytic_bound_attempts_per_second", "fraction_of_bound",
                  "dcp_multiturn_compile_reduction"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_DOUBLE_EQ(j["speedup_vs_sync"].get<double>(), 3.0);
  auto csv = render_csv(c);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4); // header + 3 modes
}

TEST(Timeline, OneLanePerWorkerAndBarsClippedToTheWindow) {
  auto run = hand_made_run();
  double t0, t1;
  int step;
  ASSERT_TRUE(step_window(run, 0, t0, t1, step));
  EXPECT_EQ(step, 1);
  EXPECT_DOUBLE_EQ(t0, 0.0);
  EXPECT_DOUBLE_EQ(t1, 4.0);
  ASSERT_TRUE(step_window(run, 2, t0, t1, step));
  EXPECT_DOUBLE_EQ(t0, 4.0);
  EXPECT_DOUBLE_EQ(t1, 10.0);
  auto svg = render_timeline_svg(run, 4.0, 10.0, "t");
  EXPECT_NE(svg.find(">compile 0<"), std::string::npos);
  EXPECT_NE(svg.find(">compile 1<"), std::string::npos);
  EXPECT_NE(svg.find(">learner<"), std::string::npos);
  EXPECT_NE(svg.find("compile 1 job 2: 4.00-6.00 s"), std::string::npos); // clipped at 4
  EXPECT_EQ(svg.find("job 1:"), std::string::npos);                      // ended at 4
  EXPECT_NE(svg.find("compile 67%"), std::string::npos); // (6 + 2) / (2 x 6)
}
