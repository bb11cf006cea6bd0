// decode_step: the sampler's one-token decoding step (every row appends one real token to its KV
// cache) for a float32 decoder on the CPU, as one pass of hand-written loops over weights packed
// once per weight version (decoder_impl::fused_step): fused QKV and gate/up projections, weights
// transposed into 32-column panels so that a small-M GEMM streams them once, RoPE, cache writes
// and attention in place, residual adds fused into the output projections. It exists because at
// decode shapes (M = a few rows) LibTorch's per-op dispatch and OpenBLAS's per-call weight packing
// and thread hand-offs cost several times the arithmetic (bench_sampling; docs/results.md).
//
// The loops come in three sets (decode_kernels.hpp), picked once per step by make() from
// decode_path.hpp: AVX-512, AVX2 + FMA, or portable C++, the best the CPU has unless
// LEAP_DECODE_PATH=avx512|avx2|portable|libtorch forces one (LEAP_DECODE_PORTABLE=1: portable).
//
// Same result as decoder_impl::forward_cached(tokens.view({R, 1}), cache).select(1, 0) up to
// float32 rounding of reordered sums (tests/policy/model/decode_golden_test.cpp holds it to the
// recorded outputs). Softmax and SiLU run as loops of the same table, with their own vector exp. Also here: the
// group prefill (prefill) and multinomial_one, the sampler's exact stand-in for multinomial.
//
// Threads: make() only reads the model. A decode_step is immutable once made, so several threads
// may run it at once (each with its own caches). It holds a copy of the weights: the decoder
// keeps one per weight version (decoder_impl::fused_step) and makes a new one after an update.
#pragma once

#include "common/passkey.hpp"
#include "policy/model/decode_path.hpp"
#include "policy/model/decoder.hpp"
#include "policy/model/kv_cache.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace leap::policy {

struct decode_kernels;  // decode_kernels.hpp, internal

class decode_step {
public:
  // Packs `model`'s weights for the loops of selected_decode_path(). Null when the fused step does
  // not apply: parameters not float32 on the CPU, or more than max_parameters of them (the packed
  // copy doubles the weights' memory, and at such sizes LibTorch's GEMMs are efficient anyway);
  // the path is libtorch; or the forced path is refused (the CPU lacks it: said once on stderr).
  // The caller then uses forward_cached.
  static std::unique_ptr<decode_step> make(const decoder_impl& model);
  static constexpr std::int64_t max_parameters = 64'000'000;  // 256 MB of float32

  // tokens [R] int64 on the CPU, one per cache row; `cache` (R rows, float32) grows by one
  // position. Returns the logits [R, V] float32 of the new tokens. Throws c10::Error (as the
  // decoder does) on a token outside the vocabulary or a position past max_position_embeddings.
  //
  // `prefix` (optional, one row): keys every row attends to before its own, e.g. a group's
  // prompt prefilled once. Rows then hold only their own tokens in `cache` (its next_pos starting
  // at the prefix's) and the prompt's K/V are read once per step for all rows instead of once per
  // row; the result equals decoding over the prefix expanded to every row (select_rows).
  // It is not modified (non-const only to make its buffers contiguous if they are not).
  torch::Tensor operator()(const torch::Tensor& tokens, kv_cache& cache, kv_cache* prefix = nullptr) const;

  // forward_cached_last for one unpadded row: tokens [T] int64 are appended to the one-row
  // `cache` (causal attention over its earlier keys and each other); returns the last token's
  // logits [1, V] float32. A group's prompt prefill, where LibTorch's GEMMs and attention ops
  // were slower than these loops and left OpenBLAS threads spinning.
  torch::Tensor prefill(const torch::Tensor& tokens, kv_cache& cache) const;

  struct packed {            // y[M, N] = x[M, K] . W^T: W [N, K] stored as panels [ceil(N/32), K, 32]
    torch::Tensor panels;
    std::int64_t n = 0, k = 0;
  };

  explicit decode_step(passkey<decode_step>) {} // the factory above only

  decode_path path() const { return path_; }  // the loops this step runs

private:
  struct layer {
    packed qkv, o, gate_up, down;   // qkv: [q; k; v] rows, gate_up: [gate; up] rows
    torch::Tensor qkv_bias, o_bias; // [(H + 2 KV) Dh], [D]; undefined when the config has none
    torch::Tensor ln1, ln2;         // [D] input_layernorm, post_attention_layernorm
  };
  // The layer's output projection and MLP, shared by operator() and prefill.
  void finish_layer(const layer& L, const float* attn, std::int64_t rows, float* h, float* x,
                    float* gate_up, float* act) const;

  model_config cfg_;
  decode_path path_ = decode_path::portable;
  const decode_kernels* kernels_ = nullptr;  // kernels_for(path_)
  std::vector<layer> layers_;
  packed lm_head_;                  // [V, D] (the embeddings when tied)
  torch::Tensor embed_, norm_;      // [V, D], [D]
  torch::Tensor rope_cos_, rope_sin_;  // [max_seq_len, Dh]
};

// torch::multinomial(probs, 1, /*replacement=*/false, gen) for probs [R, V] float32 on the CPU:
// the same indices [R, 1] and the same generator stream. LibTorch 1.13 draws q ~ Exp(1) for every
// entry in row-major order (-log(1 - u) in double, u from random64, rounded to float) and returns
// argmax(p / q) (first index on ties, NaN wins). This makes every draw too but takes the logarithm
// only where the bound p / u (q >= u) could still reach the best quotient, which skips almost all
// of them: at G = 8 the V logarithms per row were a tenth of a decode step. Errors as LibTorch's
// (c10::Error) on a negative or non-finite probability or an all-zero row. Other dtypes or devices:
// callers use torch::multinomial (decode_step_test compares the two draw by draw). Defined in
// multinomial_one.cpp, with the loops of selected_decode_path() (every path draws the same).
torch::Tensor multinomial_one(const torch::Tensor& probs, at::Generator& gen);

// y[M, N] (= or +=) x[M, K] (row stride ldx) . W^T, W packed by decode_step; y row stride ldy;
// with the loops of `path` (c10::Error when the CPU lacks them; libtorch: the portable ones).
// Exposed for the tests.
void packed_gemm(const float* x, std::int64_t m, std::int64_t ldx, const decode_step::packed& w, float* y,
                 std::int64_t ldy, bool accumulate, decode_path path);
decode_step::packed pack_weight(const torch::Tensor& w);  // w [N, K] float32
// The step's softmax over the last dimension of x [rows, n] and SwiGLU activation silu(gate) * up
// of gu [rows, 2F] (gate half first) -> [rows, F], with the loops of `path` (as packed_gemm).
// Exposed for the tests.
torch::Tensor decode_softmax(const torch::Tensor& x, decode_path path);
torch::Tensor decode_swiglu(const torch::Tensor& gu, decode_path path);

} // namespace leap::policy
