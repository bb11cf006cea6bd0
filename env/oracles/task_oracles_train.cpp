// The oracles of the train tasks added to the original suite, in two blocks (tasks-train1:
// activations, reductions, norms, losses, a scan; tasks-train2: pooling, strided and fused
// convolutions, matmul variants, indexing, attention scores, an affine layernorm). Each converts
// its inputs to float64, computes with stock LibTorch ops and rounds the result to float32 (or
// int32) at the end.
#include "env/oracles/task_oracle_io.hpp"

#include <cmath>

namespace leap::oracles::oracle_detail {

namespace {

void maxpool1d(oracle_io& io) {
  pool1d(io, [](const torch::Tensor& x, long long k, long long s) { return torch::max_pool1d(x, {k}, {s}); });
}

void avgpool2d(oracle_io& io) {
  pool2d(io, [](const torch::Tensor& x, long long k, long long s) {
    return torch::avg_pool2d(x, {k, k}, {s, s});
  });
}

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

} // namespace

void add_train_block_oracles(oracle_table& table) {
  table.insert({
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
  });
}

} // namespace leap::oracles::oracle_detail
