// The generator's sequential evaluator: the ground truth of the tolerance check, in double, and a
// naive float32 run it must accept (detail.hpp).
#include "env/taskgen/detail.hpp"

#include "env/shape_expr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

namespace leap::taskgen::detail {

// ---- evaluation (sequential loops, the tolerance check's ground truth) ----

template <class T>
std::vector<T> eval_op(const gen_op& op, const env::size_set& sz, const std::map<std::string, std::vector<T>>& in) {
  auto get = [&](const char* n) -> const std::vector<T>& { return in.at(n); };
  auto e1 = [](const expr& e, const char* var, T v) {
    std::map<std::string, T> env{{var, v}};
    if constexpr (std::is_same_v<T, double>) return eval_expr(e, env);
    else return eval_expr_f32(e, env);
  };
  auto eval_env = [](const expr& e, const std::map<std::string, T>& env) {
    if constexpr (std::is_same_v<T, double>) return eval_expr(e, env);
    else return eval_expr_f32(e, env);
  };
  // reduce over count values m(j)
  auto reduce = [&](const std::string& red, long long count, const std::function<T(long long)>& m) -> T {
    T acc = 0, best = 0;
    long long arg = 0;
    if (red == "lse") {
      T mx = 0;
      for (long long j = 0; j < count; ++j)
        if (j == 0 || m(j) > mx) mx = m(j);
      for (long long j = 0; j < count; ++j)
        acc += std::exp(m(j) - mx);
      return mx + std::log(acc);
    }
    for (long long j = 0; j < count; ++j) {
      T v = m(j);
      if (red == "sum" || red == "mean") acc += v;
      else if (red == "l1") acc += std::fabs(v);
      else if (red == "l2") acc += v * v;
      else if (red == "max") { if (j == 0 || v > acc) acc = v; }
      else if (red == "min") { if (j == 0 || v < acc) acc = v; }
      else if (red == "linf") { if (j == 0 || std::fabs(v) > acc) acc = std::fabs(v); }
      else if (red == "argmax") { if (j == 0 || v > best) { best = v; arg = j; } }
      else if (red == "argmin") { if (j == 0 || v < best) { best = v; arg = j; } }
    }
    if (red == "mean") return acc / static_cast<T>(count);
    if (red == "l2") return std::sqrt(acc);
    if (red == "argmax" || red == "argmin") return static_cast<T>(arg);
    return acc;
  };
  std::vector<T> out;
  switch (op.fam) {
    case family::ew: {
      long long n = sz.at("n");
      out.resize(static_cast<std::size_t>(n));
      const char* names[] = {"a", "b", "c"};
      for (long long i = 0; i < n; ++i) {
        std::map<std::string, T> env;
        for (int k = 0; k < op.inputs; ++k)
          env[names[k]] = get(names[k])[static_cast<std::size_t>(i)];
        out[static_cast<std::size_t>(i)] = eval_env(op.body, env);
      }
      break;
    }
    case family::red: {
      long long R = sz.at("rows"), C = sz.at("cols");
      auto& x = get("x");
      bool row = op.axis == "row";
      for (long long o = 0; o < (row ? R : C); ++o)
        out.push_back(reduce(op.reduce, row ? C : R, [&](long long j) {
          return e1(op.map, "v", x[static_cast<std::size_t>(row ? o * C + j : j * C + o)]);
        }));
      break;
    }
    case family::bcast: {
      long long R = sz.at("rows"), C = sz.at("cols");
      auto& x = get("x");
      std::vector<T> s;
      if (op.source == "rowred" || op.source == "colred") {
        bool rw = op.source == "rowred";
        for (long long o = 0; o < (rw ? R : C); ++o)
          s.push_back(reduce(op.reduce, rw ? C : R, [&](long long j) {
            return e1(op.map, "v", x[static_cast<std::size_t>(rw ? o * C + j : j * C + o)]);
          }));
      } else {
        s = get("v");
      }
      bool by_col = op.source == "colvec" || op.source == "colred";
      for (long long r = 0; r < R; ++r)
        for (long long c = 0; c < C; ++c)
          out.push_back(eval_env(op.body, {{"x", x[static_cast<std::size_t>(r * C + c)]},
                                           {"u", s[static_cast<std::size_t>(by_col ? c : r)]}}));
      break;
    }
    case family::softmax: {
      long long R = sz.at("rows"), C = sz.at("cols");
      auto& x = get("x");
      bool row = op.axis == "row";
      out.assign(static_cast<std::size_t>(R * C), 0);
      for (long long o = 0; o < (row ? R : C); ++o) {
        long long cnt = row ? C : R;
        auto at = [&](long long j) { return static_cast<std::size_t>(row ? o * C + j : j * C + o); };
        auto z = [&](long long j) {
          return static_cast<T>(op.scale) * x[at(j)] + (op.bias ? get("b")[static_cast<std::size_t>(j)] : T(0));
        };
        T m = 0, s = 0;
        for (long long j = 0; j < cnt; ++j)
          if (j == 0 || z(j) > m) m = z(j);
        for (long long j = 0; j < cnt; ++j)
          s += std::exp(z(j) - m);
        for (long long j = 0; j < cnt; ++j)
          out[at(j)] = op.variant == "log" ? z(j) - m - std::log(s) : std::exp(z(j) - m) / s;
      }
      break;
    }
    case family::scan: {
      long long R = sz.at("rows"), C = sz.at("cols");
      auto& x = get("x");
      bool row = op.axis == "row";
      out.assign(static_cast<std::size_t>(R * C), 0);
      for (long long o = 0; o < (row ? R : C); ++o) {
        long long cnt = row ? C : R;
        T acc = 0;
        for (long long q = 0; q < cnt; ++q) {
          long long t = op.reverse ? cnt - 1 - q : q;
          auto at = static_cast<std::size_t>(row ? o * C + t : t * C + o);
          T m = e1(op.map, "v", x[at]);
          if (op.reduce == "sum") {
            if (op.exclusive) { out[at] = acc; acc += m; }
            else { acc += m; out[at] = acc; }
          } else {
            if (q == 0 || (op.reduce == "max" ? m > acc : m < acc)) acc = m;
            out[at] = acc;
          }
        }
      }
      break;
    }
    case family::pool: {
      long long Cn = sz.at("C"), L = sz.at("L");
      auto& x = get("x");
      long long ol = (L - op.window) / op.stride + 1;
      for (long long c = 0; c < Cn; ++c)
        for (long long o = 0; o < ol; ++o) {
          std::string red = op.reduce == "avg" ? "mean" : op.reduce;
          out.push_back(reduce(red, op.window, [&](long long t) { return x[static_cast<std::size_t>(c * L + o * op.stride + t)]; }));
        }
      break;
    }
    case family::matmul: {
      long long M = sz.at("M"), N = sz.at("N"), K = sz.at("K");
      auto &A = get("A"), &B = get("B"), &bias = get("bias");
      for (long long m = 0; m < M; ++m)
        for (long long n = 0; n < N; ++n) {
          T acc = 0;
          for (long long k = 0; k < K; ++k)
            acc += A[static_cast<std::size_t>(m * K + k)] * B[static_cast<std::size_t>(k * N + n)];
          out.push_back(eval_env(op.body, {{"acc", acc}, {"bias", bias[static_cast<std::size_t>(n)]}}));
        }
      break;
    }
    case family::layout: {
      auto at = [](const std::vector<T>& v, long long i) { return v[static_cast<std::size_t>(i)]; };
      auto m = [&](T v) { return e1(op.map, "v", v); };
      if (op.variant == "transpose") {
        long long R = sz.at("rows"), C = sz.at("cols");
        auto& x = get("x");
        for (long long j = 0; j < C; ++j)
          for (long long i = 0; i < R; ++i)
            out.push_back(m(at(x, i * C + j)));
      } else if (op.variant == "permute") {
        long long S[3] = {sz.at("A"), sz.at("B"), sz.at("C")};
        int pm[3] = {op.perm[0] - '0', op.perm[1] - '0', op.perm[2] - '0'};
        auto& x = get("x");
        long long in[3];
        for (long long o0 = 0; o0 < S[pm[0]]; ++o0)
          for (long long o1 = 0; o1 < S[pm[1]]; ++o1)
            for (long long o2 = 0; o2 < S[pm[2]]; ++o2) {
              in[pm[0]] = o0;
              in[pm[1]] = o1;
              in[pm[2]] = o2;
              out.push_back(m(at(x, (in[0] * S[1] + in[1]) * S[2] + in[2])));
            }
      } else if (op.variant == "gather_rows" || op.variant == "gather_cols") {
        long long R = sz.at("rows"), C = sz.at("cols"), n = sz.at("n");
        auto &x = get("x"), &idx = get("idx");
        if (op.variant == "gather_rows") {
          for (long long i = 0; i < n; ++i)
            for (long long j = 0; j < C; ++j)
              out.push_back(m(at(x, static_cast<long long>(at(idx, i)) * C + j)));
        } else {
          for (long long r = 0; r < R; ++r)
            for (long long i = 0; i < n; ++i)
              out.push_back(m(at(x, r * C + static_cast<long long>(at(idx, i)))));
        }
      } else if (op.variant == "slice") {
        long long R = sz.at("rows"), C = sz.at("cols");
        auto& x = get("x");
        for (long long i = op.start0; i < R; i += op.step0)
          for (long long j = op.start1; j < C; j += op.step1)
            out.push_back(m(at(x, i * C + j)));
      } else { // concat
        auto &a = get("a"), &b = get("b");
        if (op.axis == "row") {
          for (auto& v : a) out.push_back(m(v));
          for (auto& v : b) out.push_back(m(v));
        } else {
          long long R = sz.at("rows"), ca = sz.at("ca"), cb = sz.at("cb");
          for (long long r = 0; r < R; ++r) {
            for (long long j = 0; j < ca; ++j) out.push_back(m(at(a, r * ca + j)));
            for (long long j = 0; j < cb; ++j) out.push_back(m(at(b, r * cb + j)));
          }
        }
      }
      break;
    }
    case family::stencil: {
      long long Cn = sz.at("C"), H = sz.at("H"), W = sz.at("W");
      auto& x = get("x");
      auto px = [&](long long c, long long i, long long j) { return x[static_cast<std::size_t>((c * H + i) * W + j)]; };
      if (op.variant == "pool2d") {
        const long long k = op.window, s = op.stride, OH = (H - k) / s + 1, OW = (W - k) / s + 1;
        std::string red = op.reduce == "avg" ? "mean" : op.reduce;
        for (long long c = 0; c < Cn; ++c)
          for (long long i = 0; i < OH; ++i)
            for (long long j = 0; j < OW; ++j)
              out.push_back(reduce(red, k * k, [&](long long t) { return px(c, i * s + t / k, j * s + t % k); }));
        break;
      }
      const bool valid = op.border == "valid";
      const long long OH = valid ? H - 2 : H, OW = valid ? W - 2 : W;
      auto w = stencil_weights(op.variant);
      auto fix = [&](long long q, long long n) -> long long {
        if (op.border == "clamp") return q < 0 ? 0 : q > n - 1 ? n - 1 : q;
        if (op.border == "mirror") return q < 0 ? -q : q > n - 1 ? 2 * n - 2 - q : q;
        return q;
      };
      for (long long c = 0; c < Cn; ++c)
        for (long long i = 0; i < OH; ++i)
          for (long long j = 0; j < OW; ++j) {
            T v = 0;
            for (int a = -1; a <= 1; ++a)
              for (int b = -1; b <= 1; ++b) {
                long long rr = fix(i + a + (valid ? 1 : 0), H), cc = fix(j + b + (valid ? 1 : 0), W);
                if (rr < 0 || rr > H - 1 || cc < 0 || cc > W - 1)
                  continue; // zero padding
                v += static_cast<T>(w[static_cast<std::size_t>((a + 1) * 3 + (b + 1))]) * px(c, rr, cc);
              }
            out.push_back(e1(op.map, "v", v));
          }
      break;
    }
  }
  return out;
}

// Sample inputs for the tolerance check, drawn from each input's uniform range.
std::map<std::string, std::vector<double>> sample_inputs(const parts& p, std::uint64_t seed) {
  rng r(seed);
  std::map<std::string, std::vector<double>> in;
  for (auto& a : p.args) {
    if (a.role != "input")
      continue;
    auto n = env::eval_shape(a.shape, p.sample);
    double lo = 0, hi = 1;
    auto& v = in[a.name];
    if (std::sscanf(a.init.c_str(), "randint(%lf, %lf)", &lo, &hi) == 2) { // int32 indices
      for (long long i = 0; i < (n ? *n : 0); ++i)
        v.push_back(lo + static_cast<double>(r.below(static_cast<int>(hi - lo + 1))));
      continue;
    }
    std::sscanf(a.init.c_str(), "uniform(%lf, %lf)", &lo, &hi);
    for (long long i = 0; i < (n ? *n : 0); ++i)
      v.push_back(static_cast<double>(static_cast<float>(lo + (hi - lo) * r.unit())));
  }
  return in;
}

template std::vector<double> eval_op<double>(const gen_op&, const env::size_set&,
                                             const std::map<std::string, std::vector<double>>&);
template std::vector<float> eval_op<float>(const gen_op&, const env::size_set&,
                                           const std::map<std::string, std::vector<float>>&);

} // namespace leap::taskgen::detail
