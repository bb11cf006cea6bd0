// Independent LibTorch oracles for the bundled task suite: see task_oracles.hpp.
// Every oracle converts its inputs to float64, computes with stock LibTorch ops (no hand-written
// loops mirroring the reference kernels) and rounds the result to float32 (or int32) at the end.
#include "policy/task_oracles.hpp"

#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <utility>

namespace leap::policy {
namespace {

// Thrown inside this file only; run_oracle turns it into a leap::error.
struct oracle_failure {
  std::string message;
};

// Typed access to one oracle_case with size checks; failures throw oracle_failure.
class oracle_io {
public:
  oracle_io(std::string_view task, oracle_case& c) : task_(task), c_(c) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw oracle_failure{"oracle " + task_ + ": " + what};
  }

  // A size argument; must be present and positive.
  long long size(const std::string& name) const {
    auto it = c_.ints.find(name);
    if (it == c_.ints.end()) fail("missing int argument '" + name + "'");
    if (it->second <= 0) {
      fail("int argument '" + name + "' must be positive, got " + std::to_string(it->second));
    }
    return it->second;
  }

  // A float input buffer of exactly `numel` elements, as a 1-D float64 tensor.
  torch::Tensor input(const std::string& name, long long numel) const {
    const oracle_buffer& b = find_input(name, false, numel);
    auto t = torch::from_blob(const_cast<float*>(b.f32.data()), {static_cast<std::int64_t>(numel)},
                              torch::kFloat32);
    return t.to(torch::kFloat64);  // a copy: the caller's buffer is never aliased
  }

  // An int input buffer of exactly `numel` elements, as a 1-D int64 tensor.
  torch::Tensor input_int(const std::string& name, long long numel) const {
    const oracle_buffer& b = find_input(name, true, numel);
    auto t = torch::from_blob(const_cast<std::int32_t*>(b.i32.data()),
                              {static_cast<std::int64_t>(numel)}, torch::kInt32);
    return t.to(torch::kInt64);
  }

  // Writes `value` (any shape, numel elements) into the pre-sized output buffer `name`.
  void output(const std::string& name, const torch::Tensor& value, long long numel) {
    auto it = c_.outputs.find(name);
    if (it == c_.outputs.end()) fail("missing output buffer '" + name + "'");
    oracle_buffer& b = it->second;
    const auto have = static_cast<long long>(b.is_int ? b.i32.size() : b.f32.size());
    if (have != numel) {
      fail("output buffer '" + name + "' has " + std::to_string(have) + " elements, expected " +
           std::to_string(numel));
    }
    if (value.numel() != numel) {
      fail("computed " + std::to_string(value.numel()) + " elements for '" + name +
           "', expected " + std::to_string(numel));
    }
    if (b.is_int) {
      auto v = value.to(torch::kInt32).contiguous();
      std::memcpy(b.i32.data(), v.data_ptr<std::int32_t>(), numel * sizeof(std::int32_t));
    } else {
      auto v = value.to(torch::kFloat32).contiguous();
      std::memcpy(b.f32.data(), v.data_ptr<float>(), numel * sizeof(float));
    }
  }

private:
  const oracle_buffer& find_input(const std::string& name, bool want_int, long long numel) const {
    auto it = c_.inputs.find(name);
    if (it == c_.inputs.end()) fail("missing input buffer '" + name + "'");
    const oracle_buffer& b = it->second;
    if (b.is_int != want_int) {
      fail("input buffer '" + name + "' must hold " + (want_int ? "int32" : "float32") + " data");
    }
    const auto have = static_cast<long long>(want_int ? b.i32.size() : b.f32.size());
    if (have != numel) {
      fail("input buffer '" + name + "' has " + std::to_string(have) + " elements, expected " +
           std::to_string(numel));
    }
    return b;
  }

  std::string task_;
  oracle_case& c_;
};

using oracle_fn = std::function<void(oracle_io&)>;

// ---- level 1 ----

void vector_add(oracle_io& io) {
  const auto n = io.size("n");
  io.output("c", io.input("a", n) + io.input("b", n), n);
}

void elementwise_mul(oracle_io& io) {
  const auto n = io.size("n");
  io.output("c", io.input("a", n) * io.input("b", n), n);
}

void relu(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::relu(io.input("x", n)), n);
}

void leaky_relu(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::leaky_relu(io.input("x", n), 0.01), n);
}

void sigmoid(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::sigmoid(io.input("x", n)), n);
}

void gelu(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::gelu(io.input("x", n), "tanh"), n);
}

void saxpy(oracle_io& io) {
  const auto n = io.size("n");
  io.output("out", io.input("alpha", 1) * io.input("x", n) + io.input("y", n), n);
}

void transpose(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("y", io.input("x", rows * cols).view({rows, cols}).t().contiguous(), rows * cols);
}

// ---- level 2 ----

void softmax_rows(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("y", torch::softmax(x, 1), rows * cols);
}

void sum_reduce(oracle_io& io) {
  const auto n = io.size("n");
  io.output("out", io.input("x", n).sum(), 1);
}

void dot_product(oracle_io& io) {
  const auto n = io.size("n");
  io.output("out", torch::dot(io.input("a", n), io.input("b", n)), 1);
}

void layernorm_rows(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  auto y = torch::layer_norm(x, {cols}, io.input("gamma", cols), io.input("beta", cols), 1e-5);
  io.output("y", y, rows * cols);
}

void rmsnorm_rows(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  auto ms = x.pow(2).mean(1, /*keepdim=*/true);
  io.output("y", x * torch::rsqrt(ms + 1e-6) * io.input("weight", cols), rows * cols);
}

void prefix_scan(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::cumsum(io.input("x", n), 0), n);
}

void histogram(oracle_io& io) {
  const auto n = io.size("n");
  const auto bins = io.size("bins");
  auto x = io.input_int("x", n);
  auto kept = x.masked_select((x >= 0).logical_and(x < static_cast<std::int64_t>(bins)));
  auto counts = torch::bincount(kept, /*weights=*/{}, bins);
  io.output("hist", counts, bins);
}

void row_max(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("out", std::get<0>(x.max(1)), rows);
}

void matvec(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  auto a = io.input("A", m * n).view({m, n});
  io.output("y", torch::mv(a, io.input("x", n)), m);
}

// ---- level 3 ----

void matmul(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", m * k).view({m, k});
  auto b = io.input("B", k * n).view({k, n});
  io.output("C", torch::matmul(a, b), m * n);
}

void matmul_bias_relu(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", m * k).view({m, k});
  auto b = io.input("B", k * n).view({k, n});
  auto bias = io.input("bias", n);
  io.output("C", torch::relu(torch::addmm(bias, a, b)), m * n);
}

void conv1d(oracle_io& io) {
  const auto n = io.size("n");
  const auto k = io.size("k");
  if (k > n) io.fail("k must not exceed n");
  auto x = io.input("x", n).view({1, 1, n});
  auto w = io.input("w", k).view({1, 1, k});
  io.output("y", torch::conv1d(x, w), n - k + 1);
}

void conv2d(oracle_io& io) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto f = io.size("F");
  const auto r = io.size("R");
  if (r > h || r > w) io.fail("R must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  auto filt = io.input("w", f * c * r * r).view({f, c, r, r});
  io.output("y", torch::conv2d(x, filt), f * (h - r + 1) * (w - r + 1));
}

void attention_head(oracle_io& io) {
  const auto seq = io.size("seq");
  const auto d = io.size("d");
  auto q = io.input("q", seq * d).view({seq, d});
  auto k = io.input("k", seq * d).view({seq, d});
  auto v = io.input("v", seq * d).view({seq, d});
  auto p = torch::softmax(torch::matmul(q, k.t()) / std::sqrt(static_cast<double>(d)), 1);
  io.output("out", torch::matmul(p, v), seq * d);
}

// ---- pooling (train: maxpool1d, avgpool2d; eval: maxpool2d, avgpool1d) ----

// Pooling without padding over x (C x L or C x H x W): window k, stride s; the output is
// C x ((L - k) / s + 1) (per spatial dimension). `pool` is the LibTorch pooling op.
template <class Pool>
void pool1d(oracle_io& io, Pool pool) {
  const auto c = io.size("C");
  const auto l = io.size("L");
  const auto k = io.size("k");
  const auto s = io.size("s");
  if (k > l) io.fail("k must not exceed L");
  auto x = io.input("x", c * l).view({1, c, l});
  io.output("y", pool(x, k, s), c * ((l - k) / s + 1));
}

template <class Pool>
void pool2d(oracle_io& io, Pool pool) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto k = io.size("k");
  const auto s = io.size("s");
  if (k > h || k > w) io.fail("k must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  io.output("y", pool(x, k, s), c * ((h - k) / s + 1) * ((w - k) / s + 1));
}

void maxpool1d(oracle_io& io) {
  pool1d(io, [](const torch::Tensor& x, long long k, long long s) { return torch::max_pool1d(x, {k}, {s}); });
}

void avgpool1d(oracle_io& io) {
  pool1d(io, [](const torch::Tensor& x, long long k, long long s) { return torch::avg_pool1d(x, {k}, {s}); });
}

void maxpool2d(oracle_io& io) {
  pool2d(io, [](const torch::Tensor& x, long long k, long long s) {
    return torch::max_pool2d(x, {k, k}, {s, s});
  });
}

void avgpool2d(oracle_io& io) {
  pool2d(io, [](const torch::Tensor& x, long long k, long long s) {
    return torch::avg_pool2d(x, {k, k}, {s, s});
  });
}

// ---- held-out eval split: one operator per category, never in the SFT corpus ----

void elu(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::elu(io.input("x", n), /*alpha=*/1.0), n);
}

void mish(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::mish(io.input("x", n)), n);
}

void lerp(oracle_io& io) {
  const auto n = io.size("n");
  io.output("out", torch::lerp(io.input("a", n), io.input("b", n), io.input("w", n)), n);
}

void row_argmin(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("out", torch::argmin(x, 1), rows);
}

void col_mean(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("out", x.mean(0), cols);
}

void groupnorm(oracle_io& io) {
  const auto n = io.size("N");
  const auto c = io.size("C");
  const auto l = io.size("L");
  const auto g = io.size("G");
  if (c % g != 0) io.fail("G must divide C");
  auto x = io.input("x", n * c * l).view({n, c, l});
  auto y = torch::group_norm(x, g, io.input("gamma", c), io.input("beta", c), 1e-5);
  io.output("y", y, n * c * l);
}

void log_softmax_rows(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("y", torch::log_softmax(x, 1), rows * cols);
}

void depthwise_conv2d(oracle_io& io) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto r = io.size("R");
  if (r > h || r > w) io.fail("R must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  auto filt = io.input("w", c * r * r).view({c, 1, r, r});
  const std::int64_t one[] = {1, 1};
  const std::int64_t zero[] = {0, 0};
  auto y = torch::conv2d(x, filt, /*bias=*/torch::Tensor(), /*stride=*/at::IntArrayRef(one),
                         /*padding=*/at::IntArrayRef(zero), /*dilation=*/at::IntArrayRef(one),
                         /*groups=*/static_cast<std::int64_t>(c));
  io.output("y", y, c * (h - r + 1) * (w - r + 1));
}

void matmul_transposed_a(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", k * m).view({k, m});
  auto b = io.input("B", k * n).view({k, n});
  io.output("C", torch::matmul(a.t(), b), m * n);
}

void huber_loss(oracle_io& io) {
  const auto n = io.size("n");
  auto loss = torch::huber_loss(io.input("pred", n), io.input("target", n), at::Reduction::Mean,
                                /*delta=*/1.0);
  io.output("out", loss, 1);
}

void cumsum_rows(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  io.output("y", torch::cumsum(x, 1), rows * cols);
}

void gather(oracle_io& io) {
  const auto n_src = io.size("n_src");
  const auto n_out = io.size("n_out");
  auto idx = io.input_int("idx", n_out);
  if ((idx < 0).any().item<bool>() || (idx >= static_cast<std::int64_t>(n_src)).any().item<bool>()) {
    io.fail("idx holds a value outside [0, n_src)");
  }
  io.output("out", torch::index_select(io.input("x", n_src), 0, idx), n_out);
}

void causal_attention(oracle_io& io) {
  const auto seq = io.size("seq");
  const auto d = io.size("d");
  auto q = io.input("q", seq * d).view({seq, d});
  auto k = io.input("k", seq * d).view({seq, d});
  auto v = io.input("v", seq * d).view({seq, d});
  auto future = torch::ones({seq, seq}, torch::kBool).triu(1);  // j > i
  auto s = (torch::matmul(q, k.t()) / std::sqrt(static_cast<double>(d)))
               .masked_fill(future, -std::numeric_limits<double>::infinity());
  io.output("out", torch::matmul(torch::softmax(s, 1), v), seq * d);
}

void matmul_bias_gelu(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", m * k).view({m, k});
  auto b = io.input("B", k * n).view({k, n});
  auto bias = io.input("bias", n);
  io.output("C", torch::gelu(torch::addmm(bias, a, b), "tanh"), m * n);
}

void batched_transpose(oracle_io& io) {
  const auto batch = io.size("B");
  const auto m = io.size("M");
  const auto n = io.size("N");
  auto x = io.input("x", batch * m * n).view({batch, m, n});
  io.output("y", x.transpose(1, 2).contiguous(), batch * m * n);
}

// ---- end of held-out eval split ----

// ---- tasks-train2 block (train tasks, second block): pooling, strided / fused conv, matmul
// variants, indexing, attention scores, layernorm + scale ----

void conv2d_strided(oracle_io& io) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto f = io.size("F");
  const auto r = io.size("R");
  const auto s = io.size("s");
  if (r > h || r > w) io.fail("R must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  auto filt = io.input("w", f * c * r * r).view({f, c, r, r});
  io.output("y", torch::conv2d(x, filt, /*bias=*/{}, /*stride=*/{s, s}),
            f * ((h - r) / s + 1) * ((w - r) / s + 1));
}

void conv2d_relu(oracle_io& io) {
  const auto c = io.size("C");
  const auto h = io.size("H");
  const auto w = io.size("W");
  const auto f = io.size("F");
  const auto r = io.size("R");
  if (r > h || r > w) io.fail("R must not exceed H or W");
  auto x = io.input("x", c * h * w).view({1, c, h, w});
  auto filt = io.input("w", f * c * r * r).view({f, c, r, r});
  io.output("y", torch::relu(torch::conv2d(x, filt, io.input("bias", f))),
            f * (h - r + 1) * (w - r + 1));
}

void batched_matmul(oracle_io& io) {
  const auto b = io.size("batch");
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", b * m * k).view({b, m, k});
  auto bm = io.input("B", b * k * n).view({b, k, n});
  io.output("C", torch::bmm(a, bm), b * m * n);
}

void matmul_transposed_b(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", m * k).view({m, k});
  auto b = io.input("B", n * k).view({n, k});
  io.output("C", torch::matmul(a, b.t()), m * n);
}

void embedding(oracle_io& io) {
  const auto n_ids = io.size("n_ids");
  const auto vocab = io.size("vocab");
  const auto dim = io.size("dim");
  auto ids = io.input_int("ids", n_ids);
  if (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= vocab) {
    io.fail("ids must lie in [0, vocab)");
  }
  auto table = io.input("table", vocab * dim).view({vocab, dim});
  io.output("out", torch::embedding(table, ids), n_ids * dim);
}

void scatter_add(oracle_io& io) {
  const auto n = io.size("n");
  const auto n_out = io.size("n_out");
  auto idx = io.input_int("idx", n);
  if (idx.min().item<std::int64_t>() < 0 || idx.max().item<std::int64_t>() >= n_out) {
    io.fail("idx must lie in [0, n_out)");
  }
  auto out = torch::zeros({n_out}, torch::kFloat64).scatter_add_(0, idx, io.input("src", n));
  io.output("out", out, n_out);
}

void attention_scores(oracle_io& io) {
  const auto seq = io.size("seq");
  const auto d = io.size("d");
  auto q = io.input("q", seq * d).view({seq, d});
  auto k = io.input("k", seq * d).view({seq, d});
  io.output("S", torch::matmul(q, k.t()) / std::sqrt(static_cast<double>(d)), seq * seq);
}

void layernorm_affine(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  auto x = io.input("x", rows * cols).view({rows, cols});
  auto y = torch::layer_norm(x, {cols}, io.input("gamma", cols), io.input("beta", cols), 1e-5);
  io.output("y", y * io.input("scale", 1), rows * cols);
}

// ---- end of tasks-train2 block ----

// ---- train tasks, first block (tasks-train1) ----

void silu(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::silu(io.input("x", n)), n);
}

void softplus(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::softplus(io.input("x", n), /*beta=*/1, /*threshold=*/20), n);
}

void hardswish(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::hardswish(io.input("x", n)), n);
}

void clamp(oracle_io& io) {
  const auto n = io.size("n");
  io.output("y", torch::clamp(io.input("x", n), io.input("lo", 1), io.input("hi", 1)), n);
}

void row_sum(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("out", io.input("x", rows * cols).view({rows, cols}).sum(1), rows);
}

void col_sum(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("out", io.input("x", rows * cols).view({rows, cols}).sum(0), cols);
}

void row_mean(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("out", io.input("x", rows * cols).view({rows, cols}).mean(1), rows);
}

void row_argmax(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("out", torch::argmax(io.input("x", rows * cols).view({rows, cols}), 1), rows);
}

void col_max(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("out", std::get<0>(io.input("x", rows * cols).view({rows, cols}).max(0)), cols);
}

void softmax_cols(oracle_io& io) {
  const auto rows = io.size("rows");
  const auto cols = io.size("cols");
  io.output("y", torch::softmax(io.input("x", rows * cols).view({rows, cols}), 0), rows * cols);
}

void batchnorm(oracle_io& io) {
  const auto n = io.size("N");
  const auto c = io.size("C");
  auto x = io.input("x", n * c).view({n, c});
  auto y = torch::batch_norm(x, io.input("gamma", c), io.input("beta", c), /*running_mean=*/{},
                             /*running_var=*/{}, /*training=*/true, /*momentum=*/0.1, 1e-5,
                             /*cudnn_enabled=*/false);
  io.output("y", y, n * c);
}

void mse_loss(oracle_io& io) {
  const auto n = io.size("n");
  io.output("out", torch::mse_loss(io.input("pred", n), io.input("target", n)), 1);
}

void cross_entropy(oracle_io& io) {
  const auto n = io.size("N");
  const auto c = io.size("C");
  auto logits = io.input("logits", n * c).view({n, c});
  auto labels = io.input_int("labels", n);
  const auto classes = static_cast<std::int64_t>(c);
  if ((labels < 0).any().item().toBool() || (labels >= classes).any().item().toBool()) {
    io.fail("labels must lie in [0, C)");
  }
  io.output("out", torch::cross_entropy_loss(logits, labels), 1);
}

void exclusive_scan(oracle_io& io) {
  const auto n = io.size("n");
  auto x = io.input("x", n);
  io.output("y", torch::cumsum(x, 0) - x, n);
}

// ---- end of train tasks, first block (tasks-train1) ----

const std::map<std::string, oracle_fn, std::less<>>& registry() {
  static const std::map<std::string, oracle_fn, std::less<>> table = {
      {"vector_add", vector_add},
      {"elementwise_mul", elementwise_mul},
      {"relu", relu},
      {"leaky_relu", leaky_relu},
      {"sigmoid", sigmoid},
      {"gelu", gelu},
      {"saxpy", saxpy},
      {"transpose", transpose},
      {"softmax_rows", softmax_rows},
      {"sum_reduce", sum_reduce},
      {"dot_product", dot_product},
      {"layernorm_rows", layernorm_rows},
      {"rmsnorm_rows", rmsnorm_rows},
      {"prefix_scan", prefix_scan},
      {"histogram", histogram},
      {"row_max", row_max},
      {"matvec", matvec},
      {"matmul", matmul},
      {"matmul_bias_relu", matmul_bias_relu},
      {"conv1d", conv1d},
      {"conv2d", conv2d},
      {"attention_head", attention_head},
      // held-out eval split
      {"elu", elu},
      {"mish", mish},
      {"lerp", lerp},
      {"row_argmin", row_argmin},
      {"col_mean", col_mean},
      {"groupnorm", groupnorm},
      {"log_softmax_rows", log_softmax_rows},
      {"maxpool2d", maxpool2d},
      {"avgpool1d", avgpool1d},
      {"depthwise_conv2d", depthwise_conv2d},
      {"matmul_transposed_a", matmul_transposed_a},
      {"huber_loss", huber_loss},
      {"cumsum_rows", cumsum_rows},
      {"gather", gather},
      {"causal_attention", causal_attention},
      {"matmul_bias_gelu", matmul_bias_gelu},
      {"batched_transpose", batched_transpose},
      // ---- tasks-train2 block ----
      {"maxpool1d", maxpool1d},
      {"avgpool2d", avgpool2d},
      {"conv2d_strided", conv2d_strided},
      {"conv2d_relu", conv2d_relu},
      {"batched_matmul", batched_matmul},
      {"matmul_transposed_b", matmul_transposed_b},
      {"matmul_small_k", matmul}, // a GEMM whose K is small: the same oracle
      {"embedding", embedding},
      {"scatter_add", scatter_add},
      {"attention_scores", attention_scores},
      {"layernorm_affine", layernorm_affine},
      // ---- end of tasks-train2 block ----
      // ---- train tasks, first block (tasks-train1) ----
      {"silu", silu},
      {"softplus", softplus},
      {"hardswish", hardswish},
      {"clamp", clamp},
      {"row_sum", row_sum},
      {"col_sum", col_sum},
      {"row_mean", row_mean},
      {"row_argmax", row_argmax},
      {"col_max", col_max},
      {"softmax_cols", softmax_cols},
      {"batchnorm", batchnorm},
      {"mse_loss", mse_loss},
      {"cross_entropy", cross_entropy},
      {"exclusive_scan", exclusive_scan},
      // ---- end of train tasks, first block (tasks-train1) ----
  };
  return table;
}

} // namespace

bool has_oracle(std::string_view task_name) {
  return registry().find(task_name) != registry().end();
}

std::vector<std::string> oracle_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : registry()) names.push_back(name);
  return names;
}

leap::result<void> run_oracle(std::string_view task_name, oracle_case& c) {
  auto it = registry().find(task_name);
  if (it == registry().end()) {
    return leap::make_error("no oracle for task '" + std::string(task_name) + "'");
  }
  try {
    torch::NoGradGuard no_grad;
    oracle_io io(task_name, c);
    it->second(io);
    return {};
  } catch (const oracle_failure& e) {
    return leap::make_error(e.message);
  } catch (const c10::Error& e) {
    return leap::make_error("oracle " + std::string(task_name) +
                            ": LibTorch error: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return leap::make_error("oracle " + std::string(task_name) + ": " + e.what());
  } catch (...) {
    return leap::make_error("oracle " + std::string(task_name) + ": unknown exception");
  }
}

} // namespace leap::policy
