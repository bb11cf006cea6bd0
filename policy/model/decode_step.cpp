// The fused one-token decoding step: see decode_step.hpp. The float loops are in the
// decode_kernels tables (decode_kernels.hpp), one per decode_path, picked by make().
#include "policy/model/decode_step.hpp"

#include "policy/model/decode_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

namespace leap::policy {
namespace {

// ---- attention over the keys of one KV head -------------------------------------------------
// The nq queries q[i] [Dh] that share a KV head (the rep heads of one row, or of every row over a
// shared prompt prefix) against keys/vals [s, Dh] with validity valid [s]:
//   group_scores: out[i][t] = q[i] . key[t] * scale, lowest() for a pad key (the decoder's
//                 masked_fill), so a following softmax gives pads probability 0;
//   group_values: out[i] (+)= sum_t probs[i][t] * vals[t].
// The vector tables cover Dh = 16, 32, 48, 64, 128; other head sizes take the portable loops.

void group_scores(const decode_kernels& kern, const float* const* q, float* const* out, int nq, const float* keys,
                  const bool* valid, bool all_valid, std::int64_t s, std::int64_t dh, float scale) {
  if (!kern.scores(q, out, nq, keys, s, dh, scale)) portable_kernels.scores(q, out, nq, keys, s, dh, scale);
  if (all_valid) return;
  const float masked = std::numeric_limits<float>::lowest();
  for (int j = 0; j < nq; ++j)
    for (std::int64_t t = 0; t < s; ++t)
      if (!valid[t]) out[j][t] = masked;
}

void group_values(const decode_kernels& kern, const float* const* p, float* const* out, int nq, const float* vals,
                  std::int64_t s, std::int64_t dh, bool accumulate) {
  if (!kern.values(p, out, nq, vals, s, dh, accumulate)) portable_kernels.values(p, out, nq, vals, s, dh, accumulate);
}

// out[r] = weight * (x[r] / sqrt(mean(x[r]^2) + eps)), as rms_norm_impl in float32.
void rms_norm_rows(const float* x, std::int64_t rows, std::int64_t d, const float* weight, double eps, float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float ss = 0;
    for (std::int64_t i = 0; i < d; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + static_cast<float>(eps));
    float* o = out + r * d;
    for (std::int64_t i = 0; i < d; ++i) o[i] = weight[i] * (xr[i] * inv);
  }
}

// HF rotate_half RoPE of one head in place: x * cos + rotate_half(x) * sin.
void rope_head(float* x, const float* cos, const float* sin, std::int64_t dh) {
  const auto half = dh / 2;
  for (std::int64_t i = 0; i < half; ++i) {
    const float a = x[i], b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i + half] + a * sin[i + half];
  }
}

torch::Tensor f32(const torch::Tensor& t) { return t.detach().to(torch::kFloat).contiguous(); }

// packed_gemm with the loops of `kern`.
void gemm(const decode_kernels& kern, const float* x, std::int64_t m, std::int64_t ldx, const decode_step::packed& w,
          float* y, std::int64_t ldy, bool accumulate) {
  const float* base = w.panels.data_ptr<float>();
  const auto panels = w.panels.size(0);
  // Panel-major: a panel (K x 32 floats) stays in cache while every block of 8 rows uses it.
  for (std::int64_t p = 0; p < panels; ++p) {
    const auto col = p * panel_width;
    for (std::int64_t r0 = 0; r0 < m; r0 += 8) {
      const int mr = static_cast<int>(std::min<std::int64_t>(8, m - r0));
      kern.panel_rows(mr, x + r0 * ldx, ldx, w.k, base + p * w.k * panel_width, y + r0 * ldy + col, ldy,
                      std::min(panel_width, w.n - col), accumulate);
    }
  }
}

} // namespace

decode_step::packed pack_weight(const torch::Tensor& w) {
  TORCH_CHECK(w.dim() == 2, "pack_weight: expected [N, K], got ", w.sizes());
  const auto n = w.size(0), k = w.size(1);
  const auto np = (n + panel_width - 1) / panel_width * panel_width;
  auto wt = torch::zeros({k, np}, torch::kFloat);                                          // [K, Np]
  wt.narrow(1, 0, n).copy_(w.detach().t());
  decode_step::packed p;
  p.panels = wt.view({k, np / panel_width, panel_width}).permute({1, 0, 2}).contiguous();  // [Np/32, K, 32]
  p.n = n;
  p.k = k;
  return p;
}

void packed_gemm(const float* x, std::int64_t m, std::int64_t ldx, const decode_step::packed& w, float* y,
                 std::int64_t ldy, bool accumulate, decode_path path) {
  TORCH_CHECK(cpu_supports(path), "packed_gemm: this CPU cannot run the ", to_string(path), " loops");
  gemm(kernels_for(path), x, m, ldx, w, y, ldy, accumulate);
}

torch::Tensor decode_softmax(const torch::Tensor& x, decode_path path) {
  TORCH_CHECK(cpu_supports(path), "decode_softmax: this CPU cannot run the ", to_string(path), " loops");
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat, "decode_softmax: expected [rows, n] float32");
  auto y = x.contiguous().clone();                                                          // [rows, n]
  kernels_for(path).softmax_rows(y.data_ptr<float>(), y.size(0), y.size(1));
  return y;
}

torch::Tensor decode_swiglu(const torch::Tensor& gu, decode_path path) {
  TORCH_CHECK(cpu_supports(path), "decode_swiglu: this CPU cannot run the ", to_string(path), " loops");
  TORCH_CHECK(gu.dim() == 2 && gu.size(1) % 2 == 0 && gu.scalar_type() == torch::kFloat,
              "decode_swiglu: expected [rows, 2F] float32");
  const auto in = gu.contiguous();
  auto out = torch::empty({gu.size(0), gu.size(1) / 2}, torch::kFloat);                    // [rows, F]
  kernels_for(path).silu_mul(in.data_ptr<float>(), in.size(0), in.size(1) / 2, out.data_ptr<float>());
  return out;
}

std::unique_ptr<decode_step> decode_step::make(const decoder_impl& model) {
  std::int64_t count = 0;
  for (const auto& p : model.parameters()) {
    if (p.scalar_type() != torch::kFloat || !p.device().is_cpu()) return nullptr;
    count += p.numel();
  }
  if (count > max_parameters) return nullptr;
  const auto path = selected_decode_path();
  if (!path.ok()) {  // a forced path this CPU lacks, or an unknown one: refused, said once
    static std::once_flag said;
    std::call_once(said, [&] {
      std::fprintf(stderr, "leap: warning: %s; the fused decode step is off, decoding runs LibTorch's path\n",
                   path.message().c_str());
    });
    return nullptr;
  }
  if (*path == decode_path::libtorch) return nullptr;
  torch::NoGradGuard no_grad;
  auto s = std::make_unique<decode_step>(passkey<decode_step>());
  s->cfg_ = model.config();
  s->path_ = *path;
  s->kernels_ = &kernels_for(*path);
  const auto& stack = *model.model;
  for (std::size_t l = 0; l < stack.layers->size(); ++l) {
    const auto& src = stack.layers->at<decoder_layer_impl>(l);
    const auto& att = *src.self_attn;
    const auto& mlp = *src.mlp_;
    layer dst;
    dst.qkv = pack_weight(torch::cat({att.q_proj->weight, att.k_proj->weight, att.v_proj->weight}, 0));
    if (att.q_proj->bias.defined())
      dst.qkv_bias = f32(torch::cat({att.q_proj->bias, att.k_proj->bias, att.v_proj->bias}, 0));
    dst.o = pack_weight(att.o_proj->weight);
    if (att.o_proj->bias.defined()) dst.o_bias = f32(att.o_proj->bias);
    dst.gate_up = pack_weight(torch::cat({mlp.gate_proj->weight, mlp.up_proj->weight}, 0));
    dst.down = pack_weight(mlp.down_proj->weight);
    dst.ln1 = f32(src.input_layernorm->weight);
    dst.ln2 = f32(src.post_attention_layernorm->weight);
    s->layers_.push_back(std::move(dst));
  }
  s->embed_ = f32(stack.embed_tokens->weight);
  s->lm_head_ = pack_weight(model.lm_head ? model.lm_head->weight : stack.embed_tokens->weight);
  s->norm_ = f32(stack.norm->weight);
  s->rope_cos_ = f32(stack.rope_cos);
  s->rope_sin_ = f32(stack.rope_sin);
  return s;
}

namespace {

// A cache's K/V buffers as float32, contiguous, on the CPU (made so if they are not).
void check_cache(kv_cache& c, std::int64_t layers, const char* what) {
  TORCH_CHECK(static_cast<std::int64_t>(c.k.size()) == layers, "decode_step: ", what, " has ", c.k.size(),
              " layers, model has ", layers);
  for (auto* bufs : {&c.k, &c.v})
    for (auto& t : *bufs) {
      TORCH_CHECK(t.scalar_type() == torch::kFloat && t.device().is_cpu(), "decode_step: ", what,
                  " must be float32 on the CPU");
      if (!t.is_contiguous()) t = t.contiguous();
    }
  if (!c.key_valid.is_contiguous()) c.key_valid = c.key_valid.contiguous();
  if (!c.next_pos.is_contiguous()) c.next_pos = c.next_pos.contiguous();
}

bool all_true(const bool* v, std::int64_t n) { return std::all_of(v, v + n, [](bool b) { return b; }); }

} // namespace

// A layer after its attention: h += o_proj(attn) (+ bias); x = post-attention RMSNorm(h);
// h += down_proj(silu(gate(x)) * up(x)). attn [rows, H * Dh], h and x [rows, D], gate_up
// [rows, 2F] and act [rows, F] scratch.
void decode_step::finish_layer(const layer& L, const float* attn, std::int64_t rows, float* h, float* x,
                               float* gate_up, float* act) const {
  const std::int64_t D = cfg_.d_model, F = cfg_.d_ff;
  gemm(*kernels_, attn, rows, L.o.k, L.o, h, D, true);                                       // h += o_proj(attn)
  if (L.o_bias.defined()) {
    const float* b = L.o_bias.data_ptr<float>();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < D; ++i) h[r * D + i] += b[i];
  }
  rms_norm_rows(h, rows, D, L.ln2.data_ptr<float>(), cfg_.rms_eps, x);
  gemm(*kernels_, x, rows, D, L.gate_up, gate_up, 2 * F, false);
  kernels_->silu_mul(gate_up, rows, F, act);                                                // [rows, F]
  gemm(*kernels_, act, rows, F, L.down, h, D, true);                                         // h += down_proj(act)
}

torch::Tensor decode_step::operator()(const torch::Tensor& tokens, kv_cache& cache, kv_cache* prefix) const {
  const auto tok = tokens.to(torch::kCPU, torch::kLong).contiguous();
  const auto R = tok.numel();
  TORCH_CHECK(cache.batch() == R, "decode_step: cache has ", cache.batch(), " rows, input has ", R);
  const auto D = cfg_.d_model, H = cfg_.n_heads, KV = cfg_.kv_heads(), Dh = cfg_.dim_per_head();
  const auto F = cfg_.d_ff, V = cfg_.vocab_size, rep = H / KV, NQKV = (H + 2 * KV) * Dh;

  cache.reserve(1);
  check_cache(cache, cfg_.n_layers, "cache");
  std::int64_t P = 0, pcap = 0;  // shared prefix keys, prefix capacity
  const bool* pvalid = nullptr;
  bool prefix_all_valid = true;
  if (prefix != nullptr) {
    TORCH_CHECK(prefix->batch() == 1, "decode_step: a shared prefix has one row, not ", prefix->batch());
    check_cache(*prefix, cfg_.n_layers, "prefix");
    P = prefix->length;
    pcap = prefix->capacity();
    pvalid = prefix->key_valid.data_ptr<bool>();
    prefix_all_valid = all_true(pvalid, P);
  }
  const auto past = cache.length, own = past + 1, S = P + own, cap = cache.capacity();
  const auto f_opts = torch::TensorOptions().dtype(torch::kFloat);
  cache.key_valid.narrow(1, past, 1).fill_(true);
  const bool* valid = cache.key_valid.data_ptr<bool>();                                     // [R, cap]
  const std::int64_t* next_pos = cache.next_pos.data_ptr<std::int64_t>();                   // [R]
  std::vector<char> row_all_valid(static_cast<std::size_t>(R));  // no pad among the row's own keys
  for (std::int64_t r = 0; r < R; ++r) row_all_valid[static_cast<std::size_t>(r)] = all_true(valid + r * cap, own);

  // Rows' token embeddings.
  auto h = torch::empty({R, D}, f_opts);                                                    // [R, D]
  float* hp = h.data_ptr<float>();
  const std::int64_t* tp = tok.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < R; ++r) {
    TORCH_CHECK(tp[r] >= 0 && tp[r] < V, "decoder: token id out of range [0, ", V, ")");
    TORCH_CHECK(next_pos[r] >= 0 && next_pos[r] < cfg_.max_seq_len, "decoder: position ", next_pos[r],
                " exceeds max_position_embeddings = ", cfg_.max_seq_len);
    std::memcpy(hp + r * D, embed_.data_ptr<float>() + tp[r] * D, sizeof(float) * static_cast<std::size_t>(D));
  }
  const float* cos_tab = rope_cos_.data_ptr<float>();
  const float* sin_tab = rope_sin_.data_ptr<float>();

  auto xn = torch::empty({R, D}, f_opts);                                                   // [R, D]
  auto qkv = torch::empty({R, NQKV}, f_opts);                                               // [R, (H+2KV) Dh]
  auto scores = torch::empty({R, H, S}, f_opts);                                            // [R, H, S]: prefix keys, then own
  auto attn = torch::empty({R, H * Dh}, f_opts);                                            // [R, H Dh]
  auto gate_up = torch::empty({R, 3 * F}, f_opts);                                          // [R, 2F] gate_up, [R, F] act
  float* xp = xn.data_ptr<float>();
  float* qp = qkv.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  float* ap = attn.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
  // Per KV head: its R * rep queries, their score rows, probability rows and outputs.
  const auto nq = static_cast<std::size_t>(R * rep);
  std::vector<const float*> qs(nq), ps(nq);
  std::vector<float*> score_rows(nq), outs(nq);

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& L = layers_[l];
    float* kb = cache.k[l].data_ptr<float>();                                               // [R, KV, cap, Dh]
    float* vb = cache.v[l].data_ptr<float>();
    rms_norm_rows(hp, R, D, L.ln1.data_ptr<float>(), cfg_.rms_eps, xp);
    gemm(*kernels_, xp, R, D, L.qkv, qp, NQKV, false);
    for (std::int64_t r = 0; r < R; ++r) {
      float* row = qp + r * NQKV;
      if (L.qkv_bias.defined()) {
        const float* b = L.qkv_bias.data_ptr<float>();
        for (std::int64_t i = 0; i < NQKV; ++i) row[i] += b[i];
      }
      const float* c = cos_tab + next_pos[r] * Dh;
      const float* s = sin_tab + next_pos[r] * Dh;
      for (std::int64_t hd = 0; hd < H + KV; ++hd) rope_head(row + hd * Dh, c, s, Dh);
      for (std::int64_t g = 0; g < KV; ++g) {
        const auto at = ((r * KV + g) * cap + past) * Dh;
        std::memcpy(kb + at, row + (H + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
        std::memcpy(vb + at, row + (H + KV + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
      }
    }
    // Scores: every row's queries against the shared prefix at once, then each row's own keys;
    // pads masked as the decoder does.
    for (std::int64_t g = 0; g < KV; ++g) {
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t j = 0; j < rep; ++j) {
          const auto i = static_cast<std::size_t>(r * rep + j);
          qs[i] = qp + r * NQKV + (g * rep + j) * Dh;
          score_rows[i] = sp + (r * H + g * rep + j) * S;
        }
      if (P > 0)
        group_scores(*kernels_, qs.data(), score_rows.data(), static_cast<int>(nq), prefix->k[l].data_ptr<float>() + g * pcap * Dh,
                     pvalid, prefix_all_valid, P, Dh, scale);
      for (std::int64_t r = 0; r < R; ++r) {
        const auto i = static_cast<std::size_t>(r * rep);
        for (std::int64_t j = 0; j < rep; ++j) score_rows[i + static_cast<std::size_t>(j)] += P;
        group_scores(*kernels_, qs.data() + i, score_rows.data() + i, static_cast<int>(rep), kb + (r * KV + g) * cap * Dh,
                     valid + r * cap, row_all_valid[static_cast<std::size_t>(r)] != 0, own, Dh, scale);
      }
    }
    kernels_->softmax_rows(sp, R * H, S);                                                   // [R, H, S] probabilities
    const float* pp = sp;
    for (std::int64_t g = 0; g < KV; ++g) {
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t j = 0; j < rep; ++j) {
          const auto i = static_cast<std::size_t>(r * rep + j);
          ps[i] = pp + (r * H + g * rep + j) * S;
          outs[i] = ap + (r * H + g * rep + j) * Dh;
        }
      if (P > 0)
        group_values(*kernels_, ps.data(), outs.data(), static_cast<int>(nq), prefix->v[l].data_ptr<float>() + g * pcap * Dh, P,
                     Dh, false);
      for (std::int64_t r = 0; r < R; ++r) {
        const auto i = static_cast<std::size_t>(r * rep);
        for (std::int64_t j = 0; j < rep; ++j) ps[i + static_cast<std::size_t>(j)] += P;
        group_values(*kernels_, ps.data() + i, outs.data() + i, static_cast<int>(rep), vb + (r * KV + g) * cap * Dh, own, Dh,
                     P > 0);
      }
    }
    finish_layer(L, ap, R, hp, xp, gate_up.data_ptr<float>(), gate_up.data_ptr<float>() + R * 2 * F);
  }
  rms_norm_rows(hp, R, D, norm_.data_ptr<float>(), cfg_.rms_eps, xp);
  auto logits = torch::empty({R, V}, f_opts);                                               // [R, V]
  gemm(*kernels_, xp, R, D, lm_head_, logits.data_ptr<float>(), V, false);
  cache.length = own;
  cache.next_pos = cache.next_pos + 1;
  return logits;
}

torch::Tensor decode_step::prefill(const torch::Tensor& tokens, kv_cache& cache) const {
  const auto tok = tokens.to(torch::kCPU, torch::kLong).contiguous().view({-1});
  const auto T = tok.numel();
  TORCH_CHECK(T > 0, "decode_step: prefill of no tokens");
  TORCH_CHECK(cache.batch() == 1, "decode_step: prefill takes a one-row cache, not ", cache.batch());
  const auto D = cfg_.d_model, H = cfg_.n_heads, KV = cfg_.kv_heads(), Dh = cfg_.dim_per_head();
  const auto F = cfg_.d_ff, V = cfg_.vocab_size, rep = H / KV, NQKV = (H + 2 * KV) * Dh;

  cache.reserve(T);
  check_cache(cache, cfg_.n_layers, "cache");
  const auto past = cache.length, S = past + T, cap = cache.capacity();
  const auto pos0 = cache.next_pos.data_ptr<std::int64_t>()[0];
  TORCH_CHECK(pos0 >= 0 && pos0 + T <= cfg_.max_seq_len, "decoder: position ", pos0 + T - 1,
              " exceeds max_position_embeddings = ", cfg_.max_seq_len);
  cache.key_valid.narrow(1, past, T).fill_(true);
  const bool* valid = cache.key_valid.data_ptr<bool>();                                     // [1, cap]
  const bool past_all_valid = all_true(valid, past);
  const auto f_opts = torch::TensorOptions().dtype(torch::kFloat);

  auto h = torch::empty({T, D}, f_opts);                                                    // [T, D]
  float* hp = h.data_ptr<float>();
  const std::int64_t* tp = tok.data_ptr<std::int64_t>();
  for (std::int64_t t = 0; t < T; ++t) {
    TORCH_CHECK(tp[t] >= 0 && tp[t] < V, "decoder: token id out of range [0, ", V, ")");
    std::memcpy(hp + t * D, embed_.data_ptr<float>() + tp[t] * D, sizeof(float) * static_cast<std::size_t>(D));
  }
  auto xn = torch::empty({T, D}, f_opts);                                                   // [T, D]
  auto qkv = torch::empty({T, NQKV}, f_opts);                                               // [T, (H+2KV) Dh]
  auto scores = torch::empty({T, H, S}, f_opts);                                            // [T, H, S]
  auto attn = torch::empty({T, H * Dh}, f_opts);                                            // [T, H Dh]
  auto gate_up = torch::empty({T, 3 * F}, f_opts);                                          // [T, 2F] gate_up, [T, F] act
  float* xp = xn.data_ptr<float>();
  float* qp = qkv.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  float* ap = attn.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
  const float masked = std::numeric_limits<float>::lowest();
  std::vector<const float*> qs(static_cast<std::size_t>(rep)), ps(static_cast<std::size_t>(rep));
  std::vector<float*> score_rows(static_cast<std::size_t>(rep)), outs(static_cast<std::size_t>(rep));

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& L = layers_[l];
    float* kb = cache.k[l].data_ptr<float>();                                               // [1, KV, cap, Dh]
    float* vb = cache.v[l].data_ptr<float>();
    rms_norm_rows(hp, T, D, L.ln1.data_ptr<float>(), cfg_.rms_eps, xp);
    gemm(*kernels_, xp, T, D, L.qkv, qp, NQKV, false);
    for (std::int64_t t = 0; t < T; ++t) {
      float* row = qp + t * NQKV;
      if (L.qkv_bias.defined()) {
        const float* b = L.qkv_bias.data_ptr<float>();
        for (std::int64_t i = 0; i < NQKV; ++i) row[i] += b[i];
      }
      const float* c = rope_cos_.data_ptr<float>() + (pos0 + t) * Dh;
      const float* sn = rope_sin_.data_ptr<float>() + (pos0 + t) * Dh;
      for (std::int64_t hd = 0; hd < H + KV; ++hd) rope_head(row + hd * Dh, c, sn, Dh);
      for (std::int64_t g = 0; g < KV; ++g) {
        const auto at = (g * cap + past + t) * Dh;
        std::memcpy(kb + at, row + (H + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
        std::memcpy(vb + at, row + (H + KV + g) * Dh, sizeof(float) * static_cast<std::size_t>(Dh));
      }
    }
    // Causal: query t sees keys [0, past + t]; later keys get lowest() as in the decoder.
    for (std::int64_t t = 0; t < T; ++t) {
      const auto seen = past + t + 1;
      for (std::int64_t g = 0; g < KV; ++g) {
        for (std::int64_t j = 0; j < rep; ++j) {
          qs[static_cast<std::size_t>(j)] = qp + t * NQKV + (g * rep + j) * Dh;
          score_rows[static_cast<std::size_t>(j)] = sp + (t * H + g * rep + j) * S;
          std::fill(score_rows[static_cast<std::size_t>(j)] + seen, score_rows[static_cast<std::size_t>(j)] + S, masked);
        }
        group_scores(*kernels_, qs.data(), score_rows.data(), static_cast<int>(rep), kb + g * cap * Dh, valid,
                     past_all_valid, seen, Dh, scale);
      }
    }
    kernels_->softmax_rows(sp, T * H, S);                                                   // [T, H, S] probabilities
    const float* pp = sp;
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t g = 0; g < KV; ++g) {
        for (std::int64_t j = 0; j < rep; ++j) {
          ps[static_cast<std::size_t>(j)] = pp + (t * H + g * rep + j) * S;
          outs[static_cast<std::size_t>(j)] = ap + (t * H + g * rep + j) * Dh;
        }
        group_values(*kernels_, ps.data(), outs.data(), static_cast<int>(rep), vb + g * cap * Dh, past + t + 1, Dh, false);
      }
    finish_layer(L, ap, T, hp, xp, gate_up.data_ptr<float>(), gate_up.data_ptr<float>() + T * 2 * F);
  }
  rms_norm_rows(hp + (T - 1) * D, 1, D, norm_.data_ptr<float>(), cfg_.rms_eps, xp);
  auto logits = torch::empty({1, V}, f_opts);                                               // [1, V]
  gemm(*kernels_, xp, 1, D, lm_head_, logits.data_ptr<float>(), V, false);
  cache.length = S;
  cache.next_pos = cache.next_pos + T;
  return logits;
}

} // namespace leap::policy
