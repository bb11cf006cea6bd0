// Independent LibTorch oracles for the bundled task suite: see task_oracles.hpp. The original
// suite's oracles are here; the held-out eval split's are in task_oracles_eval.cpp, the added
// train tasks' in task_oracles_train.cpp.
// Every oracle converts its inputs to float64, computes with stock LibTorch ops (no hand-written
// loops mirroring the reference kernels) and rounds the result to float32 (or int32) at the end.
#include "env/oracles/task_oracles.hpp"

#include "env/oracles/task_oracle_io.hpp"

#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <utility>

namespace leap::oracles {

namespace oracle_detail {

void matmul(oracle_io& io) {
  const auto m = io.size("M");
  const auto n = io.size("N");
  const auto k = io.size("K");
  auto a = io.input("A", m * k).view({m, k});
  auto b = io.input("B", k * n).view({k, n});
  io.output("C", torch::matmul(a, b), m * n);
}

} // namespace oracle_detail

namespace {

using namespace oracle_detail;

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

// ---- level 3 (matmul is above, in oracle_detail: matmul_small_k uses it too) ----

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

const oracle_table& registry() {
  static const oracle_table table = [] {
    oracle_table t = {
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
    };
    add_eval_split_oracles(t);
    add_train_block_oracles(t);
    return t;
  }();
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

} // namespace leap::oracles
