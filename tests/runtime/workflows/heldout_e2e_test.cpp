// Held-out evaluation during training (train.eval_every) end to end with the tests' tiny policy:
// the figures on the rows of the evaluated steps only, its compiles apart from training's, the
// training rows the same as a run without it, --resume without a duplicate evaluation, and the
// held-out charts in report.html. In-process run_training (runtime/workflows/train_run.hpp).
#include "common/fs.hpp"
#include "runtime/pipeline/services.hpp"
#include "runtime/report/run_data.hpp"
#include "runtime/workflows/train_run.hpp"
#include "tests/runtime/commands/jsonl.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace leap;

namespace {

config::leap_config tiny_config(const std::string& warm, std::vector<std::string> extra) {
  auto cfg = config::defaults();
  // Sync mode, admission order: the same seed trains the same groups step by step whatever the
  // timing, so two runs can be compared row by row.
  for (auto& s : {"train.mode=sync", "train.batch_order=admission", "executor.seed=5",
                  "eval.group_size=2", "eval.max_turns=2", "eval.max_new_tokens=320"})
    extra.push_back(s);
  for (auto& s : test::tiny)
    EXPECT_TRUE(config::apply_override(cfg, s).ok()) << s;
  for (auto& s : extra)
    EXPECT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.train.warm_start = warm;
  return cfg;
}

// What a training row says about training (not wall-clock, not the held-out evaluation) and is
// decided exactly by the seed: the tasks, the sampled tokens' verdicts, the counts. The loss and
// KL are compared apart (same_losses): they are the same only up to float rounding.
nlohmann::json training_part(const nlohmann::json& row) {
  nlohmann::json t;
  for (auto key : {"step", "tasks", "acc_at_1", "acc_at_2", "acc_at_3", "attempts", "outcome",
                   "policy_version", "activated_groups", "dropped"})
    t[key] = row.value(key, nlohmann::json());
  // The two runs share the tests' build cache: a later run's compile may be a cache hit.
  t["compile_requests"] = row.value("compiles", 0) + row.value("cache_hits", 0);
  return t;
}

// The loss and KL of two runs that trained the same tokens. The generator pool decodes whatever
// jobs are queued together (actors/generator_pool.hpp): each sequence's tokens do not depend on
// its batch mates, but its behaviour log-probs do, in the last bits (another batch shape rounds
// otherwise; the policy tests allow 1e-4 per token), and which jobs meet in a batch depends
// on timing. Measured: 2.4e-7 per token between a prompt decoded alone and in a batch of three
// (PolicyModel.BatchOfDifferentPromptsEqualsOneByOne's prompts); under load the two runs' step-3
// losses here differed by 1.5e-8 (0.0755231774 against 0.0755231926).
void same_losses(const nlohmann::json& a, const nlohmann::json& b, std::size_t step) {
  for (auto key : {"loss", "kl"}) {
    ASSERT_TRUE(a.contains(key) && b.contains(key)) << key << " at step " << step;
    const double x = a[key].get<double>(), y = b[key].get<double>();
    EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(x))) << key << " at step " << step;
  }
}

} // namespace

TEST(HeldoutE2E, EvaluatesAtItsStepsApartFromTrainingAndResumesWithoutDuplicates) {
  const auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  const auto root = *make_temp_dir(temp_root(), "leap-heldout-");
  const auto with = root + "/with", without = root + "/without";

  // Step 3 trains after an evaluation in the same process.
  auto cfg = tiny_config(warm, {"train.steps=3", "train.eval_every=2", "train.eval_tasks=1"});
  auto svc = runtime::make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  testing::internal::CaptureStdout();
  ASSERT_EQ(runtime::run_training(**svc, with, false), 0);
  auto out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("held-out evaluation every 2 steps: 1 tasks"), std::string::npos) << out;
  EXPECT_NE(out.find("      held-out: acc@1 "), std::string::npos) << out;
  EXPECT_NE(out.find("held-out evaluation: 1 run(s)"), std::string::npos) << out;

  auto m = test::read_jsonl(with + "/metrics.jsonl");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_FALSE(m[0].contains("heldout")) << "step 1 is not a multiple of eval_every";
  EXPECT_FALSE(m[2].contains("heldout"));
  ASSERT_TRUE(m[1].contains("heldout")) << m[1].dump();
  const auto& h = m[1]["heldout"];
  EXPECT_EQ(h["tasks"].get<int>(), 1);
  EXPECT_EQ(h["attempts"].get<int>(), 2); // eval.group_size
  EXPECT_GE(h["acc_at_3"].get<double>(), h["acc_at_1"].get<double>());
  EXPECT_GT(h["seconds"].get<double>(), 0);
  ASSERT_TRUE(h["sets"].contains("eval")) << h.dump();
  EXPECT_EQ(h["sets"]["eval"]["tasks"].get<int>(), 1);
  // The evaluation's compile requests are its own: it sampled code that reached the compiler.
  const long long held_requests = h["compiles"].get<long long>() + h["cache_hits"].get<long long>();
  EXPECT_GT(held_requests, 0) << h.dump();
  // The step's time is its own: the evaluation's seconds are not in the next step's.
  // `leap report`'s reader sees the figures; the page has the held-out charts.
  auto run = report::load_run(with);
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_TRUE(run->steps[1].heldout);
  EXPECT_EQ(run->steps[1].heldout->compile_requests(), held_requests);
  EXPECT_GT(run->elapsed_seconds[1], run->wall_seconds[1]);
  auto page = read_file(with + "/report.html");
  ASSERT_TRUE(page.ok());
  EXPECT_NE(page->find("Held-out Acc@1 / Acc@3 by step"), std::string::npos);
  EXPECT_NE(page->find("Held-out Acc@1 / Acc@3 by wall-clock"), std::string::npos);

  // The same run without the evaluation trains the same rows.
  auto cfg0 = tiny_config(warm, {"train.steps=3"});
  auto svc0 = runtime::make_services(cfg0);
  ASSERT_TRUE(svc0.ok()) << svc0.message();
  testing::internal::CaptureStdout();
  ASSERT_EQ(runtime::run_training(**svc0, without, false), 0);
  testing::internal::GetCapturedStdout();
  auto m0 = test::read_jsonl(without + "/metrics.jsonl");
  ASSERT_EQ(m0.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(m0[i].contains("heldout"));
    EXPECT_EQ(training_part(m[i]), training_part(m0[i])) << "step " << i + 1;
    same_losses(m[i], m0[i], i + 1);
  }
  auto page0 = read_file(without + "/report.html");
  ASSERT_TRUE(page0.ok());
  EXPECT_EQ(page0->find("Held-out Acc@1"), std::string::npos);

  // --resume to 4 steps: step 4 is evaluated, step 2's evaluation is not repeated.
  auto cfg4 = tiny_config(warm, {"train.steps=4", "train.eval_every=2", "train.eval_tasks=1"});
  auto svc4 = runtime::make_services(cfg4);
  ASSERT_TRUE(svc4.ok()) << svc4.message();
  testing::internal::CaptureStdout();
  ASSERT_EQ(runtime::run_training(**svc4, with, true), 0);
  out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("held-out evaluation: 2 run(s)"), std::string::npos) << out;
  m = test::read_jsonl(with + "/metrics.jsonl");
  ASSERT_EQ(m.size(), 4u);
  std::vector<int> evaluated;
  for (std::size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1));
    if (m[i].contains("heldout"))
      evaluated.push_back(m[i]["step"].get<int>());
  }
  EXPECT_EQ(evaluated, (std::vector<int>{2, 4}));
  // The same fixed sample each time.
  EXPECT_EQ(m[1]["heldout"]["sets"]["eval"]["tasks"], m[3]["heldout"]["sets"]["eval"]["tasks"]);

  // eval_every must fall on checkpoints.
  auto bad = tiny_config(warm, {"train.checkpoint_every=2", "train.eval_every=3"});
  auto svcb = runtime::make_services(bad);
  ASSERT_TRUE(svcb.ok());
  testing::internal::CaptureStderr();
  EXPECT_EQ(runtime::run_training(**svcb, root + "/bad", false), 2);
  auto err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("train.eval_every = 3 must be a multiple of train.checkpoint_every = 2"),
            std::string::npos) << err;
  fs::remove_all(root);
}
