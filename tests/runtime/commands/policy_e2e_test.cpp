// `leap pretrain` and `leap eval` end to end with a tiny model on two tasks: the corpus is
// labelled through the real environment, the tokenizer trained, a few SFT steps run, a
// checkpoint written; eval samples through it, verifies every sample with nvcc and the CPU
// emulation, and feeds the verdicts back for a second turn.
#include "common/fs.hpp"
#include "runtime/commands/eval.hpp"
#include "runtime/commands/pretrain.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

TEST(PolicyE2E, PretrainThenEvalWithFeedback) {
  auto cfg = config::defaults();
  for (const char* s : {"environment.backend=cpu", "sft.tasks=[\"vector_add\", \"relu\"]",
                        "eval.tasks=[\"vector_add\", \"relu\"]", "policy.vocab_size=600",
                        "policy.d_model=32", "policy.n_layers=1", "policy.n_heads=2",
                        "policy.n_kv_heads=1", "policy.d_ff=64", "sft.max_steps=3",
                        "sft.batch_sequences=2", "eval.group_size=2", "eval.max_turns=2",
                        "eval.max_new_tokens=48", "executor.timeout_seconds=10"})
    ASSERT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto dir = *make_temp_dir(temp_root(), "leap-pretrain-") + "/checkpoint";
  auto p = pretrain(**svc, dir, false);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->steps, 3);
  EXPECT_GT(p->turn1_examples, 4u);
  EXPECT_GT(p->repair_examples, 4u);
  EXPECT_GT(p->first_loss, 0.0);
  for (auto f : {"config.json", "model.safetensors", "tokenizer.json", "optimizer.safetensors",
                 "trainer_state.json"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  auto e = evaluate_checkpoint(**svc, dir, false);
  ASSERT_TRUE(e.ok()) << e.message();
  ASSERT_EQ(e->per_task.size(), 2u);
  for (auto& [name, t] : e->per_task)
    EXPECT_EQ(t.solved_turn.size(), 2u) << name;
  ASSERT_GE(e->acc_at.size(), 3u);
  EXPECT_DOUBLE_EQ(e->pass_at_1, e->acc_at[0]);
  EXPECT_LE(e->acc_at[0], e->acc_at[1]);
  // Every unsolved turn-1 attempt was retried once with its feedback.
  long long unsolved = 0;
  for (auto& [name, t] : e->per_task)
    for (int s : t.solved_turn)
      unsolved += s != 1;
  EXPECT_EQ(e->samples, 4 + unsolved);
  fs::remove_all(fs::path(dir).parent_path());
}
