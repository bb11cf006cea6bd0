// The fused one-token decoding step: see decode_step.hpp.
#include "policy/decode_step.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// GCC 12 reports the deliberately undefined operand of _mm512_shuffle_f32x4 (avx512fintrin.h's
// _mm512_undefined_ps) as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace leap::policy {
namespace {

constexpr std::int64_t panel_width = 32;  // two AVX-512 vectors of float

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

// ---- small-M GEMM over packed panels --------------------------------------------------------
// One panel: y[0..MR, 0..cols) (+)= x[0..MR, 0..K) . panel[K, 32]. MR rows share every load of
// the panel, so a batch of up to 8 rows reads each weight once.

template <int MR>
__attribute__((target("avx512f"))) void panel_avx512(const float* x, std::int64_t ldx, std::int64_t k,
                                                     const float* panel, float* y, std::int64_t ldy,
                                                     std::int64_t cols, bool accumulate) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < k; ++i) {
    const __m512 w0 = _mm512_loadu_ps(panel + i * panel_width);
    const __m512 w1 = _mm512_loadu_ps(panel + i * panel_width + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(x[r * ldx + i]);
      c0[r] = _mm512_fmadd_ps(a, w0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, w1, c1[r]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* yr = y + r * ldy;
    if (accumulate) {
      c0[r] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, yr), c0[r]);
      c1[r] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, yr + 16), c1[r]);
    }
    _mm512_mask_storeu_ps(yr, m0, c0[r]);
    _mm512_mask_storeu_ps(yr + 16, m1, c1[r]);
  }
}

void panel_portable(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                    std::int64_t ldy, std::int64_t cols, bool accumulate) {
  for (int r = 0; r < mr; ++r) {
    float acc[panel_width] = {};
    for (std::int64_t i = 0; i < k; ++i) {
      const float a = x[r * ldx + i];
      const float* w = panel + i * panel_width;
      for (std::int64_t j = 0; j < panel_width; ++j) acc[j] += a * w[j];
    }
    float* yr = y + r * ldy;
    for (std::int64_t j = 0; j < cols; ++j) yr[j] = accumulate ? yr[j] + acc[j] : acc[j];
  }
}

void panel_rows(int mr, const float* x, std::int64_t ldx, std::int64_t k, const float* panel, float* y,
                std::int64_t ldy, std::int64_t cols, bool accumulate) {
  if (!cpu_has_avx512()) return panel_portable(mr, x, ldx, k, panel, y, ldy, cols, accumulate);
  switch (mr) {
    case 1: return panel_avx512<1>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 2: return panel_avx512<2>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 3: return panel_avx512<3>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 4: return panel_avx512<4>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 5: return panel_avx512<5>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 6: return panel_avx512<6>(x, ldx, k, panel, y, ldy, cols, accumulate);
    case 7: return panel_avx512<7>(x, ldx, k, panel, y, ldy, cols, accumulate);
    default: return panel_avx512<8>(x, ldx, k, panel, y, ldy, cols, accumulate);
  }
}

// ---- attention of one row and one KV head ------------------------------------------------
// q [rep, Dh] (the query heads sharing the KV head), keys/vals [S, Dh], valid [S]:
// scores [rep, S] (row stride ld) = q . key * scale, or lowest() for a pad key (as the decoder's
// masked_fill); then out [rep, Dh] = probs [rep, S] . vals.

// Sums of each of 16 vectors, in one vector (lane i = sum of v[i]): a transpose-and-add tree,
// about three instructions per vector instead of a full horizontal reduction each.
__attribute__((target("avx512f"), always_inline)) inline __m512 sum16(const __m512* v) {
  __m512 w[8], u[4], s[2];
  for (int i = 0; i < 8; ++i)  // quarters 0-1: sum of v[2i], 2-3: of v[2i+1]
    w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
  for (int i = 0; i < 4; ++i)  // quarter k: sum of v[4i + k]
    u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * i], w[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(w[2 * i], w[2 * i + 1], 0xDD));
  for (int i = 0; i < 2; ++i)  // quarter k, lanes 0-1: v[8i + k], lanes 2-3: v[8i + 4 + k]
    s[i] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0x44), _mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0xEE));
  // quarter k, lane m: v[4m + k]
  const __m512 z = _mm512_add_ps(_mm512_shuffle_ps(s[0], s[1], 0x88), _mm512_shuffle_ps(s[0], s[1], 0xDD));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, z);
}

// q . key for 16 keys at a time per query head (the block of keys stays in L1 across the heads).
template <int NC>
__attribute__((target("avx512f"))) void scores_avx512(const float* q, std::int64_t rep, const float* keys,
                                                      std::int64_t s, float scale, float* scores, std::int64_t ld) {
  constexpr int dh = NC * 16;
  const __m512 sv = _mm512_set1_ps(scale);
  std::int64_t t = 0;
  for (; t + 16 <= s; t += 16)
    for (std::int64_t j = 0; j < rep; ++j) {
      __m512 qv[NC];
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c) qv[c] = _mm512_loadu_ps(q + j * dh + c * 16);
      __m512 acc[16];
#pragma GCC unroll 16
      for (int u = 0; u < 16; ++u) {
        const float* k = keys + (t + u) * dh;
        acc[u] = _mm512_mul_ps(qv[0], _mm512_loadu_ps(k));
#pragma GCC unroll 4
        for (int c = 1; c < NC; ++c) acc[u] = _mm512_fmadd_ps(qv[c], _mm512_loadu_ps(k + c * 16), acc[u]);
      }
      _mm512_storeu_ps(scores + j * ld + t, _mm512_mul_ps(sum16(acc), sv));
    }
  for (; t < s; ++t)
    for (std::int64_t j = 0; j < rep; ++j) {
      const float* k = keys + t * dh;
      __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(q + j * dh), _mm512_loadu_ps(k));
      for (int c = 1; c < NC; ++c) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + j * dh + c * 16), _mm512_loadu_ps(k + c * 16), acc);
      scores[j * ld + t] = _mm512_reduce_add_ps(acc) * scale;
    }
}

// One query head's output, NC = Dh / 16 vectors wide, four keys at a time (independent sums).
template <int NC>
__attribute__((target("avx512f"))) void head_values_avx512(const float* p, const float* vals, std::int64_t s,
                                                           float* out) {
  constexpr int dh = NC * 16;
  __m512 acc[4][NC];
  for (auto& a : acc)
    for (auto& c : a) c = _mm512_setzero_ps();
  std::int64_t t = 0;
  for (; t + 4 <= s; t += 4)
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m512 pv = _mm512_set1_ps(p[t + u]);
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c)
        acc[u][c] = _mm512_fmadd_ps(pv, _mm512_loadu_ps(vals + (t + u) * dh + c * 16), acc[u][c]);
    }
  for (; t < s; ++t) {
    const __m512 pv = _mm512_set1_ps(p[t]);
    for (int c = 0; c < NC; ++c) acc[0][c] = _mm512_fmadd_ps(pv, _mm512_loadu_ps(vals + t * dh + c * 16), acc[0][c]);
  }
  for (int c = 0; c < NC; ++c)
    _mm512_storeu_ps(out + c * 16, _mm512_add_ps(_mm512_add_ps(acc[0][c], acc[1][c]), _mm512_add_ps(acc[2][c], acc[3][c])));
}

__attribute__((target("avx512f"))) void values_avx512(const float* probs, std::int64_t ld, std::int64_t rep,
                                                      const float* vals, std::int64_t s, std::int64_t dh, float* out) {
  for (std::int64_t j = 0; j < rep; ++j) {
    const float* p = probs + j * ld;
    float* o = out + j * dh;
    switch (dh / 16) {
      case 1: head_values_avx512<1>(p, vals, s, o); break;
      case 2: head_values_avx512<2>(p, vals, s, o); break;
      case 3: head_values_avx512<3>(p, vals, s, o); break;
      case 4: head_values_avx512<4>(p, vals, s, o); break;
      default:
        for (std::int64_t i = 0; i < dh; i += 16) {
          __m512 acc = _mm512_setzero_ps();
          for (std::int64_t t = 0; t < s; ++t)
            acc = _mm512_fmadd_ps(_mm512_set1_ps(p[t]), _mm512_loadu_ps(vals + t * dh + i), acc);
          _mm512_storeu_ps(o + i, acc);
        }
    }
  }
}

void group_scores(const float* q, std::int64_t rep, const float* keys, const bool* valid, bool all_valid,
                  std::int64_t s, std::int64_t dh, float scale, float* scores, std::int64_t ld) {
  const bool vec = cpu_has_avx512();
  if (vec && dh == 16) {
    scores_avx512<1>(q, rep, keys, s, scale, scores, ld);
  } else if (vec && dh == 32) {
    scores_avx512<2>(q, rep, keys, s, scale, scores, ld);
  } else if (vec && dh == 48) {
    scores_avx512<3>(q, rep, keys, s, scale, scores, ld);
  } else if (vec && dh == 64) {
    scores_avx512<4>(q, rep, keys, s, scale, scores, ld);
  } else {
    for (std::int64_t j = 0; j < rep; ++j)
      for (std::int64_t t = 0; t < s; ++t) {
        float acc = 0;
        for (std::int64_t i = 0; i < dh; ++i) acc += q[j * dh + i] * keys[t * dh + i];
        scores[j * ld + t] = acc * scale;
      }
  }
  if (all_valid) return;
  const float masked = std::numeric_limits<float>::lowest();
  for (std::int64_t j = 0; j < rep; ++j)
    for (std::int64_t t = 0; t < s; ++t)
      if (!valid[t]) scores[j * ld + t] = masked;
}

void group_values(const float* probs, std::int64_t ld, std::int64_t rep, const float* vals, std::int64_t s,
                  std::int64_t dh, float* out) {
  if (cpu_has_avx512() && dh % 16 == 0) return values_avx512(probs, ld, rep, vals, s, dh, out);
  for (std::int64_t j = 0; j < rep; ++j) {
    float* o = out + j * dh;
    std::fill(o, o + dh, 0.0f);
    for (std::int64_t t = 0; t < s; ++t)
      for (std::int64_t i = 0; i < dh; ++i) o[i] += probs[j * ld + t] * vals[t * dh + i];
  }
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
                 std::int64_t ldy, bool accumulate) {
  const float* base = w.panels.data_ptr<float>();
  const auto panels = w.panels.size(0);
  for (std::int64_t r0 = 0; r0 < m; r0 += 8) {
    const int mr = static_cast<int>(std::min<std::int64_t>(8, m - r0));
    for (std::int64_t p = 0; p < panels; ++p) {
      const auto col = p * panel_width;
      panel_rows(mr, x + r0 * ldx, ldx, w.k, base + p * w.k * panel_width, y + r0 * ldy + col, ldy,
                 std::min(panel_width, w.n - col), accumulate);
    }
  }
}

std::unique_ptr<decode_step> decode_step::make(const decoder_impl& model) {
  for (const auto& p : model.parameters()) {
    if (p.scalar_type() != torch::kFloat || !p.device().is_cpu()) return nullptr;
  }
  torch::NoGradGuard no_grad;
  std::unique_ptr<decode_step> s(new decode_step());
  s->cfg_ = model.config();
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

torch::Tensor decode_step::operator()(const torch::Tensor& tokens, kv_cache& cache) {
  const auto tok = tokens.to(torch::kCPU, torch::kLong).contiguous();
  const auto R = tok.numel();
  TORCH_CHECK(cache.batch() == R, "decode_step: cache has ", cache.batch(), " rows, input has ", R);
  TORCH_CHECK(static_cast<std::int64_t>(cache.k.size()) == cfg_.n_layers, "decode_step: cache has ",
              cache.k.size(), " layers, model has ", cfg_.n_layers);
  const auto D = cfg_.d_model, H = cfg_.n_heads, KV = cfg_.kv_heads(), Dh = cfg_.dim_per_head();
  const auto F = cfg_.d_ff, V = cfg_.vocab_size, rep = H / KV, NQKV = (H + 2 * KV) * Dh;

  cache.reserve(1);
  const auto past = cache.length, S = past + 1, cap = cache.capacity();
  auto f_opts = torch::TensorOptions().dtype(torch::kFloat);
  for (auto* bufs : {&cache.k, &cache.v})
    for (auto& t : *bufs) {
      TORCH_CHECK(t.scalar_type() == torch::kFloat && t.device().is_cpu(), "decode_step: cache must be float32 on the CPU");
      if (!t.is_contiguous()) t = t.contiguous();
    }
  if (!cache.key_valid.is_contiguous()) cache.key_valid = cache.key_valid.contiguous();
  if (!cache.next_pos.is_contiguous()) cache.next_pos = cache.next_pos.contiguous();
  cache.key_valid.narrow(1, past, 1).fill_(true);
  const bool* valid = cache.key_valid.data_ptr<bool>();                                     // [R, cap]
  const std::int64_t* next_pos = cache.next_pos.data_ptr<std::int64_t>();                   // [R]
  std::vector<char> all_valid(static_cast<std::size_t>(R));  // row has no pad among its keys
  for (std::int64_t r = 0; r < R; ++r)
    all_valid[static_cast<std::size_t>(r)] = std::all_of(valid + r * cap, valid + r * cap + past + 1, [](bool v) { return v; });

  // Rows' token embeddings and rotary tables.
  auto h = torch::empty({R, D}, f_opts);                                                    // [R, D]
  float* hp = h.data_ptr<float>();
  const std::int64_t* tp = tok.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < R; ++r) {
    TORCH_CHECK(tp[r] >= 0 && tp[r] < V, "decoder: token id out of range [0, ", V, ")");
    TORCH_CHECK(next_pos[r] < cfg_.max_seq_len, "decoder: position ", next_pos[r],
                " exceeds max_position_embeddings = ", cfg_.max_seq_len);
    std::memcpy(hp + r * D, embed_.data_ptr<float>() + tp[r] * D, sizeof(float) * static_cast<std::size_t>(D));
  }
  const float* cos_tab = rope_cos_.data_ptr<float>();
  const float* sin_tab = rope_sin_.data_ptr<float>();

  auto xn = torch::empty({R, D}, f_opts);                                                   // [R, D]
  auto qkv = torch::empty({R, NQKV}, f_opts);                                               // [R, (H+2KV) Dh]
  auto scores = torch::empty({R, H, S}, f_opts);                                            // [R, H, S]
  auto attn = torch::empty({R, H * Dh}, f_opts);                                            // [R, H Dh]
  auto gate_up = torch::empty({R, 2 * F}, f_opts);                                          // [R, 2F]
  float* xp = xn.data_ptr<float>();
  float* qp = qkv.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  float* ap = attn.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& L = layers_[l];
    float* kb = cache.k[l].data_ptr<float>();                                               // [R, KV, cap, Dh]
    float* vb = cache.v[l].data_ptr<float>();
    rms_norm_rows(hp, R, D, L.ln1.data_ptr<float>(), cfg_.rms_eps, xp);
    packed_gemm(xp, R, D, L.qkv, qp, NQKV, false);
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
      // Scores of every query head against the row's S keys; pads masked as the decoder does.
      for (std::int64_t g = 0; g < KV; ++g)
        group_scores(row + g * rep * Dh, rep, kb + (r * KV + g) * cap * Dh, valid + r * cap,
                     all_valid[static_cast<std::size_t>(r)] != 0, S, Dh, scale, sp + (r * H + g * rep) * S, S);
    }
    auto probs = torch::softmax(scores, -1);                                                // [R, H, S]
    const float* pp = probs.data_ptr<float>();
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t g = 0; g < KV; ++g)
        group_values(pp + (r * H + g * rep) * S, S, rep, vb + (r * KV + g) * cap * Dh, S, Dh,
                     ap + (r * H + g * rep) * Dh);
    packed_gemm(ap, R, H * Dh, L.o, hp, D, true);                                           // h += o_proj(attn)
    if (L.o_bias.defined()) {
      const float* b = L.o_bias.data_ptr<float>();
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t i = 0; i < D; ++i) hp[r * D + i] += b[i];
    }
    rms_norm_rows(hp, R, D, L.ln2.data_ptr<float>(), cfg_.rms_eps, xp);
    packed_gemm(xp, R, D, L.gate_up, gate_up.data_ptr<float>(), 2 * F, false);
    auto act = torch::silu(gate_up.narrow(1, 0, F)).mul_(gate_up.narrow(1, F, F)).contiguous();  // [R, F]
    packed_gemm(act.data_ptr<float>(), R, F, L.down, hp, D, true);                          // h += down_proj(act)
  }
  rms_norm_rows(hp, R, D, norm_.data_ptr<float>(), cfg_.rms_eps, xp);
  auto logits = torch::empty({R, V}, f_opts);                                               // [R, V]
  packed_gemm(xp, R, D, lm_head_, logits.data_ptr<float>(), V, false);
  cache.length = S;
  cache.next_pos = cache.next_pos + 1;
  return logits;
}

} // namespace leap::policy
