// The LibTorch oracle of the generated task families: see gen_oracle.hpp. Every family is
// computed with whole-tensor LibTorch ops (reductions, cumulative ops, pooling, mm, permute,
// index_select, slice, cat, padding and conv2d) in float64;
// only the expression tree is walked.
#include "env/oracles/gen_oracle.hpp"

#include "env/taskgen/generator.hpp"

#include <torch/torch.h>

#include <cstring>

namespace leap::oracles {
namespace {

struct failure {
  std::string message;
};

[[noreturn]] void fail(const std::string& what) { throw failure{"generated oracle: " + what}; }

long long int_arg(const oracle_case& c, const std::string& n) {
  auto it = c.ints.find(n);
  if (it == c.ints.end() || it->second <= 0)
    fail("missing or non-positive int argument '" + n + "'");
  return it->second;
}

torch::Tensor input(const oracle_case& c, const std::string& n, long long numel) {
  auto it = c.inputs.find(n);
  if (it == c.inputs.end() || it->second.is_int || static_cast<long long>(it->second.f32.size()) != numel)
    fail("input '" + n + "' missing, not float32 or not " + std::to_string(numel) + " elements");
  return torch::from_blob(const_cast<float*>(it->second.f32.data()), {numel}, torch::kFloat32).to(torch::kFloat64);
}

// An int32 index input as int64 (what index_select takes), each index checked against [0, bound).
torch::Tensor index_input(const oracle_case& c, const std::string& n, long long numel, long long bound) {
  auto it = c.inputs.find(n);
  if (it == c.inputs.end() || !it->second.is_int || static_cast<long long>(it->second.i32.size()) != numel)
    fail("input '" + n + "' missing, not int32 or not " + std::to_string(numel) + " elements");
  for (auto v : it->second.i32)
    if (v < 0 || v >= bound)
      fail("index " + std::to_string(v) + " of '" + n + "' is outside [0, " + std::to_string(bound) + ")");
  return torch::from_blob(const_cast<std::int32_t*>(it->second.i32.data()), {numel}, torch::kInt32).to(torch::kLong);
}

void output(oracle_case& c, const std::string& n, const torch::Tensor& v) {
  auto it = c.outputs.find(n);
  if (it == c.outputs.end())
    fail("missing output buffer '" + n + "'");
  auto& b = it->second;
  const auto have = static_cast<long long>(b.is_int ? b.i32.size() : b.f32.size());
  if (v.numel() != have)
    fail("computed " + std::to_string(v.numel()) + " elements for '" + n + "', the buffer has " + std::to_string(have));
  if (b.is_int) {
    auto t = v.to(torch::kInt32).contiguous();
    std::memcpy(b.i32.data(), t.data_ptr<std::int32_t>(), static_cast<std::size_t>(have) * 4);
  } else {
    auto t = v.to(torch::kFloat32).contiguous();
    std::memcpy(b.f32.data(), t.data_ptr<float>(), static_cast<std::size_t>(have) * 4);
  }
}

using env_t = std::map<std::string, torch::Tensor>;

torch::Tensor scalar(double v) { return torch::scalar_tensor(v, torch::kFloat64); }

torch::Tensor eval(const taskgen::expr& e, const env_t& env) {
  using taskgen::expr;
  if (e.kind == expr::constant)
    return scalar(e.value);
  if (e.kind == expr::var) {
    auto it = env.find(e.name);
    if (it == env.end())
      fail("unbound variable '" + e.name + "'");
    return it->second;
  }
  std::vector<torch::Tensor> k;
  for (auto& kid : e.kids)
    k.push_back(eval(kid, env));
  const auto& fn = e.name;
  if (fn == "abs") return torch::abs(k[0]);
  if (fn == "exp") return torch::exp(k[0]);
  if (fn == "tanh") return torch::tanh(k[0]);
  if (fn == "sigmoid") return torch::sigmoid(k[0]);
  if (fn == "relu") return torch::relu(k[0]);
  if (fn == "softplus") return torch::softplus(k[0], 1.0, 20.0);
  if (fn == "sin") return torch::sin(k[0]);
  if (fn == "cos") return torch::cos(k[0]);
  if (fn == "square") return torch::square(k[0]);
  if (fn == "silu") return torch::silu(k[0]);
  if (fn == "log1p_abs") return torch::log1p(torch::abs(k[0]));
  if (fn == "add") return k[0] + k[1];
  if (fn == "sub") return k[0] - k[1];
  if (fn == "mul") return k[0] * k[1];
  if (fn == "div") return k[0] / k[1];
  if (fn == "max") return torch::maximum(k[0], k[1]);
  if (fn == "min") return torch::minimum(k[0], k[1]);
  if (fn == "select") return torch::where(k[0] > k[1], k[2], k[3]);
  if (fn == "clamp") return torch::clamp(k[0], e.kids[1].value, e.kids[2].value);
  fail("unknown operator '" + fn + "'");
}

// The reduction `red` of m along dim (keepdim false).
torch::Tensor reduce(const std::string& red, const torch::Tensor& m, int64_t dim) {
  if (red == "sum") return m.sum(dim);
  if (red == "mean") return m.mean(dim);
  if (red == "max") return m.amax(dim);
  if (red == "min") return m.amin(dim);
  if (red == "argmax") return m.argmax(dim);
  if (red == "argmin") return m.argmin(dim);
  if (red == "l1") return torch::linalg_vector_norm(m, 1, dim);
  if (red == "l2") return torch::linalg_vector_norm(m, 2, dim);
  if (red == "linf") return m.abs().amax(dim);
  if (red == "lse") return torch::logsumexp(m, dim);
  fail("unknown reduction '" + red + "'");
}

void run(const taskgen::gen_op& op, oracle_case& c) {
  using taskgen::family;
  switch (op.fam) {
    case family::ew: {
      auto n = int_arg(c, "n");
      env_t env;
      const char* names[] = {"a", "b", "c"};
      for (int i = 0; i < op.inputs; ++i)
        env[names[i]] = input(c, names[i], n);
      // broadcast a constant body (never generated, but harmless) to n values
      output(c, "out", eval(op.body, env).expand({n}));
      return;
    }
    case family::red: {
      auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
      auto x = input(c, "x", R * C).view({R, C});
      output(c, "out", reduce(op.reduce, eval(op.map, {{"v", x}}), op.axis == "row" ? 1 : 0));
      return;
    }
    case family::bcast: {
      auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
      auto x = input(c, "x", R * C).view({R, C});
      torch::Tensor u;
      if (op.source == "colvec") u = input(c, "v", C).view({1, C});
      else if (op.source == "rowvec") u = input(c, "v", R).view({R, 1});
      else if (op.source == "rowred") u = reduce(op.reduce, eval(op.map, {{"v", x}}), 1).view({R, 1});
      else u = reduce(op.reduce, eval(op.map, {{"v", x}}), 0).view({1, C});
      output(c, "y", eval(op.body, {{"x", x}, {"u", u}}).expand({R, C}));
      return;
    }
    case family::softmax: {
      auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
      bool row = op.axis == "row";
      auto z = input(c, "x", R * C).view({R, C}) * op.scale;
      if (op.bias)
        z = z + (row ? input(c, "b", C).view({1, C}) : input(c, "b", R).view({R, 1}));
      const int64_t dim = row ? 1 : 0;
      output(c, "y", op.variant == "log" ? torch::log_softmax(z, dim) : torch::softmax(z, dim));
      return;
    }
    case family::scan: {
      auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
      const int64_t dim = op.axis == "row" ? 1 : 0;
      auto m = eval(op.map, {{"v", input(c, "x", R * C).view({R, C})}});
      if (op.reverse)
        m = m.flip(dim);
      torch::Tensor y;
      if (op.reduce == "sum") y = op.exclusive ? m.cumsum(dim) - m : m.cumsum(dim);
      else if (op.reduce == "max") y = std::get<0>(m.cummax(dim));
      else y = std::get<0>(m.cummin(dim));
      output(c, "y", op.reverse ? y.flip(dim) : y);
      return;
    }
    case family::pool: {
      auto C = int_arg(c, "C"), L = int_arg(c, "L");
      auto x = input(c, "x", C * L).view({1, C, L});
      const int64_t k = op.window, s = op.stride;
      torch::Tensor y;
      if (op.reduce == "max") y = torch::max_pool1d(x, {k}, {s});
      else if (op.reduce == "min") y = -torch::max_pool1d(-x, {k}, {s});
      else if (op.reduce == "avg") y = torch::avg_pool1d(x, {k}, {s});
      else if (op.reduce == "sum") y = torch::avg_pool1d(x, {k}, {s}) * static_cast<double>(k);
      else if (op.reduce == "l2") y = torch::sqrt(torch::avg_pool1d(x * x, {k}, {s}) * static_cast<double>(k));
      else y = torch::max_pool1d(x.abs(), {k}, {s});
      output(c, "y", y);
      return;
    }
    case family::matmul: {
      auto M = int_arg(c, "M"), N = int_arg(c, "N"), K = int_arg(c, "K");
      auto acc = torch::mm(input(c, "A", M * K).view({M, K}), input(c, "B", K * N).view({K, N}));
      output(c, "out", eval(op.body, {{"acc", acc}, {"bias", input(c, "bias", N).view({1, N})}}).expand({M, N}));
      return;
    }
    case family::layout: {
      auto map = [&](const torch::Tensor& v) { return eval(op.map, {{"v", v}}).expand(v.sizes()); };
      if (op.variant == "transpose") {
        auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
        output(c, "y", map(input(c, "x", R * C).view({R, C}).t()));
      } else if (op.variant == "permute") {
        auto A = int_arg(c, "A"), B = int_arg(c, "B"), C = int_arg(c, "C");
        if (op.perm.size() != 3)
          fail("permutation '" + op.perm + "' is not three axes");
        std::vector<int64_t> dims;
        for (char ch : op.perm)
          dims.push_back(ch - '0');
        output(c, "y", map(input(c, "x", A * B * C).view({A, B, C}).permute(dims)));
      } else if (op.variant == "gather_rows" || op.variant == "gather_cols") {
        auto R = int_arg(c, "rows"), C = int_arg(c, "cols"), n = int_arg(c, "n");
        const bool rows = op.variant == "gather_rows";
        auto x = input(c, "x", R * C).view({R, C});
        output(c, "out", map(x.index_select(rows ? 0 : 1, index_input(c, "idx", n, rows ? R : C))));
      } else if (op.variant == "slice") {
        auto R = int_arg(c, "rows"), C = int_arg(c, "cols");
        auto x = input(c, "x", R * C).view({R, C});
        output(c, "y", map(x.slice(0, op.start0, R, op.step0).slice(1, op.start1, C, op.step1)));
      } else if (op.variant == "concat") {
        if (op.axis == "row") {
          auto ra = int_arg(c, "ra"), rb = int_arg(c, "rb"), C = int_arg(c, "cols");
          output(c, "y", map(torch::cat({input(c, "a", ra * C).view({ra, C}), input(c, "b", rb * C).view({rb, C})}, 0)));
        } else {
          auto R = int_arg(c, "rows"), ca = int_arg(c, "ca"), cb = int_arg(c, "cb");
          output(c, "y", map(torch::cat({input(c, "a", R * ca).view({R, ca}), input(c, "b", R * cb).view({R, cb})}, 1)));
        }
      } else {
        fail("unknown layout variant '" + op.variant + "'");
      }
      return;
    }
    case family::stencil: {
      auto C = int_arg(c, "C"), H = int_arg(c, "H"), W = int_arg(c, "W");
      auto x = input(c, "x", C * H * W).view({C, 1, H, W});
      if (op.variant == "pool2d") {
        const int64_t k = op.window, s = op.stride;
        const double kk = static_cast<double>(k * k);
        torch::Tensor y;
        if (op.reduce == "max") y = torch::max_pool2d(x, {k, k}, {s, s});
        else if (op.reduce == "min") y = -torch::max_pool2d(-x, {k, k}, {s, s});
        else if (op.reduce == "avg") y = torch::avg_pool2d(x, {k, k}, {s, s});
        else if (op.reduce == "sum") y = torch::avg_pool2d(x, {k, k}, {s, s}) * kk;
        else if (op.reduce == "l2") y = torch::sqrt(torch::avg_pool2d(x * x, {k, k}, {s, s}) * kk);
        else y = torch::max_pool2d(x.abs(), {k, k}, {s, s});
        output(c, "y", y);
        return;
      }
      auto w = taskgen::stencil_weights(op.variant);
      if (w.size() != 9)
        fail("unknown stencil '" + op.variant + "'");
      auto weight = torch::tensor(w, torch::kFloat64).view({1, 1, 3, 3});
      torch::Tensor padded;
      if (op.border == "zero") padded = torch::constant_pad_nd(x, {1, 1, 1, 1}, 0);
      else if (op.border == "clamp") padded = torch::replication_pad2d(x, {1, 1, 1, 1});
      else if (op.border == "mirror") padded = torch::reflection_pad2d(x, {1, 1, 1, 1});
      else if (op.border == "valid") padded = x;
      else fail("unknown border rule '" + op.border + "'");
      // conv2d is a cross-correlation: no filter flip, as the stencil is stated.
      auto v = torch::conv2d(padded, weight);
      output(c, "y", eval(op.map, {{"v", v}}).expand(v.sizes()));
      return;
    }
  }
}

// The case's buffers under the operator's own names (`to_own`) or back under the names the task
// shows (op.names: own name -> shown name). Renamed all at once: a shown name may be another
// buffer's own name (x, s, b for a, b, c).
template <class V>
void rename(std::map<std::string, V>& m, const std::map<std::string, std::string>& names, bool to_own) {
  std::map<std::string, V> out;
  for (auto& [name, v] : m) {
    std::string key = name;
    for (const auto& [own, shown] : names)
      if ((to_own ? shown : own) == name)
        key = to_own ? own : shown;
    out.emplace(std::move(key), std::move(v));
  }
  m = std::move(out);
}

void rename_case(oracle_case& c, const std::map<std::string, std::string>& names, bool to_own) {
  rename(c.inputs, names, to_own);
  rename(c.outputs, names, to_own);
  rename(c.ints, names, to_own);
}

} // namespace

leap::result<void> run_generated_oracle(const taskgen::gen_op& op, oracle_case& c) {
  struct renamed { // restores the task's names however run() ends
    oracle_case& c;
    const std::map<std::string, std::string>& names;
    renamed(oracle_case& cc, const std::map<std::string, std::string>& n) : c(cc), names(n) { rename_case(c, names, true); }
    ~renamed() { rename_case(c, names, false); }
  } guard(c, op.names);
  try {
    torch::NoGradGuard no_grad;
    run(op, c);
    return {};
  } catch (const failure& e) {
    return leap::make_error(e.message);
  } catch (const c10::Error& e) {
    return leap::make_error(std::string("generated oracle: LibTorch error: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return leap::make_error(std::string("generated oracle: ") + e.what());
  }
}

bool has_any_oracle(std::string_view task_name, std::string_view reference_source) {
  return taskgen::op_of_reference(reference_source).ok() || has_oracle(task_name);
}

leap::result<void> run_any_oracle(std::string_view task_name, std::string_view reference_source,
                                  oracle_case& c) {
  if (auto op = taskgen::op_of_reference(reference_source); op)
    return run_generated_oracle(*op, c);
  return run_oracle(task_name, c);
}

} // namespace leap::oracles
