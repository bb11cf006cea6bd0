// `leap experiment`: the [experiment] section's reader and its errors, the statistics (Student t
// interval) and the result files (no processes); then configs/experiments/tiny.toml end to end
// (2 arms x 2 seeds, one learner step each, the tests' tiny warm start): the three result files
// with their columns, every run's eval.json, and a rerun that keeps the finished runs and redoes
// a half one; a changed configuration is refused.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/workflows/experiment_data.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;
namespace ex = leap::runtime::experiment;

namespace {

const std::string tiny_toml = std::string(LEAP_SOURCE_DIR) + "/configs/experiments/tiny.toml";

config::leap_config base_of(const std::string& path) {
  auto cfg = config::defaults();
  EXPECT_TRUE(config::apply_file(cfg, path, {"experiment"}).ok());
  return cfg;
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto dir = *make_temp_dir(temp_root(), "leap-experiment-spec-");
  auto path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size()))
    ++n;
  return n;
}

} // namespace

TEST(ExperimentSpec, TheTinyAndThePaperFilesLoad) {
  auto s = ex::load_spec(tiny_toml, base_of(tiny_toml));
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(s->arms.size(), 2u);
  EXPECT_EQ(s->arms[0].name, "leap");
  EXPECT_EQ(s->arms[1].label, "single-turn GRPO");
  EXPECT_EQ(s->seeds, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(s->max_compiles, 1000);
  EXPECT_EQ(s->eval_seed, 7);
  ASSERT_TRUE(s->arms[0].paper.acc1.has_value());
  EXPECT_DOUBLE_EQ(*s->arms[0].paper.acc1, 70.0);
  auto cfg = ex::run_config(base_of(tiny_toml), *s, s->arms[1], 2, "/w");
  ASSERT_TRUE(cfg.ok()) << cfg.message();
  EXPECT_EQ(cfg->train.max_turns, 1);
  EXPECT_EQ(cfg->train.seed, 2u);
  EXPECT_EQ(cfg->eval.seed, 7u);
  EXPECT_EQ(cfg->train.max_compiles, 1000);
  EXPECT_EQ(cfg->train.warm_start, "/w");
  // The hash leaves the warm start's path out, and tells the arms and seeds apart.
  auto moved = ex::run_config(base_of(tiny_toml), *s, s->arms[1], 2, "/elsewhere");
  EXPECT_EQ(ex::config_hash(*cfg), ex::config_hash(*moved));
  auto other_seed = ex::run_config(base_of(tiny_toml), *s, s->arms[1], 1, "/w");
  EXPECT_NE(ex::config_hash(*cfg), ex::config_hash(*other_seed));

  const std::string paper = std::string(LEAP_SOURCE_DIR) + "/configs/experiments/paper.toml";
  auto p = ex::load_spec(paper, base_of(paper));
  ASSERT_TRUE(p.ok()) << p.message();
  std::vector<std::string> names;
  for (auto& a : p->arms)
    names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"leap", "grpo_single", "grpo_multi", "dcp_lt50",
                                             "trloo", "discounted", "all_groups"}));
  EXPECT_EQ(p->seeds.size(), 3u);
  EXPECT_GT(p->max_compiles, 0); // a compile budget: fair whatever else the machine runs
  // Every arm starts from the shipped warm start, pinned as the quickstart pins it (make
  // warm-start renews both), and each run's config keeps the file's warm start and pin.
  auto paper_base = base_of(paper);
  auto quick = base_of(std::string(LEAP_SOURCE_DIR) + "/configs/quickstart.toml");
  EXPECT_EQ(paper_base.train.warm_start, "assets/warm_start");
  EXPECT_EQ(paper_base.train.warm_start_sha256, quick.train.warm_start_sha256);
  for (auto& a : p->arms) {
    auto run = ex::run_config(paper_base, *p, a, 1, paper_base.train.warm_start);
    ASSERT_TRUE(run.ok()) << run.message();
    EXPECT_EQ(run->train.warm_start_sha256, quick.train.warm_start_sha256);
  }
}

TEST(ExperimentSpec, ErrorsNameTheFileTheArmAndTheKey) {
  auto path = write_temp("bad.toml", R"([experiment]
seeds = [1, 1]
budget = 3

[[experiment.arms]]
name = "a"
set = ["train.estimatr=rank", "train.group_size=0"]

[[experiment.arms]]
name = "b"
set = ["train.seed=4", "train.dcp=maybe"]

[[experiment.arms]]
name = "a"
)");
  auto s = ex::load_spec(path, config::defaults());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            path + ":2:13: [experiment] seeds: element [1]: 1 is listed twice\n"
              + path + ":3:1: [experiment] budget: unknown key; known keys: seeds, max_minutes, "
                       "max_compiles, target_acc1, eval_seed, arms\n"
              + path + ":7:8: [experiment.arms[0]] set: element [0]: [train] estimatr: unknown "
                       "key; did you mean 'estimator'?\n"
              + path + ":7:31: [experiment.arms[0]] set: element [1]: [train] group_size: must be "
                       "at least 2 (got 0)\n"
              + path + ":11:8: [experiment.arms[1]] set: element [0]: [train] seed: an arm may "
                       "not set it (the seeds are [experiment] seeds)\n"
              + path + ":11:24: [experiment.arms[1]] set: element [1]: [train] dcp: expected a "
                       "boolean (true or false), got 'maybe'\n"
              + path + ":14:8: [experiment.arms[2]] name: \"a\" is the name of an earlier arm, "
                       "[experiment.arms[0]]");
  // Rules across keys, per arm: at the override the rule names.
  auto path2 = write_temp("bad2.toml", R"([experiment]
seeds = 1
[[experiment.arms]]
name = "x"
set = ["train.dcp_t_min=0.9", "train.dcp_t_max=0.2"]
)");
  auto s2 = ex::load_spec(path2, config::defaults());
  ASSERT_FALSE(s2.ok());
  EXPECT_EQ(s2.message(),
            path2 + ":5:8: [experiment.arms[0]] set: element [0]: [train] dcp_t_min: must be at "
                    "most train.dcp_t_max = 0.2 (got 0.9; train.dcp_t_min from --set "
                    "train.dcp_t_min=0.9, train.dcp_t_max from --set train.dcp_t_max=0.2): DCP "
                    "would never expand a group");
  const auto path3 = write_temp("none.toml", "[train]\nsteps = 2\n");
  auto none = ex::load_spec(path3, config::defaults());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(), path3 + ":1:1: experiment: missing required table [experiment] (see "
                                    "configs/experiments/paper.toml)");
  const auto path4 = write_temp("kinds.toml", R"([experiment]
seeds = "3"
target_acc1 = 1.5
[[experiment.arms]]
name = "a b"
[[experiment.arms]]
name = "c"
paper = { acc4 = 1.0 }
)");
  auto kinds = ex::load_spec(path4, config::defaults());
  ASSERT_FALSE(kinds.ok());
  EXPECT_EQ(kinds.message(),
            path4 + ":2:9: [experiment] seeds: expected an array of integers such as [1, 2] or an "
                    "integer, got a string (\"3\")\n"
              + path4 + ":3:15: [experiment] target_acc1: must be between 0 and 1 (got 1.5)\n"
              + path4 + ":5:8: [experiment.arms[0]] name: must be 1 to 64 letters, digits, '_' "
                        "and '-' (it names the run directory; got \"a b\")\n"
              + path4 + ":8:11: [experiment.arms[1].paper] acc4: unknown key; did you mean "
                        "'acc1'?");
  for (auto& p : {path, path2, path3, path4})
    fs::remove_all(fs::path(p).parent_path());
}

TEST(ExperimentStats, StudentIntervalOverSeeds) {
  EXPECT_DOUBLE_EQ(ex::t95(1), 12.706);
  EXPECT_DOUBLE_EQ(ex::t95(2), 4.303);
  EXPECT_DOUBLE_EQ(ex::t95(1000), 1.960);
  auto iv = ex::mean_interval({0.2, 0.4, 0.6});
  ASSERT_TRUE(iv && iv->half_width);
  EXPECT_NEAR(iv->mean, 0.4, 1e-12);
  // s = 0.2, n = 3: 4.303 * 0.2 / sqrt(3)
  EXPECT_NEAR(*iv->half_width, 4.303 * 0.2 / std::sqrt(3.0), 1e-12);
  auto one = ex::mean_interval({0.5});
  ASSERT_TRUE(one);
  EXPECT_FALSE(one->half_width);
  EXPECT_FALSE(ex::mean_interval({}));
}

// The warm start's row and the change columns, by hand: two seeds of one arm at eval-split
// Acc@1 0.10 and 0.20 against the warm start's 0.10 give +5.0 ± 63.5 (t95(1) * 0.0707 / sqrt 2
// = 12.706 * 0.05); a mean change of -1e-12 reads +0.0, not -0.0; no compositions: "–".
TEST(ExperimentStats, ChangeFromTheWarmStartPerSet) {
  ex::spec s;
  s.arms.push_back({"a", "arm a", {}, {}});
  s.arms.push_back({"b", "arm b", {}, {}});
  s.seeds = {1, 2};
  ex::run_result warm;
  warm.arm = "warm start";
  warm.bundled_acc1 = warm.bundled_acc3 = 0.10;
  std::vector<ex::run_result> runs(4);
  for (int i = 0; i < 4; ++i) {
    runs[i].arm = i < 2 ? "a" : "b";
    runs[i].seed = 1 + i % 2;
  }
  runs[0].bundled_acc1 = runs[0].bundled_acc3 = 0.10;
  runs[1].bundled_acc1 = runs[1].bundled_acc3 = 0.20;
  runs[2].bundled_acc1 = runs[2].bundled_acc3 = 0.10 - 1e-12;
  runs[3].bundled_acc1 = runs[3].bundled_acc3 = 0.10 - 1e-12;
  auto sums = ex::summarise(s, runs, &warm);
  auto md = ex::render_table_md(s, sums, {}, &warm);
  auto row = [&](const std::string& label) {
    auto at = md.find("| " + label + " |");
    EXPECT_NE(at, std::string::npos) << md;
    return md.substr(at, md.find('\n', at) - at);
  };
  EXPECT_EQ(row("warm start (no RL)"), "| warm start (no RL) | – | 10.0 | 10.0 | – | – | – | – | – | – | "
                                        "0.0 | 0.0 | 0.0 | – | – | – |");
  EXPECT_EQ(row("arm a").substr(0, 60), "| arm a | 2/2 | 15.0 ± 63.5 | 15.0 ± 63.5 | +5.0 ± 63.5 |");
  EXPECT_NE(row("arm b").find("| +0.0 ± 0.0 | +0.0 ± 0.0 | – |"), std::string::npos) << row("arm b");
}

TEST(ExperimentStats, TrainingFiguresFromMetrics) {
  // Four steps of 30 s; training Acc@1 0.2, 0.6, 0.7, 0.9: the running mean of the last <= 3
  // steps is 0.2, 0.4, 0.5, 0.733, so a target of 0.5 is reached at step 3, after 1.5 minutes.
  const auto dir = *make_temp_dir(temp_root(), "leap-experiment-metrics-");
  std::ofstream m(dir + "/metrics.jsonl");
  const double acc[] = {0.2, 0.6, 0.7, 0.9};
  for (int i = 0; i < 4; ++i)
    m << nlohmann::json{{"step", i + 1}, {"acc_at_1", acc[i]}, {"step_seconds", 30.0},
                        {"activated_groups", i < 2 ? 0.5 : 0.0},
                        {"recovery", i == 0 ? nlohmann::json(0.25) : nlohmann::json()},
                        {"compiles", 6}, {"cache_hits", 2}, {"compiles_later_turns", 3}}
           .dump()
      << "\n";
  m.close();
  ex::run_result r;
  ASSERT_TRUE(ex::add_training_figures(dir, 0.5, r).ok());
  EXPECT_EQ(r.steps, 4);
  EXPECT_NEAR(r.train_minutes, 2.0, 1e-12);
  ASSERT_TRUE(r.minutes_to_target);
  EXPECT_NEAR(*r.minutes_to_target, 1.5, 1e-12);
  EXPECT_NEAR(r.activated, 0.25, 1e-12);
  ASSERT_TRUE(r.recovery);
  EXPECT_NEAR(*r.recovery, 0.25, 1e-12);
  EXPECT_EQ(r.compiles_turn1, 4 * 5);
  EXPECT_EQ(r.compiles_later, 4 * 3);
  ASSERT_TRUE(ex::add_training_figures(dir, 0.95, r).ok());
  EXPECT_FALSE(r.minutes_to_target);
  fs::remove_all(dir);
}

TEST(ExperimentE2E, TinyTwoArmsTwoSeedsWriteTheTablesAndResumeKeepsFinishedRuns) {
  const auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  const auto out = *make_temp_dir(temp_root(), "leap-experiment-");
  const auto logs = *make_temp_dir(temp_root(), "leap-experiment-logs-");
  auto run = [&](const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {LEAP_BINARY, "--config", tiny_toml, "--set",
                                     "environment.cache_dir=" + std::string(LEAP_TEST_CACHE_DIR),
                                     "--set", "train.warm_start=" + warm,
                                     // a held-out evaluation at the one step: its columns
                                     "--set", "train.eval_every=1", "--set", "train.eval_tasks=1"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (auto a : {"experiment", "--out"})
      args.push_back(a);
    args.push_back(out);
    auto p = std::make_unique<test::leap_process>(args, logs + "/" + name);
    EXPECT_TRUE(p->exited(std::chrono::minutes(10))) << name << " did not finish";
    return p;
  };
  auto first = run("first");
  ASSERT_TRUE(first->exited_ok()) << first->out() << first->err();
  EXPECT_NE(first->out().find("ETA"), std::string::npos) << first->out();
  const std::vector<std::pair<std::string, int>> runs = {
    {"leap", 1}, {"grpo1", 1}, {"leap", 2}, {"grpo1", 2}};
  for (auto& [arm, seed] : runs) {
    const auto dir = out + "/runs/" + arm + "/seed" + std::to_string(seed);
    auto r = ex::read_run_result(dir);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->arm, arm);
    EXPECT_EQ(r->seed, seed);
    EXPECT_EQ(r->steps, 1);
    ASSERT_TRUE(r->heldout_acc1 && r->heldout_acc3 && r->heldout_compiles);
    EXPECT_GE(*r->heldout_acc3, *r->heldout_acc1);
    {
      // The column sums the held-out rows' compile requests (hits included). Whether the tiny
      // model writes any code block at all after its step depends on the step's batch, so the
      // test checks the sum against metrics.jsonl and that the evaluation sampled attempts.
      double requests = 0;
      long long attempts = 0;
      std::istringstream lines(*read_file(dir + "/metrics.jsonl"));
      for (std::string line; std::getline(lines, line);) {
        auto row = nlohmann::json::parse(line);
        if (!row.contains("heldout")) continue;
        requests += row["heldout"]["compiles"].get<double>() + row["heldout"]["cache_hits"].get<double>();
        attempts += row["heldout"]["attempts"].get<long long>();
      }
      EXPECT_EQ(*r->heldout_compiles, requests);
      EXPECT_GT(attempts, 0);
    }
    EXPECT_FALSE(r->commit.empty());
    EXPECT_EQ(r->config_hash.size(), 16u);
    EXPECT_FALSE(r->task_suite.empty());
    EXPECT_TRUE(fs::exists(dir + "/metrics.jsonl"));
    EXPECT_TRUE(fs::exists(dir + "/config.toml"));
    auto j = nlohmann::json::parse(*read_file(dir + "/eval.json"));
    EXPECT_EQ(j["eval"]["split"], "eval");
    EXPECT_EQ(j["eval"]["group_size"], 2);
    // The single-turn arm never compiled a later turn.
    if (arm == "grpo1") {
      EXPECT_EQ(r->compiles_later, 0);
    }
  }
  // The warm start was the given one: no pretrain ran.
  EXPECT_FALSE(fs::exists(out + "/warm_start"));
  auto table = read_file(out + "/table.md");
  ASSERT_TRUE(table.ok());
  for (auto col : {"| arm | seeds | eval split Acc@1 | eval split Acc@3 | change Acc@1 | change "
                   "Acc@3 | compositions Acc@1 | compositions Acc@3 | change Acc@1 | change Acc@3 "
                   "| all Acc@1 | all Acc@2 | all Acc@3 | turns / pass | paper Acc@1/2/3 | paper "
                   "turns / pass |",
                   "| arm | seeds | activated % | recovery % | compiles turn 1 | compiles later | "
                   "min to target (reached) | held-out Acc@1 | held-out Acc@3 | held-out compiles "
                   "| paper activated % | paper recovery % |",
                   "| LEAP (rank + DCP) | 2/2 |", "| single-turn GRPO | 2/2 |",
                   "| warm start (no RL) | – |", "70.0 / 79.2 / 80.8", "not comparable in level"})
    EXPECT_NE(table->find(col), std::string::npos) << col << "\n" << *table;
  auto cells_of = [](const std::string& line) {
    std::vector<std::string> cells(1); // "", arm, seeds, ...
    for (char ch : line)
      if (ch == '|')
        cells.emplace_back();
      else
        cells.back().push_back(ch);
    for (auto& c : cells)
      c = std::string(trim(c));
    return cells;
  };
  const auto training_at = table->find("## Training");
  ASSERT_NE(training_at, std::string::npos) << *table;
  const auto heldout_part = table->substr(0, training_at), training_part = table->substr(training_at);
  // The held-out table: the one eval task (elu) is a hand-written eval-split task, so the eval
  // split's columns hold figures, the warm start's row its own and each arm its change from it
  // (mean ± interval over two seeds); there are no compositions.
  for (const auto& line : split_lines(heldout_part)) {
    if (starts_with(line, "| warm start (no RL) |")) {
      auto cells = cells_of(line);
      ASSERT_GT(cells.size(), 10u) << line;
      EXPECT_NE(cells[3], "–") << line;
      EXPECT_EQ(cells[5], "–") << line;
    }
    if (starts_with(line, "| LEAP (rank + DCP) |") || starts_with(line, "| single-turn GRPO |")) {
      auto cells = cells_of(line);
      ASSERT_GT(cells.size(), 10u) << line;
      for (std::size_t c : {3, 4, 5, 6})
        EXPECT_NE(cells[c].find("±"), std::string::npos) << "column " << c << ": " << line;
      EXPECT_TRUE(starts_with(cells[5], "+") || starts_with(cells[5], "-")) << line;
      for (std::size_t c : {7, 8, 9, 10})
        EXPECT_EQ(cells[c], "–") << "column " << c << ": " << line;
    }
  }
  // The training table: each arm's held-out columns hold figures, not "–".
  for (const auto& line : split_lines(training_part))
    if (starts_with(line, "| LEAP (rank + DCP) |") || starts_with(line, "| single-turn GRPO |")) {
      auto cells = cells_of(line);
      ASSERT_GT(cells.size(), 10u) << line;
      for (std::size_t c = 8; c <= 10; ++c)
        EXPECT_NE(cells[c], "–") << "column " << c << ": " << line;
      EXPECT_NE(cells[8].find("±"), std::string::npos) << line;
    }
  // The warm start's evaluation is kept beside the runs, with the config it was made under.
  auto warm_eval = ex::read_warm_start_eval(out + "/warm_start_eval.json");
  ASSERT_TRUE(warm_eval.ok()) << warm_eval.message();
  ASSERT_TRUE(warm_eval->bundled_acc1.has_value());
  EXPECT_FALSE(warm_eval->comp_acc1.has_value());
  auto csv = read_file(out + "/results.csv");
  ASSERT_TRUE(csv.ok());
  auto lines = split_lines(*csv);
  ASSERT_EQ(lines.size(), 3u) << *csv;
  EXPECT_EQ(lines[0], "arm,label,seeds_done,seeds,acc1_mean,acc1_ci95,acc2_mean,acc2_ci95,"
                      "acc3_mean,acc3_ci95,bundled_acc1_mean,bundled_acc1_ci95,bundled_acc3_mean,"
                      "bundled_acc3_ci95,bundled_change1_mean,bundled_change1_ci95,"
                      "bundled_change3_mean,bundled_change3_ci95,comp_acc1_mean,comp_acc1_ci95,"
                      "comp_acc3_mean,comp_acc3_ci95,comp_change1_mean,comp_change1_ci95,"
                      "comp_change3_mean,comp_change3_ci95,"
                      "turns_per_pass_mean,turns_per_pass_ci95,activated_mean,"
                      "activated_ci95,recovery_mean,recovery_ci95,compiles_turn1_mean,"
                      "compiles_turn1_ci95,compiles_later_mean,compiles_later_ci95,"
                      "minutes_to_target_mean,minutes_to_target_ci95,heldout_acc1_mean,"
                      "heldout_acc1_ci95,heldout_acc3_mean,heldout_acc3_ci95,heldout_compiles_mean,"
                      "heldout_compiles_ci95,target_acc1,target_reached,"
                      "paper_acc1,paper_acc2,paper_acc3,paper_turns_per_pass,paper_activated,"
                      "paper_recovery,commits,config_hashes,task_suites");
  EXPECT_TRUE(starts_with(lines[1], "leap,LEAP (rank + DCP),2,2,")) << lines[1];
  EXPECT_TRUE(starts_with(lines[2], "grpo1,single-turn GRPO,2,2,")) << lines[2];
  auto runs_csv = read_file(out + "/runs.csv");
  ASSERT_TRUE(runs_csv.ok());
  EXPECT_EQ(split_lines(*runs_csv).size(), 5u);
  auto html = read_file(out + "/report.html");
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("<svg"), std::string::npos);
  EXPECT_NE(html->find("single-turn GRPO"), std::string::npos);
  EXPECT_NE(html->find("Held-out sample Acc@3 against training compiles"), std::string::npos);
  EXPECT_NE(html->find("Eval-split Acc@3, warm start to final checkpoint"), std::string::npos);
  EXPECT_EQ(html->find("Compositions Acc@3, warm start"), std::string::npos) << "none evaluated";
  // Two seeds per arm: each arm's mean curve has a band (the one held-out point: an error bar).
  EXPECT_NE(html->find("stroke-opacity=\"0.5\""), std::string::npos);
  EXPECT_NE(html->find("warm start (no RL)"), std::string::npos);

  // A half run (its eval.json gone, as if killed while evaluating) is redone from scratch; the
  // finished ones are kept untouched.
  const auto kept = out + "/runs/leap/seed1/eval.json";
  const auto kept_time = fs::last_write_time(kept);
  const auto kept_text = *read_file(kept);
  fs::remove(out + "/runs/grpo1/seed2/eval.json");
  auto second = run("second");
  ASSERT_TRUE(second->exited_ok()) << second->out() << second->err();
  EXPECT_EQ(count_of(second->out(), "finished earlier, kept"), 3u) << second->out();
  EXPECT_EQ(count_of(second->out(), "warm start evaluation: kept"), 1u) << second->out();
  EXPECT_EQ(count_of(second->out(), "an unfinished run is there; starting it over"), 1u)
    << second->out();
  EXPECT_EQ(count_of(second->out(), ": training ("), 1u) << second->out();
  EXPECT_EQ(fs::last_write_time(kept), kept_time);
  EXPECT_EQ(*read_file(kept), kept_text);
  EXPECT_TRUE(ex::read_run_result(out + "/runs/grpo1/seed2").ok());
  EXPECT_EQ(split_lines(*read_file(out + "/runs.csv")).size(), 5u);

  // Everything finished: a third run trains nothing.
  auto third = run("third");
  ASSERT_TRUE(third->exited_ok()) << third->out() << third->err();
  EXPECT_EQ(count_of(third->out(), "finished earlier, kept"), 4u) << third->out();
  EXPECT_EQ(count_of(third->out(), ": training ("), 0u) << third->out();

  // Another configuration on the same directory is refused: the table would mix two.
  auto changed = run("changed", {"--set", "train.temperature=0.5"});
  EXPECT_TRUE(WIFEXITED(changed->status()) && WEXITSTATUS(changed->status()) == 2)
    << changed->out() << changed->err();
  EXPECT_NE(changed->err().find("was run with another configuration"), std::string::npos)
    << changed->err();
  fs::remove_all(out);
  fs::remove_all(logs);
}

TEST(ExperimentE2E, WithoutAWarmStartTheExperimentMakesOneAndKeepsIt) {
  // tiny.toml cut to one arm and one seed, without train.warm_start: DIR/warm_start is made by
  // `leap pretrain` of the file's config, then reused by the rerun.
  auto text = *read_file(tiny_toml);
  text = replace_all(text, "seeds = 2 ", "seeds = 1 ");
  text = text.substr(0, text.find("[[experiment.arms]]\nname = \"grpo1\""));
  const auto dir = *make_temp_dir(temp_root(), "leap-experiment-own-");
  const auto file = dir + "/one.toml";
  std::ofstream(file) << text;
  const auto out = dir + "/out";
  auto run = [&](const std::string& name) {
    auto p = std::make_unique<test::leap_process>(
      std::vector<std::string>{LEAP_BINARY, "--config", file, "--set",
                               "environment.cache_dir=" + std::string(LEAP_TEST_CACHE_DIR),
                               "experiment", "--out", out},
      dir + "/" + name);
    EXPECT_TRUE(p->exited(std::chrono::minutes(10))) << name << " did not finish";
    return p;
  };
  auto first = run("first");
  ASSERT_TRUE(first->exited_ok()) << first->out() << first->err();
  EXPECT_NE(first->out().find("warm start: leap pretrain into " + out + "/warm_start"),
            std::string::npos) << first->out();
  EXPECT_TRUE(fs::exists(out + "/warm_start/model.safetensors"));
  EXPECT_FALSE(fs::exists(out + "/warm_start.partial"));
  auto r = ex::read_run_result(out + "/runs/leap/seed1");
  ASSERT_TRUE(r.ok()) << r.message();
  auto j = nlohmann::json::parse(*read_file(out + "/runs/leap/seed1/eval.json"));
  EXPECT_EQ(j["warm_start"], out + "/warm_start");
  EXPECT_EQ(split_lines(*read_file(out + "/results.csv")).size(), 2u);
  const auto weights_time = fs::last_write_time(out + "/warm_start/model.safetensors");
  auto second = run("second");
  ASSERT_TRUE(second->exited_ok()) << second->out() << second->err();
  EXPECT_NE(second->out().find("(kept)"), std::string::npos) << second->out();
  EXPECT_EQ(count_of(second->out(), "finished earlier, kept"), 1u) << second->out();
  EXPECT_EQ(fs::last_write_time(out + "/warm_start/model.safetensors"), weights_time);
  fs::remove_all(dir);
}

TEST(ExperimentE2E, AFailedRunIsReportedTheOthersGoOnAndARerunRetriesIt) {
  // Arm "broken" trains on an eval-split task, which `leap train` refuses (exit 2).
  const auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  auto text = *read_file(tiny_toml);
  text = replace_all(text, "seeds = 2 ", "seeds = 1 ");
  text = text.substr(0, text.find("[[experiment.arms]]\nname = \"leap\""));
  text += "[[experiment.arms]]\nname = \"broken\"\nset = ['train.tasks=[\"elu\"]']\n\n"
          "[[experiment.arms]]\nname = \"fine\"\nset = [\"train.max_turns=1\"]\n";
  const auto dir = *make_temp_dir(temp_root(), "leap-experiment-failed-");
  const auto file = dir + "/failed.toml";
  std::ofstream(file) << text;
  const auto out = dir + "/out";
  auto run = [&](const std::string& name) {
    auto p = std::make_unique<test::leap_process>(
      std::vector<std::string>{LEAP_BINARY, "--config", file, "--set",
                               "environment.cache_dir=" + std::string(LEAP_TEST_CACHE_DIR),
                               "--set", "train.warm_start=" + warm, "experiment", "--out", out},
      dir + "/" + name);
    EXPECT_TRUE(p->exited(std::chrono::minutes(10))) << name << " did not finish";
    return p;
  };
  auto first = run("first");
  EXPECT_TRUE(WIFEXITED(first->status()) && WEXITSTATUS(first->status()) == 1)
    << first->out() << first->err();
  EXPECT_NE(first->err().find("broken seed 1: leap train failed (exit 2); see " + out
                              + "/runs/broken/seed1/train.log"),
            std::string::npos) << first->err();
  EXPECT_NE(first->err().find("1 run(s) failed"), std::string::npos) << first->err();
  auto log = read_file(out + "/runs/broken/seed1/train.log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("elu"), std::string::npos) << *log;
  EXPECT_TRUE(ex::read_run_result(out + "/runs/fine/seed1").ok());
  auto lines = split_lines(*read_file(out + "/results.csv"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(starts_with(lines[1], "broken,broken,0,1,,")) << lines[1];
  EXPECT_TRUE(starts_with(lines[2], "fine,fine,1,1,")) << lines[2];
  auto second = run("second");
  EXPECT_TRUE(WIFEXITED(second->status()) && WEXITSTATUS(second->status()) == 1);
  EXPECT_EQ(count_of(second->out(), "an unfinished run is there; starting it over"), 1u)
    << second->out();
  EXPECT_EQ(count_of(second->out(), "finished earlier, kept"), 1u) << second->out();
  fs::remove_all(dir);
}
