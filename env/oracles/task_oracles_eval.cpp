// The held-out eval split's oracles: one operator per category, never in the SFT corpus (see
// task_oracles.hpp). Each converts its inputs to float64, computes with stock LibTorch ops and
// rounds the result to float32 (or int32) at the end.
#include "env/oracles/task_oracle_io.hpp"

#include <cmath>

namespace leap::oracles::oracle_detail {

namespace {

void avgpool1d(oracle_io& io) {
  pool1d(io, [](const torch::Tensor& x, long long k, long long s) { return torch::avg_pool1d(x, {k}, {s}); });
}

void maxpool2d(oracle_io& io) {
  pool2d(io, [](const torch::Tensor& x, long long k, long long s) {
    return torch::max_pool2d(x, {k, k}, {s, s});
  });
}

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

} // namespace

void add_eval_split_oracles(oracle_table& table) {
  table.insert({
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
  });
}

} // namespace leap::oracles::oracle_detail
