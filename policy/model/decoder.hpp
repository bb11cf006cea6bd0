// decoder: the Llama-style causal language model (token embedding, RMSNorm, rotary position
// embeddings in HF "rotate_half" form, causal multi-head attention with optional grouped KV heads,
// SwiGLU MLP, final norm, tied or untied lm_head) as a torch::nn module. Parameter names are the
// Hugging Face Llama names (model.embed_tokens.weight, model.layers.0.self_attn.q_proj.weight,
// ..., model.norm.weight, lm_head.weight when untied), so HF checkpoints map 1:1.
//
// Threads: forward/forward_cached only read the parameters, so several threads may run them on
// one model at once, but never while another thread updates the weights (optimizer step, load).
#pragma once

#include "common/result.hpp"
#include "policy/model/kv_cache.hpp"
#include "policy/model/model_config.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace leap::policy {

class decode_step;

// y = weight * x / sqrt(mean(x^2) + eps), computed in float32 (as HF LlamaRMSNorm).
class rms_norm_impl : public torch::nn::Module {
public:
  rms_norm_impl(std::int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);  // [..., D] -> [..., D]
  torch::Tensor weight;                            // [D]
private:
  double eps_;
};
TORCH_MODULE_IMPL(rms_norm, rms_norm_impl);

class attention_impl : public torch::nn::Module {
public:
  explicit attention_impl(const model_config& cfg);
  // x [B, T, D]; cos/sin [B, 1, T, Dh]; allowed [B, 1, 1, T, S] bool (query t may see key s),
  // or (no cache, right-padded rows) a float additive bias [rep*T, S] shared by every row, with
  // rep = n_heads / n_kv_heads copies of the causal [T, S] bias (0 or -inf) stacked.
  // Without a cache S = T; with one, K/V are written at [cache_pos, cache_pos + T) of the layer's
  // buffers (k_buf/v_buf [B, n_kv, capacity, Dh]) and attention runs over S = cache_pos + T keys.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& allowed, torch::Tensor* k_buf, torch::Tensor* v_buf,
                        std::int64_t cache_pos);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
private:
  std::int64_t n_heads_, n_kv_, head_dim_;
};
TORCH_MODULE_IMPL(attention, attention_impl);

// down_proj(silu(gate_proj(x)) * up_proj(x)).
class mlp_impl : public torch::nn::Module {
public:
  explicit mlp_impl(const model_config& cfg);
  torch::Tensor forward(const torch::Tensor& x);  // [B, T, D] -> [B, T, D]
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE_IMPL(mlp, mlp_impl);

class decoder_layer_impl : public torch::nn::Module {
public:
  explicit decoder_layer_impl(const model_config& cfg);
  attention self_attn{nullptr};
  mlp mlp_{nullptr};  // registered as "mlp"
  rms_norm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE_IMPL(decoder_layer, decoder_layer_impl);

// The "model." part of the HF layout: embeddings, layers, final norm, RoPE tables.
class decoder_stack_impl : public torch::nn::Module {
public:
  explicit decoder_stack_impl(const model_config& cfg);
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  rms_norm norm{nullptr};
  torch::Tensor rope_cos, rope_sin;  // buffers [max_seq_len, Dh] float32 (not checkpointed)
};
TORCH_MODULE_IMPL(decoder_stack, decoder_stack_impl);

class decoder_impl : public torch::nn::Module {
public:
  // Throws c10::Error on an invalid config; boundary code uses make_decoder instead.
  explicit decoder_impl(const model_config& cfg);

  // Full-sequence forward (training, log-prob recomputation).
  // input_ids [B, T] int64; attention_mask [B, T] (1 = token, 0 = pad; undefined = all 1).
  // Padding may be on either side (or both): rotary position ids are counted over real tokens
  // only (cumsum(mask) - 1), so a left-padded row gives the same logits as the unpadded one.
  // Logits at pad positions are meaningless. Returns logits [B, T, V] in the parameter dtype.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask = {});
  // forward() in two halves: the final hidden states [B, T, D] (after the last norm), and the
  // vocabulary projection of any [..., D] -> [..., V]. SFT projects only the positions it trains
  // on: the projection and the softmax over the vocabulary are a large share of a small model's
  // work, and prompt positions do not need them.
  torch::Tensor hidden(const torch::Tensor& input_ids, const torch::Tensor& attention_mask = {});
  torch::Tensor project(const torch::Tensor& h);

  // Incremental forward: appends T new tokens to `cache` and returns their logits [B, T, V].
  // Prefill with the prompt (T = prompt length), then call with T = 1 per step. attention_mask
  // [B, T] marks pads among the new tokens (left-padded prompts); undefined = all real.
  torch::Tensor forward_cached(const torch::Tensor& input_ids, kv_cache& cache,
                               const torch::Tensor& attention_mask = {});
  // forward_cached that returns only the last position's logits [B, V], for sampling: the
  // vocabulary projection of a prefill's other positions is a large share of its work.
  torch::Tensor forward_cached_last(const torch::Tensor& input_ids, kv_cache& cache,
                                    const torch::Tensor& attention_mask = {});

  // An empty cache for `batch` rows with room for `capacity` positions (it grows if exceeded),
  // with K/V in the parameters' dtype and device.
  kv_cache make_cache(std::int64_t batch, std::int64_t capacity) const;

  // Normal(0, std) for linear and embedding weights, zero biases, ones for norms (HF init).
  void init_weights(double std = 0.02);

  // The fused decoding step for these weights (decode_step.hpp), packed on first use and reused
  // until a parameter changes (tracked by data pointer and version counter) or the selected
  // decode_path does; null when it does not apply (decode_step::make). Thread-safe.
  std::shared_ptr<const decode_step> fused_step() const;

  const model_config& config() const { return cfg_; }
  torch::Device device() const;

  decoder_stack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when cfg.tie_embeddings

private:
  // The final hidden states [B, T, D]; forward and forward_cached project them.
  torch::Tensor run(const torch::Tensor& input_ids, const torch::Tensor& attention_mask, kv_cache* cache);
  model_config cfg_;
  mutable std::mutex fused_mutex_;
  mutable std::shared_ptr<const decode_step> fused_;
  mutable std::vector<std::pair<const void*, std::uint32_t>> fused_key_;  // per parameter: data, version; last: the decode path
};
TORCH_MODULE_IMPL(decoder, decoder_impl);

// Validates `cfg` and builds a decoder with HF-style initial weights on the CPU (float32).
result<decoder> make_decoder(const model_config& cfg);

// Per-token log-probs of given tokens under a full forward, for the learner (keeps autograd).
// ids [B, T] int64, attention_mask [B, T] or undefined. Returns [B, T-1] float32 where entry t
// is log softmax(logits[t] / temperature)[ids[t+1]], i.e. the log-prob of token t+1 given the
// tokens before it. Entries whose target is a pad are 0. Same quantity the sampler returns as
// behaviour log-probs (see sampler.hpp), so an on-policy importance ratio is exactly 1.
result<torch::Tensor> token_logprobs(decoder_impl& model, const torch::Tensor& ids,
                                     const torch::Tensor& attention_mask = {}, double temperature = 1.0);
// One sequence (prompt + completion) without autograd; returns T-1 values (see above).
result<std::vector<float>> token_logprobs(decoder_impl& model, const std::vector<int>& ids,
                                          double temperature = 1.0);

} // namespace leap::policy
