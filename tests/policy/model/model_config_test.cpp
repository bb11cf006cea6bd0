// Tests of model_config: HF config.json parsing (Llama, Qwen2), round trip, validation errors.
#include "policy/model/model_config.hpp"

#include <gtest/gtest.h>

using namespace leap::policy;

namespace {

// Shape of a real Llama-family config.json (TinyLlama-1.1B).
const char* llama_json = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5632,
  "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32,
  "num_hidden_layers": 22, "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": null, "rope_theta": 10000.0, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 32000})";

// Shape of Qwen2.5-0.5B's config.json.
const char* qwen_json = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

} // namespace

TEST(ModelConfig, LoadsLlamaConfig) {
  auto c = model_config_from_json(llama_json);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->vocab_size, 32000);
  EXPECT_EQ(c->d_model, 2048);
  EXPECT_EQ(c->n_layers, 22);
  EXPECT_EQ(c->n_heads, 32);
  EXPECT_EQ(c->kv_heads(), 4);
  EXPECT_EQ(c->dim_per_head(), 64);
  EXPECT_EQ(c->d_ff, 5632);
  EXPECT_FALSE(c->tie_embeddings);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->eos_id, 2);
  EXPECT_DOUBLE_EQ(c->rms_eps, 1e-5);
  EXPECT_NEAR(static_cast<double>(c->parameter_count()), 1.1e9, 0.01e9);  // TinyLlama 1.1B
}

TEST(ModelConfig, LoadsQwen2ConfigWithQkvBias) {
  auto c = model_config_from_json(qwen_json);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_FALSE(c->o_bias);
  EXPECT_TRUE(c->tie_embeddings);
  EXPECT_EQ(c->kv_heads(), 2);
  EXPECT_EQ(c->dim_per_head(), 64);
  EXPECT_NEAR(static_cast<double>(c->parameter_count()), 494e6, 2e6);  // Qwen2.5-0.5B: 494M
  // Round trip keeps the Qwen2 bias layout.
  auto again = model_config_from_json(model_config_to_json(*c));
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_TRUE(again->qkv_bias);
  EXPECT_FALSE(again->o_bias);
}

TEST(ModelConfig, RoundTripsThroughJson) {
  model_config c;
  c.vocab_size = 300; c.d_model = 64; c.n_layers = 2; c.n_heads = 4; c.n_kv_heads = 2; c.d_ff = 172;
  c.max_seq_len = 128; c.rope_theta = 5000; c.rms_eps = 1e-6; c.tie_embeddings = false;
  c.bos_id = 1; c.eos_id = 2; c.pad_id = 0;
  auto back = model_config_from_json(model_config_to_json(c));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->vocab_size, 300);
  EXPECT_EQ(back->n_kv_heads, 2);
  EXPECT_EQ(back->d_ff, 172);
  EXPECT_EQ(back->max_seq_len, 128);
  EXPECT_DOUBLE_EQ(back->rope_theta, 5000);
  EXPECT_DOUBLE_EQ(back->rms_eps, 1e-6);
  EXPECT_FALSE(back->tie_embeddings);
  EXPECT_EQ(back->pad_id, 0);
  EXPECT_EQ(back->dim_per_head(), 16);
}

TEST(ModelConfig, ClearErrors) {
  auto missing = model_config_from_json(R"({"vocab_size": 10, "hidden_size": 8})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("num_hidden_layers"), std::string::npos) << missing.message();

  auto gqa = model_config_from_json(R"({"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8})");
  ASSERT_FALSE(gqa.ok());
  EXPECT_NE(gqa.message().find("num_key_value_heads = 3"), std::string::npos) << gqa.message();

  auto scaling = model_config_from_json(R"({"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "intermediate_size": 8, "rope_scaling": {"type": "llama3"}})");
  ASSERT_FALSE(scaling.ok());
  EXPECT_NE(scaling.message().find("rope_scaling"), std::string::npos);

  auto type = model_config_from_json(R"({"vocab_size": "ten"})");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.message().find("vocab_size"), std::string::npos);

  EXPECT_FALSE(model_config_from_json("{not json").ok());
}

TEST(ModelConfig, Llama3EosListTakesFirst) {
  auto c = model_config_from_json(R"({"vocab_size": 200, "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "intermediate_size": 8, "eos_token_id": [128, 129]})");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->eos_id, 128);
}
