// The Llama-style decoder: see decoder.hpp.
#include "policy/model/decoder.hpp"

#include "policy/model/decode_step.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace leap::policy {
namespace {

namespace F = torch::nn::functional;

torch::nn::Linear linear(std::int64_t in, std::int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// HF rotate_half: [x1, x2] -> [-x2, x1] over the last dim split in halves.
torch::Tensor rotate_half(const torch::Tensor& x) {  // [..., Dh]
  const auto half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  return x * cos + rotate_half(x) * sin;  // x [B, H, T, Dh], cos/sin [B, 1, T, Dh]
}

} // namespace

// ---- rms_norm -----------------------------------------------------------------------------

rms_norm_impl::rms_norm_impl(std::int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor rms_norm_impl::forward(const torch::Tensor& x) {
  auto h = x.to(torch::kFloat);                                     // [..., D]
  h = h * torch::rsqrt(h.pow(2).mean(-1, /*keepdim=*/true) + eps_);
  return weight * h.to(x.scalar_type());
}

// ---- attention ----------------------------------------------------------------------------

attention_impl::attention_impl(const model_config& cfg)
    : n_heads_(cfg.n_heads), n_kv_(cfg.kv_heads()), head_dim_(cfg.dim_per_head()) {
  q_proj = register_module("q_proj", linear(cfg.d_model, n_heads_ * head_dim_, cfg.qkv_bias));
  k_proj = register_module("k_proj", linear(cfg.d_model, n_kv_ * head_dim_, cfg.qkv_bias));
  v_proj = register_module("v_proj", linear(cfg.d_model, n_kv_ * head_dim_, cfg.qkv_bias));
  o_proj = register_module("o_proj", linear(n_heads_ * head_dim_, cfg.d_model, cfg.o_bias));
}

torch::Tensor attention_impl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                      const torch::Tensor& allowed, torch::Tensor* k_buf, torch::Tensor* v_buf,
                                      std::int64_t cache_pos) {
  const auto B = x.size(0), T = x.size(1);
  auto q = q_proj(x).view({B, T, n_heads_, head_dim_}).transpose(1, 2);  // [B, H, T, Dh]
  auto k = k_proj(x).view({B, T, n_kv_, head_dim_}).transpose(1, 2);     // [B, KV, T, Dh]
  auto v = v_proj(x).view({B, T, n_kv_, head_dim_}).transpose(1, 2);     // [B, KV, T, Dh]
  q = apply_rope(q, cos, sin);
  k = apply_rope(k, cos, sin);
  torch::Tensor keys = k, values = v;  // [B, KV, S, Dh]
  if (k_buf != nullptr) {
    k_buf->narrow(2, cache_pos, T).copy_(k);
    v_buf->narrow(2, cache_pos, T).copy_(v);
    keys = k_buf->narrow(2, 0, cache_pos + T);
    values = v_buf->narrow(2, 0, cache_pos + T);
  }
  const auto S = keys.size(2);
  const auto rep = n_heads_ / n_kv_;
  // Grouped KV without copying K/V: query head h uses KV head h / rep (HF repeat_kv order), so
  // the rep query heads of one KV head are stacked along the row dimension.
  auto qg = q.reshape({B, n_kv_, rep * T, head_dim_});                                      // [B, KV, rep*T, Dh]
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  if (allowed.scalar_type() != torch::kBool) {
    // Training batches (right-padded, no cache): one GEMM adds the shared causal bias
    // [rep*T, S] and scales; no mask tensor to read or negate, no separate scale and fill
    // passes over the scores, forward or backward.
    auto scores = torch::baddbmm(allowed, qg.reshape({B * n_kv_, rep * T, head_dim_}),
                                 keys.reshape({B * n_kv_, S, head_dim_}).transpose(1, 2),
                                 /*beta=*/1.0, /*alpha=*/scale);                           // [B*KV, rep*T, S]
    auto probs = torch::softmax(scores, -1).view({B, n_kv_, rep * T, S});
    auto out = torch::matmul(probs, values);                                               // [B, KV, rep*T, Dh]
    out = out.view({B, n_heads_, T, head_dim_}).transpose(1, 2).reshape({B, T, n_heads_ * head_dim_});
    return o_proj(out);                                                                    // [B, T, D]
  }
  auto scores = torch::matmul(qg, keys.transpose(-1, -2)).to(torch::kFloat);               // [B, KV, rep*T, S]
  scores = scores.mul_(scale).view({B, n_kv_, rep, T, S});
  // A fully masked row (a pad query) becomes uniform instead of NaN; its output is ignored.
  scores = scores.masked_fill(allowed.logical_not(), std::numeric_limits<float>::lowest());
  auto probs = torch::softmax(scores, -1).to(values.scalar_type()).view({B, n_kv_, rep * T, S});
  auto out = torch::matmul(probs, values);                                                 // [B, KV, rep*T, Dh]
  out = out.view({B, n_heads_, T, head_dim_}).transpose(1, 2).reshape({B, T, n_heads_ * head_dim_});
  return o_proj(out);                                                                      // [B, T, D]
}

// ---- mlp, layer, stack --------------------------------------------------------------------

mlp_impl::mlp_impl(const model_config& cfg) {
  gate_proj = register_module("gate_proj", linear(cfg.d_model, cfg.d_ff, false));
  up_proj = register_module("up_proj", linear(cfg.d_model, cfg.d_ff, false));
  down_proj = register_module("down_proj", linear(cfg.d_ff, cfg.d_model, false));
}

torch::Tensor mlp_impl::forward(const torch::Tensor& x) {
  return down_proj(torch::silu(gate_proj(x)) * up_proj(x));
}

decoder_layer_impl::decoder_layer_impl(const model_config& cfg) {
  self_attn = register_module("self_attn", attention(cfg));
  mlp_ = register_module("mlp", mlp(cfg));
  input_layernorm = register_module("input_layernorm", rms_norm(cfg.d_model, cfg.rms_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", rms_norm(cfg.d_model, cfg.rms_eps));
}

decoder_stack_impl::decoder_stack_impl(const model_config& cfg) {
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(cfg.vocab_size, cfg.d_model));
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t l = 0; l < cfg.n_layers; ++l) layers->push_back(decoder_layer(cfg));
  norm = register_module("norm", rms_norm(cfg.d_model, cfg.rms_eps));
  // HF Llama: inv_freq[i] = theta^(-2i/Dh) (rope_scaling llama3 applied: rope_inv_freq);
  // emb = cat(freqs, freqs) over the last dim.
  auto inv_freq = torch::tensor(rope_inv_freq(cfg), torch::kDouble);
  auto pos = torch::arange(cfg.max_seq_len, torch::kDouble);
  auto freqs = torch::outer(pos, inv_freq);                 // [L, Dh/2]
  auto emb = torch::cat({freqs, freqs}, -1);                // [L, Dh]
  rope_cos = register_buffer("rope_cos", emb.cos().to(torch::kFloat));
  rope_sin = register_buffer("rope_sin", emb.sin().to(torch::kFloat));
}

// ---- decoder ------------------------------------------------------------------------------

decoder_impl::decoder_impl(const model_config& cfg) : cfg_(cfg) {
  auto v = validate(cfg);
  TORCH_CHECK(v.ok(), v.ok() ? std::string() : v.message());
  model = register_module("model", decoder_stack(cfg));
  if (!cfg.tie_embeddings) lm_head = register_module("lm_head", linear(cfg.d_model, cfg.vocab_size, false));
}

torch::Device decoder_impl::device() const { return model->embed_tokens->weight.device(); }

kv_cache decoder_impl::make_cache(std::int64_t batch, std::int64_t capacity) const {
  return kv_cache::make(cfg_.n_layers, batch, cfg_.kv_heads(), cfg_.dim_per_head(), capacity,
                        model->embed_tokens->weight.options().requires_grad(false));
}

void decoder_impl::init_weights(double std) {
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    const auto& name = p.key();
    auto& t = p.value();
    if (name.size() >= 11 && name.compare(name.size() - 11, 11, "norm.weight") == 0) {
      t.fill_(1.0);
    } else if (name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0) {
      t.zero_();
    } else {
      t.normal_(0.0, std);
    }
  }
}

std::shared_ptr<const decode_step> decoder_impl::fused_step() const {
  std::vector<std::pair<const void*, std::uint32_t>> key;
  for (const auto& p : parameters()) {
    if (p.is_inference()) return decode_step::make(*this);  // no version counter: no reuse
    key.emplace_back(p.data_ptr(), p._version());
  }
  // The selected decode path too (set_decode_path: a benchmark switching paths gets a new step).
  const auto path = selected_decode_path();
  key.emplace_back(nullptr, path.ok() ? static_cast<std::uint32_t>(*path) + 1 : 0);
  std::lock_guard<std::mutex> lock(fused_mutex_);
  if (!fused_ || key != fused_key_) {
    fused_ = decode_step::make(*this);
    fused_key_ = std::move(key);
  }
  return fused_;
}

torch::Tensor decoder_impl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) {
  return project(run(input_ids, attention_mask, nullptr));
}

torch::Tensor decoder_impl::hidden(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) {
  return run(input_ids, attention_mask, nullptr);
}

torch::Tensor decoder_impl::project(const torch::Tensor& h) {
  return lm_head ? lm_head(h) : F::linear(h, model->embed_tokens->weight);                  // [..., V]
}

torch::Tensor decoder_impl::forward_cached(const torch::Tensor& input_ids, kv_cache& cache,
                                           const torch::Tensor& attention_mask) {
  return project(run(input_ids, attention_mask, &cache));
}

torch::Tensor decoder_impl::forward_cached_last(const torch::Tensor& input_ids, kv_cache& cache,
                                                const torch::Tensor& attention_mask) {
  auto h = run(input_ids, attention_mask, &cache);                                          // [B, T, D]
  return project(h.select(1, h.size(1) - 1));                                               // [B, V]
}

torch::Tensor decoder_impl::run(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                kv_cache* cache) {
  TORCH_CHECK(input_ids.dim() == 2, "decoder: input_ids must be [B, T], got ", input_ids.sizes());
  const auto B = input_ids.size(0), T = input_ids.size(1);
  const auto dev = device();
  auto ids = input_ids.to(dev, torch::kLong);
  auto mask = attention_mask.defined() ? attention_mask.to(dev, torch::kBool)
                                        : torch::ones({B, T}, torch::TensorOptions().dtype(torch::kBool).device(dev));
  TORCH_CHECK(mask.sizes() == ids.sizes(), "decoder: attention_mask ", mask.sizes(), " must match input_ids ",
              ids.sizes());
  TORCH_CHECK(ids.numel() == 0 || (ids.min().item<std::int64_t>() >= 0 &&
                                   ids.max().item<std::int64_t>() < cfg_.vocab_size),
              "decoder: token id out of range [0, ", cfg_.vocab_size, ")");

  // Rotary position ids count real tokens only.
  auto pos = mask.to(torch::kLong).cumsum(1) - 1;  // [B, T]
  std::int64_t past = 0;
  torch::Tensor allowed;  // [B, 1, 1, T, S]
  if (cache != nullptr) {
    TORCH_CHECK(cache->batch() == B, "decoder: cache has ", cache->batch(), " rows, input has ", B);
    TORCH_CHECK(static_cast<std::int64_t>(cache->k.size()) == cfg_.n_layers, "decoder: cache has ",
                cache->k.size(), " layers, model has ", cfg_.n_layers);
    cache->reserve(T);
    past = cache->length;
    pos = pos + cache->next_pos.unsqueeze(1);
    cache->key_valid.narrow(1, past, T).copy_(mask);
    auto key_valid = cache->key_valid.narrow(1, 0, past + T);                             // [B, S]
    auto q_abs = torch::arange(past, past + T, ids.options()).unsqueeze(1);                // [T, 1]
    auto k_abs = torch::arange(0, past + T, ids.options()).unsqueeze(0);                   // [1, S]
    allowed = (k_abs <= q_abs).unsqueeze(0) & key_valid.unsqueeze(1);                     // [B, T, S]
  } else if (T > 0 && B > 0
             && !(mask.slice(1, 1, T) & mask.slice(1, 0, T - 1).logical_not()).any().item<bool>()) {
    // Right-padded or unpadded rows (training): a real query only sees real keys under the
    // causal mask alone, so one additive causal bias serves every row; pad queries see earlier
    // pads too, and their outputs are ignored. The rep query heads of a KV head are stacked
    // along the rows (attention_impl), hence the repeat.
    const auto rep = cfg_.n_heads / cfg_.kv_heads();
    auto bias = torch::full({T, T}, -std::numeric_limits<float>::infinity(),
                            torch::TensorOptions().dtype(torch::kFloat).device(dev))
                  .triu(1)
                  .repeat({rep, 1});                                                      // [rep*T, T]
    allowed = bias.to(model->embed_tokens->weight.scalar_type());
  } else {
    auto causal = torch::ones({T, T}, mask.options()).tril();                             // [T, T]
    allowed = causal.unsqueeze(0) & mask.unsqueeze(1);                                    // [B, T, S]
  }
  if (allowed.scalar_type() == torch::kBool)
    allowed = allowed.view({B, 1, 1, T, past + T});
  pos = pos.clamp_min(0);
  TORCH_CHECK(T == 0 || pos.max().item<std::int64_t>() < cfg_.max_seq_len, "decoder: position ",
              pos.max().item<std::int64_t>(), " exceeds max_position_embeddings = ", cfg_.max_seq_len);

  auto h = model->embed_tokens(ids);                                                        // [B, T, D]
  const auto dh = cfg_.dim_per_head();
  auto flat = pos.reshape({-1});
  auto cos = model->rope_cos.index_select(0, flat).view({B, 1, T, dh}).to(h.scalar_type());  // [B, 1, T, Dh]
  auto sin = model->rope_sin.index_select(0, flat).view({B, 1, T, dh}).to(h.scalar_type());
  for (std::int64_t l = 0; l < cfg_.n_layers; ++l) {
    auto& layer = model->layers->at<decoder_layer_impl>(static_cast<std::size_t>(l));
    torch::Tensor* kb = cache ? &cache->k[static_cast<std::size_t>(l)] : nullptr;
    torch::Tensor* vb = cache ? &cache->v[static_cast<std::size_t>(l)] : nullptr;
    h = h + layer.self_attn->forward(layer.input_layernorm(h), cos, sin, allowed, kb, vb, past);
    h = h + layer.mlp_(layer.post_attention_layernorm(h));
  }
  h = model->norm(h);
  if (cache != nullptr) {
    cache->length = past + T;
    cache->next_pos = cache->next_pos + mask.to(torch::kLong).sum(1);
  }
  return h;                                                                                 // [B, T, D]
}

result<decoder> make_decoder(const model_config& cfg) {
  if (auto v = validate(cfg); !v) return v.err();
  try {
    decoder m(cfg);
    m->init_weights();
    return m;
  } catch (const c10::Error& e) {
    return make_error(std::string("decoder: ") + e.what_without_backtrace());
  }
}

result<torch::Tensor> token_logprobs(decoder_impl& model, const torch::Tensor& ids,
                                     const torch::Tensor& attention_mask, double temperature) {
  if (!(temperature > 0)) return make_error("token_logprobs: temperature must be positive");
  if (ids.dim() != 2 || ids.size(1) < 2) return make_error("token_logprobs: ids must be [B, T] with T >= 2");
  try {
    auto logits = model.forward(ids, attention_mask).narrow(1, 0, ids.size(1) - 1).to(torch::kFloat);  // [B, T-1, V]
    if (temperature != 1.0) logits = logits / temperature;
    auto target = ids.narrow(1, 1, ids.size(1) - 1).to(logits.device(), torch::kLong);                  // [B, T-1]
    // log p = logit[target] - logsumexp(logits): avoids materialising the full log-softmax.
    auto lp = logits.gather(2, target.unsqueeze(2)).squeeze(2) - torch::logsumexp(logits, -1);         // [B, T-1]
    if (attention_mask.defined()) {
      auto m = attention_mask.narrow(1, 1, ids.size(1) - 1).to(lp.device(), torch::kBool);
      lp = lp.masked_fill(m.logical_not(), 0.0);
    }
    return lp;
  } catch (const c10::Error& e) {
    return make_error(std::string("token_logprobs: ") + e.what_without_backtrace());
  }
}

result<std::vector<float>> token_logprobs(decoder_impl& model, const std::vector<int>& ids, double temperature) {
  c10::InferenceMode guard;
  auto t = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kLong).unsqueeze(0);  // [1, T]
  auto lp = token_logprobs(model, t, {}, temperature);
  if (!lp) return lp.err();
  auto cpu = lp->squeeze(0).contiguous().cpu();
  return std::vector<float>(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
}

} // namespace leap::policy
