// Tests of the decoder: HF parameter names, cached decoding equals the full forward (MHA, GQA,
// MQA), padded batches equal per-sequence forwards, token_logprobs, and a tiny model overfits.
#include "policy/model/decoder.hpp"

#include <gtest/gtest.h>

using namespace leap::policy;

namespace {

model_config tiny_config(std::int64_t kv_heads = 4, bool tie = true) {
  model_config c;
  c.vocab_size = 300;
  c.d_model = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = kv_heads;
  c.d_ff = 172;
  c.max_seq_len = 256;
  c.tie_embeddings = tie;
  return c;
}

decoder tiny_model(std::int64_t kv_heads = 4, bool tie = true, std::uint64_t seed = 1) {
  torch::manual_seed(seed);
  auto m = make_decoder(tiny_config(kv_heads, tie));
  EXPECT_TRUE(m.ok()) << m.message();
  // Larger init than HF's 0.02 so logits vary enough to make the comparisons meaningful.
  (*m)->init_weights(0.1);
  return *m;
}

float max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<float>();
}

} // namespace

TEST(Decoder, ParameterNamesFollowHuggingFaceLlama) {
  auto untied = tiny_model(2, false);
  auto params = untied->named_parameters();
  for (const char* name : {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                           "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
                           "model.layers.0.self_attn.o_proj.weight", "model.layers.1.mlp.gate_proj.weight",
                           "model.layers.1.mlp.up_proj.weight", "model.layers.1.mlp.down_proj.weight",
                           "model.layers.1.input_layernorm.weight", "model.layers.1.post_attention_layernorm.weight",
                           "model.norm.weight", "lm_head.weight"}) {
    EXPECT_TRUE(params.contains(name)) << name;
  }
  EXPECT_EQ(params.size(), 1u + 2u * 9u + 1u + 1u);
  EXPECT_EQ(params["model.layers.0.self_attn.k_proj.weight"].sizes(), (std::vector<std::int64_t>{32, 64}));
  std::int64_t count = 0;
  for (const auto& p : params) count += p.value().numel();
  EXPECT_EQ(count, tiny_config(2, false).parameter_count());
  auto tied = tiny_model(4, true);
  EXPECT_FALSE(tied->named_parameters().contains("lm_head.weight"));
  EXPECT_EQ(tied->named_parameters().size(), 1u + 2u * 9u + 1u);
}

TEST(Decoder, CachedLogitsEqualFullForward) {
  for (std::int64_t kv : {4, 2, 1}) {  // MHA, GQA, MQA
    auto m = tiny_model(kv);
    torch::NoGradGuard no_grad;
    auto ids = torch::randint(0, 300, {2, 23}, torch::kLong);   // [B, T]
    auto full = m->forward(ids);                                // [B, T, V]
    ASSERT_EQ(full.sizes(), (std::vector<std::int64_t>{2, 23, 300}));
    // Prefill 9 tokens into a deliberately small cache (forces growth), then a chunk of 3, then 1 by 1.
    auto cache = m->make_cache(2, 4);
    std::vector<torch::Tensor> parts;
    parts.push_back(m->forward_cached(ids.narrow(1, 0, 9), cache));
    parts.push_back(m->forward_cached(ids.narrow(1, 9, 3), cache));
    for (std::int64_t t = 12; t < 23; ++t) parts.push_back(m->forward_cached(ids.narrow(1, t, 1), cache));
    auto cached = torch::cat(parts, 1);
    EXPECT_EQ(cache.length, 23);
    EXPECT_LT(max_diff(cached, full), 1e-4) << "n_kv_heads = " << kv;
  }
}

TEST(Decoder, PaddedBatchEqualsPerSequenceForward) {
  auto m = tiny_model(2);
  torch::NoGradGuard no_grad;
  const std::vector<std::int64_t> lengths = {5, 12, 9};
  const std::int64_t T = 12;
  std::vector<torch::Tensor> seqs;
  for (auto n : lengths) seqs.push_back(torch::randint(0, 300, {n}, torch::kLong));
  for (bool left : {true, false}) {
    auto ids = torch::full({3, T}, 0, torch::kLong);   // pad id 0 (any id works: it is masked)
    auto mask = torch::zeros({3, T}, torch::kLong);
    for (std::size_t b = 0; b < seqs.size(); ++b) {
      const auto n = lengths[b], off = left ? T - n : 0;
      ids[b].narrow(0, off, n).copy_(seqs[b]);
      mask[b].narrow(0, off, n).fill_(1);
    }
    auto batched = m->forward(ids, mask);             // [3, T, V]
    for (std::size_t b = 0; b < seqs.size(); ++b) {
      const auto n = lengths[b], off = left ? T - n : 0;
      auto single = m->forward(seqs[b].unsqueeze(0))[0];  // [n, V]
      EXPECT_LT(max_diff(batched[b].narrow(0, off, n), single), 1e-4) << (left ? "left" : "right") << " row " << b;
    }
    if (left) {
      // Decoding after a left-padded prefill continues each row correctly.
      auto cache = m->make_cache(3, T + 1);
      m->forward_cached(ids, cache, mask);
      auto next = torch::randint(0, 300, {3, 1}, torch::kLong);
      auto step = m->forward_cached(next, cache).select(1, 0);  // [3, V]
      for (std::size_t b = 0; b < seqs.size(); ++b) {
        auto full = m->forward(torch::cat({seqs[b], next[b]}).unsqueeze(0))[0][-1];
        EXPECT_LT(max_diff(step[b], full), 1e-4) << "row " << b;
      }
    }
  }
}

TEST(Decoder, TokenLogprobsMatchLogSoftmax) {
  auto m = tiny_model(2, false);
  auto ids = torch::randint(0, 300, {2, 10}, torch::kLong);
  auto lp = token_logprobs(*m, ids, {}, 0.7);
  ASSERT_TRUE(lp.ok()) << lp.message();
  ASSERT_EQ(lp->sizes(), (std::vector<std::int64_t>{2, 9}));
  EXPECT_TRUE(lp->requires_grad()) << "the learner differentiates through it";
  torch::NoGradGuard no_grad;
  auto ref = torch::log_softmax(m->forward(ids) / 0.7, -1).narrow(1, 0, 9).gather(2, ids.narrow(1, 1, 9).unsqueeze(2))
                 .squeeze(2);
  EXPECT_LT(max_diff(*lp, ref), 1e-5);
  std::vector<int> one(ids[0].data_ptr<std::int64_t>(), ids[0].data_ptr<std::int64_t>() + 10);
  auto v = token_logprobs(*m, one, 0.7);
  ASSERT_TRUE(v.ok()) << v.message();
  ASSERT_EQ(v->size(), 9u);
  for (int t = 0; t < 9; ++t) EXPECT_NEAR((*v)[t], ref[0][t].item<float>(), 1e-5);
  EXPECT_FALSE(token_logprobs(*m, std::vector<int>{1, 999}).ok()) << "id out of the vocabulary";
}

TEST(Decoder, RejectsBadInput) {
  auto bad = tiny_config();
  bad.n_kv_heads = 3;
  auto m = make_decoder(bad);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("num_key_value_heads"), std::string::npos);
  auto ok = tiny_model();
  auto too_long = token_logprobs(*ok, torch::zeros({1, 300}, torch::kLong));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.message().find("max_position_embeddings"), std::string::npos) << too_long.message();
}

TEST(Decoder, TinyModelOverfitsTinyBatch) {
  torch::manual_seed(7);
  auto m = make_decoder(tiny_config(2, false));
  ASSERT_TRUE(m.ok());
  auto model = *m;
  auto ids = torch::randint(0, 300, {4, 16}, torch::kLong);  // [B, T]
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(3e-3).weight_decay(0.0));
  float first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    auto lp = token_logprobs(*model, ids);
    ASSERT_TRUE(lp.ok());
    auto loss = -lp->mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
    last = loss.item<float>();
    if (step == 0) first = last;
    if (last < 0.05f) break;
  }
  EXPECT_GT(first, 5.0f) << "starts near log(300) = 5.7";
  EXPECT_LT(last, 0.05f) << "started at " << first;
}
