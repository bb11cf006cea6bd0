// model_config: the dimensions of a Llama-style decoder, read from and written to a Hugging Face
// style `config.json` (HF key names, so a Llama/Qwen2 config loads through the same code).
// Plain value type without LibTorch; safe to use from any thread.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leap::policy {

// config.json's rope_scaling. Only rope_type "llama3" (Llama 3.1/3.2) is implemented; the
// parser refuses every other type by name. Applied to the inverse frequencies as HF transformers'
// _compute_llama3_parameters does (see rope_inv_freq).
struct rope_scaling_config {
  bool llama3 = false;                              // false: no scaling
  double factor = 8.0;                              // factor
  double low_freq_factor = 1.0;                     // low_freq_factor
  double high_freq_factor = 4.0;                    // high_freq_factor
  std::int64_t original_max_position_embeddings = 8192;  // original_max_position_embeddings
};

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
  std::int64_t eos_id = -1;         // eos_token_id (the first one if HF gives a list; -1: none)
  // The other ids of an eos_token_id list (Llama 3: <|end_of_text|>, <|eom_id|>, <|eot_id|>),
  // and those generation_config.json / tokenizer_config.json add (checkpoint.hpp): sampling
  // ends on any of them, like on eos_id.
  std::vector<std::int64_t> extra_eos_ids;
  std::int64_t pad_id = -1;         // pad_token_id (-1: none)
  rope_scaling_config rope_scaling;  // rope_scaling
  // architectures[0] ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"); empty:
  // derived when written (Qwen2 when only q/k/v have biases, else Llama).
  std::string architecture;

  // eos_id and extra_eos_ids, without duplicates; empty when eos_id is -1 and no extras.
  std::vector<std::int64_t> eos_ids() const;
  bool is_eos(std::int64_t id) const;

  std::int64_t kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  std::int64_t dim_per_head() const {
    return head_dim > 0 ? head_dim : (n_heads > 0 ? d_model / n_heads : 0);
  }
  // Number of trainable parameters the decoder built from this config has.
  std::int64_t parameter_count() const;
};

// Checks every dimension; the error names the offending field (HF key) and value.
result<void> validate(const model_config& cfg);

// The rotary inverse frequencies, dim_per_head() / 2 of them: theta^(-2i/Dh), then, with
// rope_scaling llama3, HF's three bands by wavelength w = 2 pi / f (with L = the original
// context length): w < L / high_freq_factor unchanged; w > L / low_freq_factor divided by
// factor; in between (1 - s) f / factor + s f with s = (L / w - low) / (high - low).
// Computed in double (HF computes in float32: values agree to float32 rounding).
std::vector<double> rope_inv_freq(const model_config& cfg);

// Parses a config.json text. Accepts model_type llama / qwen2 / mistral (or none) and
// architectures LlamaForCausalLM / Qwen2ForCausalLM / MistralForCausalLM (or none); rejects
// features this decoder does not implement (rope_scaling other than llama3, a sliding window
// shorter than max_position_embeddings, non-silu activations, mlp_bias) with an error naming
// them instead of silently computing something else. The result is validated.
result<model_config> model_config_from_json(std::string_view json_text);
// Serialises with HF key names (model_type "llama", architectures ["LlamaForCausalLM"]).
std::string model_config_to_json(const model_config& cfg);

result<model_config> load_model_config(const std::string& path);
// A checkpoint directory's config: <dir>/config.json, then the optional Hugging Face files
// (hf_files.hpp): generation_config.json's eos_token_id (one id or a list) and
// tokenizer_config.json's eos_token (resolved through its added_tokens_decoder) join the config's
// eos ids, all of them stop tokens (is_eos); their bos/pad ids fill the config's when it has
// none. An id at or above vocab_size is an error naming the file and key.
result<model_config> load_checkpoint_config(const std::string& dir);
result<void> save_model_config(const std::string& path, const model_config& cfg);  // atomic

} // namespace leap::policy
