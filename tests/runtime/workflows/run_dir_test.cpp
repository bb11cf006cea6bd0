// A training run's directory (runtime/workflows/run_dir.hpp) without a training run: one run per
// directory, the resume point read from a checkpoint's trainer_state.json (other tasks refused, a
// changed task suite warned about, a damaged file named), the logs cut back to the resumed step,
// the logs of a run that saved nothing removed, and a staged checkpoint promoted.
#include "actors/task_progress.hpp"
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/workflows/run_dir.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;
using leap::test::temp_dir;

namespace {

// A directory that passes for a checkpoint of `step` trained on `tasks` (suite `suite`).
void fake_checkpoint(const std::string& dir, std::int64_t step,
                     const std::vector<std::string>& tasks, const std::string& suite) {
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << "{}";
  std::ofstream(dir + "/model.safetensors") << "weights";
  actors::task_progress p;
  p.mark(0, 1, tasks.size());
  nlohmann::json extra{{"tasks", tasks}, {"task_suite", suite},
                       {"progress", nlohmann::json::parse(actors::progress_to_json(p))}};
  std::ofstream(dir + "/trainer_state.json") << nlohmann::json{{"step", step}, {"extra", extra}};
}

std::size_t lines_of(const std::string& path) {
  auto text = read_file(path);
  return text ? split_lines(std::string(trim(*text))).size() : 0;
}

} // namespace

TEST(RunDir, OneRunPerDirectory) {
  temp_dir t;
  const auto dir = t.path + "/run";
  {
    auto first = run_dir::open(dir, "leap train");
    ASSERT_TRUE(first) << first.message();
    EXPECT_TRUE(fs::is_directory(dir));
    EXPECT_EQ(first->checkpoint_dir(), dir + "/checkpoint");
    EXPECT_EQ(first->metrics_path(), dir + "/metrics.jsonl");
    EXPECT_FALSE(first->has_checkpoint());
    auto second = run_dir::open(dir, "leap train");
    ASSERT_FALSE(second);
    EXPECT_NE(second.message().find(dir), std::string::npos) << second.message();
  }
  // Released with the object.
  EXPECT_TRUE(run_dir::open(dir, "leap train"));
}

TEST(RunDir, TheResumePointIsTheCheckpointsStepTasksAndProgress) {
  temp_dir t;
  auto rd = run_dir::open(t.path + "/run", "leap train");
  ASSERT_TRUE(rd) << rd.message();
  fake_checkpoint(rd->checkpoint_dir(), 4, {"relu", "vector_add"}, "suite-a");
  ASSERT_TRUE(rd->has_checkpoint());
  std::vector<std::string> warnings;
  auto warn = [&](const std::string& w) { warnings.push_back(w); };
  auto p = rd->read_resume_point({"relu", "vector_add"}, "suite-a", warn);
  ASSERT_TRUE(p) << p.message();
  EXPECT_EQ(p->step, 4);
  EXPECT_EQ(p->progress.consumed[0].count(1), 1u);
  EXPECT_TRUE(warnings.empty());
  // Edited task files: resumed, with a warning naming both hashes.
  ASSERT_TRUE(rd->read_resume_point({"relu", "vector_add"}, "suite-b", warn));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("suite hash suite-a, now suite-b"), std::string::npos) << warnings[0];
  // Other tasks: refused.
  auto other = rd->read_resume_point({"relu"}, "suite-a", warn);
  ASSERT_FALSE(other);
  EXPECT_NE(other.message().find("trained on other tasks"), std::string::npos) << other.message();
  // A damaged state file: named.
  std::ofstream(rd->checkpoint_dir() + "/trainer_state.json") << "{\"step\": 4";
  auto damaged = rd->read_resume_point({"relu", "vector_add"}, "suite-a", warn);
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.message().find(rd->checkpoint_dir() + "/trainer_state.json: "),
            std::string::npos)
    << damaged.message();
}

TEST(RunDir, LogsAreCutBackToTheResumedStepOrRemovedOnAFreshStart) {
  temp_dir t;
  auto rd = run_dir::open(t.path + "/run", "leap train");
  ASSERT_TRUE(rd) << rd.message();
  std::ofstream(rd->metrics_path()) << "{\"step\": 1}\n{\"step\": 2}\n{\"step\": 3}\n{\"st";
  std::ofstream(rd->groups_path()) << "{\"step\": 1, \"group\": 1}\n{\"step\": 3, \"group\": 2}\n";
  std::vector<std::string> warnings;
  ASSERT_TRUE(rd->truncate_logs(2, [&](const std::string& w) { warnings.push_back(w); }));
  EXPECT_EQ(lines_of(rd->metrics_path()), 2u);
  EXPECT_EQ(lines_of(rd->groups_path()), 1u);
  ASSERT_EQ(warnings.size(), 1u); // the cut line of metrics.jsonl
  EXPECT_NE(warnings[0].find(rd->metrics_path()), std::string::npos) << warnings[0];
  auto removed = rd->remove_logs();
  EXPECT_EQ(removed, (std::vector<std::string>{rd->metrics_path(), rd->groups_path()}));
  EXPECT_FALSE(fs::exists(rd->metrics_path()));
  EXPECT_FALSE(fs::exists(rd->groups_path()));
  EXPECT_TRUE(rd->remove_logs().empty());
}

TEST(RunDir, AStagedCheckpointIsPromotedAndLeftoversAreRemoved) {
  temp_dir t;
  auto rd = run_dir::open(t.path + "/run", "leap train");
  ASSERT_TRUE(rd) << rd.message();
  EXPECT_FALSE(rd->checkpoint_step());
  fake_checkpoint(rd->staged_base() + ".3", 3, {"relu"}, "s");
  ASSERT_TRUE(rd->promote(3));
  EXPECT_TRUE(rd->has_checkpoint());
  EXPECT_EQ(rd->checkpoint_step(), 3);
  EXPECT_FALSE(fs::exists(rd->staged_base() + ".3"));
  // A later one replaces it.
  fake_checkpoint(rd->staged_base() + ".4", 4, {"relu"}, "s");
  ASSERT_TRUE(rd->promote(4));
  EXPECT_EQ(rd->checkpoint_step(), 4);
  // Nothing staged under that step: an error naming it; the checkpoint stays.
  auto none = rd->promote(5);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find(rd->staged_base() + ".5"), std::string::npos) << none.message();
  EXPECT_EQ(rd->checkpoint_step(), 4);
  // Staged directories a killed run left are removed; the checkpoint is not.
  fake_checkpoint(rd->staged_base() + ".6", 6, {"relu"}, "s");
  fake_checkpoint(rd->staged_base() + ".7", 7, {"relu"}, "s");
  rd->remove_staged();
  EXPECT_FALSE(fs::exists(rd->staged_base() + ".6"));
  EXPECT_FALSE(fs::exists(rd->staged_base() + ".7"));
  EXPECT_EQ(rd->checkpoint_step(), 4);
}
