// runtime/pipeline/policy_io: the self-repair dialogues `leap pretrain` adds for
// sft.self_repair_steps, checked against the prompt a later turn of the rollout shows and the
// turn-1 targets they are answered with. Pure text; no CAF, no LibTorch.
#include "runtime/pipeline/policy_io.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace leap;
using namespace leap::runtime;

namespace {

env::task_spec spec(const std::string& name) {
  env::task_spec t;
  t.name = name;
  t.description = "Do " + name + ".";
  t.signature = "extern \"C\" void solution(const float* x, float* y, int n)";
  return t;
}

sft_text target(const std::string& task, const std::string& code, int alternative) {
  sft_text t;
  t.task = task;
  t.prompt = "<turn-1 prompt of " + task + ">";
  t.completion = "```cuda\n" + code + "```";
  t.alternative = alternative;
  return t;
}

} // namespace

TEST(SelfRepairTexts, AFailedAttemptIsAnsweredByItsTasksFirstSolutionInTheNextTurnsPrompt) {
  const std::map<std::string, env::task_spec> tasks{{"relu", spec("relu")},
                                                    {"saxpy", spec("saxpy")},
                                                    {"gelu", spec("gelu")}};
  std::vector<sft_text> texts{target("relu", "relu alternative 1\n", 1),
                              target("relu", "relu first\n", 0),
                              target("saxpy", "saxpy first\n", 0)};
  // A corpus repair dialogue of gelu is not a turn-1 target: gelu has none.
  sft_text repair = target("gelu", "gelu fixed\n", 0);
  repair.repair = true;
  texts.push_back(repair);
  const std::vector<failed_turn> failures{
    {"relu", "__global__ void k() { oops }\n", "compile error:\nsolution.cu(1): error: oops"},
    {"gelu", "gelu attempt\n", "wrong answer"},
    {"saxpy", "", "no ```cuda code block found"}};

  auto out = self_repair_texts(failures, texts, tasks);

  ASSERT_EQ(out.size(), 2u); // gelu has no turn-1 target: left out
  EXPECT_EQ(out[0].task, "relu");
  EXPECT_TRUE(out[0].repair);
  EXPECT_EQ(out[0].alternative, 0);
  EXPECT_EQ(out[0].completion, "```cuda\nrelu first\n```"); // alternative 0, not the first listed
  EXPECT_EQ(out[0].prompt, task_prompt(tasks.at("relu"), {failures[0].code}, {failures[0].feedback},
                                       policy::chat_format::leap));
  // The prompt is the rollout's turn-2 prompt: the task, the failed code, its feedback.
  EXPECT_NE(out[0].prompt.find("Do relu."), std::string::npos);
  EXPECT_NE(out[0].prompt.find("oops }"), std::string::npos);
  EXPECT_NE(out[0].prompt.find("solution.cu(1): error: oops"), std::string::npos);
  EXPECT_EQ(out[1].task, "saxpy");
  EXPECT_EQ(out[1].completion, "```cuda\nsaxpy first\n```");
  EXPECT_EQ(out[1].prompt, task_prompt(tasks.at("saxpy"), {""}, {failures[2].feedback},
                                       policy::chat_format::leap));
  EXPECT_TRUE(self_repair_texts({}, texts, tasks).empty());
}

// A task's title (generated paraphrases set one) is the name its prompt shows; without one the
// prompt shows the task's name.
TEST(TaskPrompt, ShowsTheTitleWhenTheTaskHasOne) {
  auto t = spec("gen_ew_p00042");
  EXPECT_NE(task_prompt(t, {}, {}, policy::chat_format::leap).find("Task: gen_ew_p00042\n"), std::string::npos);
  t.title = "clamp_minimum";
  const auto p = task_prompt(t, {}, {}, policy::chat_format::leap);
  EXPECT_NE(p.find("Task: clamp_minimum\n"), std::string::npos) << p;
  EXPECT_EQ(p.find("Task: gen_ew_p00042"), std::string::npos) << p;
  EXPECT_EQ(view_of(t).name, "clamp_minimum");
}
