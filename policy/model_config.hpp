// model_config: the dimensions of a Llama-style decoder, read from and written to a Hugging Face
// style `config.json` (HF key names, so a Llama/Qwen2 config loads through the same code).
// Plain value type without LibTorch; safe to use from any thread.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace leap::policy {

struct model_config {
  std::int64_t vocab_size = 0;      // vocab_size
  std::int64_t d_model = 0;         // hidden_size
  std::int64_t n_layers = 0;        // num_hidden_layers
  std::int64_t n_heads = 0;         // num_attention_heads
  std::int64_t n_kv_heads = 0;      // num_key_value_heads (< n_heads: grouped KV); 0 = n_heads
  std::int64_t head_dim = 0;        // head_dim; 0 = d_model / n_heads
  std::int64_t d_ff = 0;            // intermediate_size (SwiGLU hidden width)
  std::int64_t max_seq_len = 2048;  // max_position_embeddings (size of the RoPE table)
  double rope_theta = 10000.0;      // rope_theta
  double rms_eps = 1e-5;            // rms_norm_eps
  bool tie_embeddings = true;       // tie_word_embeddings (lm_head shares embed_tokens.weight)
  bool qkv_bias = false;            // bias on q/k/v_proj (Qwen2: true; Llama: attention_bias)
  bool o_bias = false;              // bias on o_proj (Llama: attention_bias)
  std::int64_t bos_id = -1;         // bos_token_id (-1: none)
  std::int64_t eos_id = -1;         // eos_token_id (first one if HF gives a list; -1: none)
  std::int64_t pad_id = -1;         // pad_token_id (-1: none)

  std::int64_t kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  std::int64_t dim_per_head() const {
    return head_dim > 0 ? head_dim : (n_heads > 0 ? d_model / n_heads : 0);
  }
  // Number of trainable parameters the decoder built from this config has.
  std::int64_t parameter_count() const;
};

// Checks every dimension; the error names the offending field (HF key) and value.
result<void> validate(const model_config& cfg);

// Parses a config.json text. Accepts model_type llama / qwen2 / mistral (or none); rejects
// features this decoder does not implement (rope_scaling, sliding windows, non-silu activations)
// with an error instead of silently computing something else. The result is validated.
result<model_config> model_config_from_json(std::string_view json_text);
// Serialises with HF key names (model_type "llama", architectures ["LlamaForCausalLM"]).
std::string model_config_to_json(const model_config& cfg);

result<model_config> load_model_config(const std::string& path);
result<void> save_model_config(const std::string& path, const model_config& cfg);  // atomic

} // namespace leap::policy
