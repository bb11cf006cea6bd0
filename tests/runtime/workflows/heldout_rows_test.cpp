// Held-out evaluation's figures (train.eval_every) without a training run: the metrics writer's
// "heldout" object on the rows of evaluated steps only, read back by `leap report`'s reader
// (elapsed time including the evaluations, compile requests apart from training's), the report's
// held-out charts, and `leap experiment`'s held-out columns (last evaluation, mean and interval
// per arm); rows written before the field existed read as before.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "messages/train_messages.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/run_data.hpp"
#include "runtime/workflows/experiment_data.hpp"
#include "runtime/workflows/heldout_eval.hpp"
#include "runtime/workflows/metrics_writer.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace leap;
using namespace leap::runtime;
using leap::test::temp_dir;
namespace ex = leap::runtime::experiment;

namespace {

msg::step_report report(std::int64_t step) {
  msg::step_report r;
  r.step = step;
  r.policy_version = step;
  r.acc_at_1 = 0.5;
  r.attempts = 8;
  r.compiles = 6;
  r.cache_hits = 2;
  r.tasks = {"relu"};
  return r;
}

heldout_figures figures(double acc1, double acc3) {
  heldout_figures h;
  h.tasks = 3;
  h.attempts = 24;
  h.acc_at_1 = acc1;
  h.acc_at_3 = acc3;
  h.compiles = 10;
  h.cache_hits = 4;
  h.seconds = 30;
  h.sets = {{"eval", 2, 16, acc1, acc3}, {"generated_composition", 1, 8, 0.0, 0.125}};
  return h;
}

// A run of 4 steps of 60 s, evaluated at steps 2 and 4.
void write_run(const std::string& dir, double last_acc1) {
  auto w = metrics_writer::open(dir + "/metrics.jsonl", dir + "/groups.jsonl");
  ASSERT_TRUE(w.ok()) << w.message();
  for (int s = 1; s <= 4; ++s) {
    const auto h = figures(s == 4 ? last_acc1 : 0.25, 0.5);
    ASSERT_TRUE(w->write_step(report(s), 60.0, 0.1, {}, nullptr, s % 2 == 0 ? &h : nullptr).ok());
  }
}

} // namespace

TEST(HeldoutRows, OnTheEvaluatedStepsReadBackApartFromTraining) {
  temp_dir d;
  write_run(d.path, 0.375);
  auto text = read_file(d.path + "/metrics.jsonl");
  ASSERT_TRUE(text.ok());
  auto lines = split_lines(*text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_FALSE(nlohmann::json::parse(lines[0]).contains("heldout"));
  auto row = nlohmann::json::parse(lines[3]);
  ASSERT_TRUE(row.contains("heldout"));
  EXPECT_EQ(row["heldout"]["acc_at_1"].get<double>(), 0.375);
  EXPECT_EQ(row["heldout"]["sets"]["generated_composition"]["tasks"].get<int>(), 1);
  EXPECT_EQ(row["compiles"].get<int>(), 6) << "the step's own compiles are training's";

  auto run = report::load_run(d.path);
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(run->steps.size(), 4u);
  EXPECT_FALSE(run->steps[0].heldout);
  ASSERT_TRUE(run->steps[3].heldout);
  const auto& h = *run->steps[3].heldout;
  EXPECT_EQ(h.acc_at_1, 0.375);
  EXPECT_EQ(h.acc_at_3, 0.5);
  EXPECT_EQ(h.tasks, 3);
  EXPECT_EQ(h.attempts, 24);
  EXPECT_EQ(h.compile_requests(), 14);
  ASSERT_EQ(h.sets.size(), 2u);
  EXPECT_EQ(h.sets[0].name, "eval");
  EXPECT_EQ(h.sets[1].attempts, 8);
  EXPECT_EQ(run->steps[3].compile_requests(), 8) << "held-out compiles are not the step's";
  // Learner-step wall-clock leaves the evaluations out; elapsed time has them.
  EXPECT_DOUBLE_EQ(run->wall_seconds[3], 240.0);
  EXPECT_DOUBLE_EQ(run->elapsed_seconds[3], 300.0);
  EXPECT_DOUBLE_EQ(run->elapsed_seconds[1], 150.0);

  // The page: both held-out charts, and the summary's last held-out figures with the compiles of
  // both evaluations.
  const auto page = report::render_report({*run});
  EXPECT_NE(page.find("Held-out Acc@1 / Acc@3 by step"), std::string::npos);
  EXPECT_NE(page.find("Held-out Acc@1 / Acc@3 by wall-clock"), std::string::npos);
  EXPECT_NE(page.find("0.375 / 0.500 (28)"), std::string::npos);
  // A run without evaluations: no held-out chart.
  temp_dir d0;
  std::ofstream(d0.path + "/metrics.jsonl") << "{\"step\": 1, \"acc_at_1\": 0.5}\n";
  auto old = report::load_run(d0.path);
  ASSERT_TRUE(old.ok()) << old.message();
  EXPECT_FALSE(old->steps[0].heldout);
  EXPECT_EQ(report::render_report({*old}).find("Held-out Acc@1"), std::string::npos);
  // A malformed object is an error naming the line and field.
  std::ofstream(d0.path + "/metrics.jsonl") << "{\"step\": 1, \"heldout\": {\"acc_at_1\": \"x\"}}\n";
  auto bad = report::load_run(d0.path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("metrics.jsonl:1: heldout: field acc_at_1: expected a number"),
            std::string::npos) << bad.message();
}

TEST(HeldoutRows, TheExperimentTableShowsTheLastHeldOutFiguresPerArm) {
  temp_dir a, b, c;
  write_run(a.path, 0.25);
  write_run(b.path, 0.5);
  std::ofstream(c.path + "/metrics.jsonl") << "{\"step\": 1, \"acc_at_1\": 0.5}\n";
  std::vector<ex::run_result> runs(3);
  for (auto [i, dir] : {std::pair<int, std::string>{0, a.path}, {1, b.path}, {2, c.path}}) {
    runs[i].arm = i < 2 ? "leap" : "grpo1";
    runs[i].seed = i + 1;
    ASSERT_TRUE(ex::add_training_figures(dir, 0, runs[i]).ok());
  }
  ASSERT_TRUE(runs[0].heldout_acc1 && runs[0].heldout_compiles);
  EXPECT_EQ(*runs[0].heldout_acc1, 0.25);
  EXPECT_EQ(*runs[1].heldout_acc1, 0.5);
  EXPECT_EQ(*runs[0].heldout_compiles, 28);
  EXPECT_FALSE(runs[2].heldout_acc1) << "a run without evaluations has no held-out figures";
  ex::spec s;
  s.seeds = {1, 2};
  s.arms.resize(2);
  s.arms[0].name = "leap";
  s.arms[0].label = "LEAP";
  s.arms[1].name = "grpo1";
  s.arms[1].label = "GRPO";
  const auto sums = ex::summarise(s, runs);
  ASSERT_TRUE(sums[0].stat.at("heldout_acc1"));
  EXPECT_DOUBLE_EQ(sums[0].stat.at("heldout_acc1")->mean, 0.375);
  EXPECT_TRUE(sums[0].stat.at("heldout_acc1")->half_width);
  EXPECT_FALSE(sums[1].stat.at("heldout_acc1"));
  const auto table = ex::render_table_md(s, sums, {});
  EXPECT_NE(table.find("| held-out Acc@1 | held-out Acc@3 | held-out compiles |"),
            std::string::npos) << table;
  // LEAP: Acc@1 37.5 ± t95(1) * 0.1768 / sqrt(2) * 100 = 37.5 ± 158.8; Acc@3 50.0 ± 0.0; 28 ± 0.
  EXPECT_NE(table.find("| 37.5 ± 158.8 | 50.0 ± 0.0 | 28 ± 0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("(0/1) | – | – | – |"), std::string::npos) << table;
  const auto csv = ex::render_runs_csv(runs);
  EXPECT_NE(csv.find("heldout_acc1,heldout_acc3,heldout_compiles"), std::string::npos) << csv;
}
