// Tests of checkpoint directories: round trip (identical logits, optimizer state, trainer
// state, tokenizer), atomic overwrite, and mismatch errors naming the tensors.
#include "policy/model/checkpoint.hpp"

#include "common/fs.hpp"
#include "policy/model/tensor_file.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using namespace leap::policy;
namespace fs = std::filesystem;

namespace {

model_config tiny_config(std::int64_t d_ff = 172, bool tie = false) {
  model_config c;
  c.vocab_size = 300;
  c.d_model = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = d_ff;
  c.max_seq_len = 64;
  c.tie_embeddings = tie;
  c.eos_id = 2;
  return c;
}

using leap::test::temp_dir;

void train_steps(decoder& m, torch::optim::AdamW& opt, const torch::Tensor& ids, int n) {
  for (int i = 0; i < n; ++i) {
    auto loss = -token_logprobs(*m, ids)->mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

} // namespace

TEST(Checkpoint, RoundTripGivesIdenticalModelAndOptimizer) {
  temp_dir tmp;
  torch::manual_seed(1);
  auto m = *make_decoder(tiny_config());
  auto ids = torch::randint(0, 300, {2, 12}, torch::kLong);
  torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-3));
  train_steps(m, opt, ids, 3);
  ASSERT_TRUE(leap::write_file_atomic(tmp.path + "/tok.json", R"({"model": {"type": "BPE"}})").ok());
  checkpoint_save_options o;
  o.optimizer = &opt;
  o.state.step = 3;
  o.state.policy_version = 2;
  o.state.extra["seed"] = 42;
  o.tokenizer_json_path = tmp.path + "/tok.json";
  const std::string dir = tmp.path + "/ckpt/step-3";
  auto saved = save_checkpoint(dir, *m, o);
  ASSERT_TRUE(saved.ok()) << saved.message();
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json", "optimizer.safetensors",
                        "trainer_state.json"}) {
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  }

  auto loaded = load_model(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ((*loaded)->config().d_ff, 172);
  EXPECT_EQ((*loaded)->config().eos_id, 2);
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(m->forward(ids), (*loaded)->forward(ids)));
  }
  auto st = load_trainer_state(dir);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(st->step, 3);
  EXPECT_EQ(st->policy_version, 2);
  EXPECT_EQ(st->extra["seed"], 42);
  auto tok = checkpoint_tokenizer_path(dir);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(*leap::read_file(*tok), R"({"model": {"type": "BPE"}})");

  // Optimizer state: continuing from the checkpoint equals continuing the original.
  auto m2 = *loaded;
  torch::optim::AdamW opt2(m2->parameters(), torch::optim::AdamWOptions(1e-3));
  auto r = load_optimizer_state(opt2, *m2, dir);
  ASSERT_TRUE(r.ok()) << r.message();
  train_steps(m, opt, ids, 2);
  train_steps(m2, opt2, ids, 2);
  auto p1 = m->named_parameters(), p2 = m2->named_parameters();
  for (const auto& p : p1) {
    EXPECT_LT((p.value() - p2[p.key()]).abs().max().item<float>(), 1e-6) << p.key();
  }
}

TEST(Checkpoint, OverwriteIsAtomicAndLeavesNoTempDirs) {
  temp_dir tmp;
  auto m = *make_decoder(tiny_config(172, true));
  const std::string dir = tmp.path + "/ckpt";
  ASSERT_TRUE(save_checkpoint(dir, *m, {}).ok());
  m->init_weights(0.05);
  checkpoint_save_options o;
  o.state.step = 9;
  o.tokenizer_json = "{}";
  auto again = save_checkpoint(dir, *m, o);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(load_trainer_state(dir)->step, 9);
  EXPECT_FALSE(fs::exists(dir + "/optimizer.safetensors"));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "ckpt");
  }
  EXPECT_EQ(entries, 1);
  auto loaded = load_model(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_FALSE((*loaded)->named_parameters().contains("lm_head.weight"));
  EXPECT_TRUE(torch::equal(m->model->embed_tokens->weight, (*loaded)->model->embed_tokens->weight));
}

TEST(Checkpoint, MismatchesAreAllReported) {
  temp_dir tmp;
  auto m = *make_decoder(tiny_config(172, false));
  const std::string dir = tmp.path + "/ckpt";
  ASSERT_TRUE(save_checkpoint(dir, *m, {}).ok());

  auto wider = *make_decoder(tiny_config(176, true));  // other d_ff, tied (no lm_head)
  auto r = load_weights(*wider, dir + "/model.safetensors");
  ASSERT_FALSE(r.ok());
  const auto& msg = r.message();
  EXPECT_NE(msg.find("tensor 'model.layers.0.mlp.gate_proj.weight' has shape [172, 64] in the file, the model "
                     "expects [176, 64]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("model.layers.1.mlp.down_proj.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("6 mismatch(es)"), std::string::npos) << msg;  // 3 MLP weights x 2 layers
  // lm_head.weight in the file is tolerated for a tied model; an untied model missing it is not.
  auto untied = *make_decoder(tiny_config(172, false));
  auto tied = *make_decoder(tiny_config(172, true));
  ASSERT_TRUE(save_checkpoint(dir, *tied, {}).ok());
  auto missing = load_weights(*untied, dir + "/model.safetensors");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("missing tensor 'lm_head.weight'"), std::string::npos) << missing.message();

  // An unexpected tensor is named too.
  named_tensors extra;
  for (const auto& p : untied->named_parameters()) extra[p.key()] = p.value();
  extra["model.layers.2.mlp.up_proj.weight"] = torch::zeros({172, 64});
  ASSERT_TRUE(leap::policy::save_tensors(tmp.path + "/x.safetensors", extra).ok());
  auto unexpected = load_weights(*untied, tmp.path + "/x.safetensors");
  ASSERT_FALSE(unexpected.ok());
  EXPECT_NE(unexpected.message().find("unexpected tensor 'model.layers.2.mlp.up_proj.weight'"), std::string::npos)
      << unexpected.message();

  // Bad config.json and missing files.
  ASSERT_TRUE(leap::write_file_atomic(dir + "/config.json", R"({"vocab_size": 300})").ok());
  auto bad = load_model(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("config.json"), std::string::npos) << bad.message();
  EXPECT_FALSE(load_model(tmp.path + "/nope").ok());
  torch::optim::AdamW opt(untied->parameters());
  EXPECT_FALSE(load_optimizer_state(opt, *untied, dir).ok()) << "no optimizer.safetensors";
}
