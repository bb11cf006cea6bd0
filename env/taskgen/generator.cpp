// The generated task families: see generator.hpp. Sampling (one operator per draw), rendering
// (prose, CUDA reference, task.toml), the tolerance refusal and the split rules.
#include "env/taskgen/generator.hpp"

#include "env/shape_expr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

namespace leap::taskgen {

const char* to_string(gen_kind k) {
  switch (k) {
    case gen_kind::train: return "train";
    case gen_kind::eval_instance: return "held-out instance";
    case gen_kind::eval_composition: return "held-out composition";
  }
  return "?";
}

namespace {

// ---- deterministic randomness (no std distributions: their output differs between libraries)

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct rng {
  std::uint64_t s;
  explicit rng(std::uint64_t seed) : s(seed) {}
  std::uint64_t next() { return splitmix(s); }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  int range(int lo, int hi) { return lo + below(hi - lo + 1); } // inclusive
  bool coin(int percent) { return below(100) < percent; }
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(below(static_cast<int>(v.size())))]; }
};

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// An odd size in [lo, hi] that is no multiple of 3 either (so of no common block or tile size).
int odd_size(rng& r, int lo, int hi) {
  for (;;) {
    int v = r.range(lo, hi) | 1;
    if (v <= hi && v % 3 != 0)
      return v;
  }
}

// ---- sampling ----

const std::vector<double>& constants() {
  static const std::vector<double> c{0.5, 2, 3, 0.25, 1.5, 0.1, 4, 0.75, -1, -0.5, 1.25, 0.2};
  return c;
}
const std::vector<std::string>& unary_pool() {
  static const std::vector<std::string> u{"abs",  "exp",    "tanh", "sigmoid", "relu",   "softplus",
                                          "sin",  "cos",    "square", "silu",  "log1p_abs"};
  return u;
}
const std::vector<std::string>& binary_pool() {
  static const std::vector<std::string> b{"add", "sub", "mul", "max", "min"};
  return b;
}

// A random expression over `vars` of at most `d` levels.
expr sample_expr(rng& r, const std::vector<std::string>& vars, int d) {
  if (d <= 0 || r.coin(20))
    return expr::v(r.pick(vars));
  int k = r.below(100);
  if (k < 38)
    return expr::f(r.pick(unary_pool()), {sample_expr(r, vars, d - 1)});
  if (k < 62) {
    auto a = sample_expr(r, vars, d - 1);
    auto b = sample_expr(r, vars, d - 1);
    return expr::f(r.pick(binary_pool()), {a, b});
  }
  if (k < 84) { // affine: e * c or e + c
    auto a = sample_expr(r, vars, d - 1);
    return expr::f(r.coin(50) ? "mul" : "add", {a, expr::c(r.pick(constants()))});
  }
  if (k < 93) { // piecewise
    auto lhs = expr::v(r.pick(vars));
    double thr = r.pick(std::vector<double>{0, 0.5, -0.5, 1, -1});
    return expr::f("select", {lhs, expr::c(thr), sample_expr(r, vars, d - 1), sample_expr(r, vars, d - 1)});
  }
  double lo = r.pick(std::vector<double>{-1, -0.5, 0, -2});
  double hi = lo + r.pick(std::vector<double>{1, 1.5, 2, 3});
  return expr::f("clamp", {sample_expr(r, vars, d - 1), expr::c(lo), expr::c(hi)});
}

int node_count(const expr& e) {
  int n = 1;
  for (auto& k : e.kids)
    n += node_count(k);
  return n;
}

bool uses_all(const expr& e, const std::vector<std::string>& vars) {
  return std::all_of(vars.begin(), vars.end(), [&](const std::string& v) { return uses(e, v); });
}

// Maps applied to x before a reduction or scan, by the reductions they are not redundant with.
std::vector<expr> maps_for(const std::string& reduce) {
  auto v = expr::v("v");
  if (reduce == "argmax" || reduce == "argmin")
    return {v, expr::f("abs", {v})};
  if (reduce == "max" || reduce == "min")
    return {v, expr::f("abs", {v}), expr::f("cos", {v}), expr::f("square", {expr::f("sub", {v, expr::c(0.5)})})};
  if (reduce == "l1" || reduce == "l2" || reduce == "linf")
    return {v, expr::f("sub", {v, expr::c(0.5)})};
  if (reduce == "lse")
    return {v, expr::f("mul", {v, expr::c(2)}), expr::f("mul", {v, expr::c(0.5)}), expr::f("mul", {v, expr::c(-1)})};
  return {v, expr::f("abs", {v}), expr::f("square", {v}), expr::f("relu", {v}), expr::f("tanh", {v}),
          expr::f("exp", {v}), expr::f("sigmoid", {v}), expr::f("cos", {v}), expr::f("sin", {v}),
          expr::f("mul", {v, expr::c(2)}), expr::f("add", {v, expr::c(-0.5)})};
}

gen_op sample_op(family f, rng& r) {
  gen_op op;
  op.fam = f;
  switch (f) {
    case family::ew: {
      op.inputs = r.range(1, 3);
      std::vector<std::string> vars{"a", "b", "c"};
      vars.resize(static_cast<std::size_t>(op.inputs));
      for (int tries = 0; tries < 100; ++tries) {
        op.body = sample_expr(r, vars, r.range(2, 3));
        if (uses_all(op.body, vars) && node_count(op.body) <= 11 && depth(op.body) >= 1)
          break;
      }
      break;
    }
    case family::red: {
      op.axis = r.coin(50) ? "row" : "col";
      op.reduce = r.pick(std::vector<std::string>{"sum", "mean", "max", "min", "argmax", "argmin", "l1", "l2", "linf", "lse"});
      op.map = r.pick(maps_for(op.reduce));
      break;
    }
    case family::bcast: {
      op.source = r.pick(std::vector<std::string>{"colvec", "rowvec", "rowred", "colred"});
      if (op.source == "rowred" || op.source == "colred") {
        // normalisation by a reduced value of the same row (column)
        op.reduce = r.pick(std::vector<std::string>{"mean", "max", "min", "sum", "l2", "linf"});
        op.map = op.reduce == "l2" || op.reduce == "linf" ? expr::v("v") : r.pick(maps_for("sum"));
        bool positive = op.reduce == "l2" || op.reduce == "linf";
        std::vector<expr> bodies{
          expr::f("sub", {expr::v("x"), expr::v("u")}),
          expr::f("mul", {expr::f("sub", {expr::v("x"), expr::v("u")}), expr::c(r.pick(constants()))}),
          expr::f("max", {expr::f("sub", {expr::v("x"), expr::v("u")}), expr::c(0)}),
          expr::f("exp", {expr::f("sub", {expr::v("x"), expr::v("u")})}),
          expr::f("tanh", {expr::f("sub", {expr::v("x"), expr::v("u")})}),
          expr::f("mul", {expr::v("x"), expr::f("sigmoid", {expr::v("u")})}),
          expr::f("add", {expr::v("x"), expr::f("mul", {expr::v("u"), expr::c(r.pick(constants()))})})};
        if (positive) {
          bodies.push_back(expr::f("div", {expr::v("x"), expr::v("u")}));
          bodies.push_back(expr::f("div", {expr::f("mul", {expr::v("x"), expr::c(r.pick(constants()))}), expr::v("u")}));
        }
        op.body = r.pick(bodies);
      } else {
        for (int tries = 0; tries < 100; ++tries) {
          op.body = sample_expr(r, {"x", "u"}, 2);
          if (uses_all(op.body, {"x", "u"}) && node_count(op.body) <= 7)
            break;
        }
      }
      break;
    }
    case family::softmax: {
      op.axis = r.coin(60) ? "row" : "col";
      op.variant = r.coin(60) ? "softmax" : "log";
      op.scale = r.pick(std::vector<double>{1, 1, 0.5, 2, 0.25, 1.5}) * (r.coin(25) ? -1 : 1);
      op.bias = r.coin(40);
      break;
    }
    case family::scan: {
      op.axis = r.coin(60) ? "row" : "col";
      op.reduce = r.pick(std::vector<std::string>{"sum", "sum", "max", "min"});
      op.exclusive = op.reduce == "sum" && r.coin(35);
      op.reverse = r.coin(35);
      op.map = op.reduce == "sum" ? r.pick(maps_for("sum")) : r.pick(maps_for("max"));
      break;
    }
    case family::pool: {
      op.reduce = r.pick(std::vector<std::string>{"max", "min", "avg", "sum", "l2", "linf"});
      op.window = r.range(2, 9);
      op.stride = r.range(1, op.window + 2);
      break;
    }
    case family::matmul: {
      auto acc = expr::v("acc"), bias = expr::v("bias");
      auto act = [&](expr e) {
        auto fn = r.pick(std::vector<std::string>{"relu", "tanh", "sigmoid", "silu", "softplus", "abs", "square", "sin"});
        return expr::f(fn, {std::move(e)});
      };
      int t = r.below(7);
      double c1 = r.pick(constants());
      switch (t) {
        case 0: op.body = act(expr::f("add", {acc, bias})); break;
        case 1: op.body = act(expr::f("add", {expr::f("mul", {acc, expr::c(c1)}), bias})); break;
        case 2: op.body = expr::f("mul", {act(expr::f("add", {acc, bias})), expr::c(c1)}); break;
        case 3: op.body = expr::f("add", {act(acc), bias}); break;
        case 4: op.body = expr::f("mul", {act(acc), bias}); break;
        case 5: {
          double lo = r.pick(std::vector<double>{-1, -0.5, 0, -2});
          op.body = expr::f("clamp", {expr::f("add", {acc, bias}), expr::c(lo), expr::c(lo + r.pick(std::vector<double>{1, 2, 3}))});
          break;
        }
        default: op.body = expr::f("add", {act(expr::f("add", {acc, bias})), expr::f("mul", {acc, expr::c(c1)})}); break;
      }
      break;
    }
    case family::layout: {
      op.variant = r.pick(std::vector<std::string>{"transpose", "permute", "permute", "gather_rows", "gather_cols",
                                                   "slice", "slice", "concat"});
      op.map = r.coin(40) ? expr::v("v") : r.pick(maps_for("sum"));
      if (op.variant == "permute")
        op.perm = r.pick(std::vector<std::string>{"102", "120", "201", "210", "021"});
      if (op.variant == "concat")
        op.axis = r.coin(50) ? "row" : "col";
      if (op.variant == "slice") {
        op.start0 = r.range(0, 3);
        op.step0 = r.range(1, 3);
        op.start1 = r.range(0, 4);
        op.step1 = r.range(1, 4);
        if (op.start0 == 0 && op.step0 == 1 && op.start1 == 0 && op.step1 == 1)
          op.step1 = 2; // not the whole matrix
      }
      break;
    }
    case family::stencil: {
      if (r.coin(40)) {
        op.variant = "pool2d";
        op.reduce = r.pick(std::vector<std::string>{"max", "min", "avg", "sum", "l2", "linf"});
        op.window = r.range(2, 5);
        op.stride = r.range(1, op.window + 1);
      } else {
        op.variant = r.pick(std::vector<std::string>{"box", "gauss", "cross", "laplace4", "laplace8", "sharpen",
                                                     "sobel_x", "sobel_y"});
        op.border = r.pick(std::vector<std::string>{"zero", "clamp", "mirror", "valid"});
        auto v = expr::v("v");
        op.map = r.pick(std::vector<expr>{v, v, expr::f("abs", {v}), expr::f("relu", {v}), expr::f("square", {v}),
                                          expr::f("tanh", {v})});
      }
      break;
    }
  }
  return op;
}

// ---- printing ----

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
std::string cnum(double v) { // a C double literal
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  std::string s = b;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return "(" + s + ")";
}

// A C float literal spelled as the prose spells the number: "3" -> "3.0f", "0.1" -> "0.1f".
std::string fnum(double v) {
  std::string s = num(v);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s + "f";
}

// Infix text of an expression, with the operators, parentheses, argument order and function names
// of the prose in both spellings: `prose` for the description, `c_float` for a float CUDA kernel
// that transcribes it (numbers become float literals, |t| fabsf(t), (t)^2 square(t),
// log(1 + |t|) log1pf(fabsf(t)), exp/tanh/sin/cos their float forms), so what a reader of the
// prose can copy, a model can too. `names` maps variables to what is written (a -> "a[i]").
enum class spelling { prose, c_float };
std::string infix(const expr& e, const std::map<std::string, std::string>& names, spelling sp,
                  int prec = 0) {
  const bool c = sp == spelling::c_float;
  switch (e.kind) {
    case expr::var: {
      auto it = names.find(e.name);
      return it == names.end() ? e.name : it->second;
    }
    case expr::constant: {
      const std::string v = c ? fnum(e.value) : num(e.value);
      return e.value < 0 && prec > 0 ? "(" + v + ")" : v;
    }
    case expr::call: break;
  }
  const auto& k = e.kids;
  auto p = [&](int i, int pr = 0) { return infix(k[static_cast<std::size_t>(i)], names, sp, pr); };
  auto wrap = [&](int my, const std::string& s) { return my < prec ? "(" + s + ")" : s; };
  const std::string& fn = e.name;
  if (fn == "add") return wrap(1, p(0, 1) + " + " + p(1, 1));
  if (fn == "sub") return wrap(1, p(0, 1) + " - " + p(1, 2));
  if (fn == "mul") return wrap(2, p(0, 2) + " * " + p(1, 3));
  if (fn == "div") return wrap(2, p(0, 2) + " / " + p(1, 3));
  if (fn == "max" || fn == "min") return fn + "(" + p(0) + ", " + p(1) + ")";
  if (fn == "abs") return c ? "fabsf(" + p(0) + ")" : "|" + p(0) + "|";
  if (fn == "square") return c ? "square(" + p(0) + ")" : "(" + p(0) + ")^2";
  if (fn == "log1p_abs") return c ? "log1pf(fabsf(" + p(0) + "))" : "log(1 + |" + p(0) + "|)";
  if (fn == "select") return "(" + p(0, 1) + " > " + p(1) + " ? " + p(2) + " : " + p(3) + ")";
  if (fn == "clamp") return "clamp(" + p(0) + ", " + p(1) + ", " + p(2) + ")";
  if (c && (fn == "exp" || fn == "tanh" || fn == "sin" || fn == "cos")) return fn + "f(" + p(0) + ")";
  return fn + "(" + p(0) + ")";
}
std::string prose(const expr& e, const std::map<std::string, std::string>& names) {
  return infix(e, names, spelling::prose);
}

void collect_fns(const expr& e, std::set<std::string>& out) {
  if (e.kind == expr::call)
    out.insert(e.name);
  for (auto& k : e.kids)
    collect_fns(k, out);
}

// Definitions of the named functions an expression uses, as a sentence (or "").
std::string definitions(const std::vector<const expr*>& es) {
  std::set<std::string> fns;
  for (auto* e : es)
    collect_fns(*e, fns);
  static const std::vector<std::pair<std::string, std::string>> defs{
    {"sigmoid", "sigmoid(t) = 1 / (1 + exp(-t))"},
    {"softplus", "softplus(t) = log(1 + exp(t)) (equal to t for t > 20)"},
    {"silu", "silu(t) = t / (1 + exp(-t))"},
    {"relu", "relu(t) = max(t, 0)"},
    {"clamp", "clamp(t, lo, hi) = min(max(t, lo), hi)"},
    {"select", "(p > q ? s : t) is s where p > q and t elsewhere"}};
  std::string s;
  for (auto& [fn, d] : defs)
    if (fns.count(fn))
      s += (s.empty() ? "" : "; ") + d;
  return s.empty() ? "" : "Here " + s + ".";
}

// CUDA (double) text. `names` maps variables to C expressions of type double.
std::string cuda(const expr& e, const std::map<std::string, std::string>& names) {
  switch (e.kind) {
    case expr::var: return names.at(e.name);
    case expr::constant: return cnum(e.value);
    case expr::call: break;
  }
  std::vector<std::string> k;
  for (auto& c : e.kids)
    k.push_back(cuda(c, names));
  const std::string& fn = e.name;
  if (fn == "add") return "(" + k[0] + " + " + k[1] + ")";
  if (fn == "sub") return "(" + k[0] + " - " + k[1] + ")";
  if (fn == "mul") return "(" + k[0] + " * " + k[1] + ")";
  if (fn == "div") return "(" + k[0] + " / " + k[1] + ")";
  if (fn == "max") return "fmax(" + k[0] + ", " + k[1] + ")";
  if (fn == "min") return "fmin(" + k[0] + ", " + k[1] + ")";
  if (fn == "select") return "(" + k[0] + " > " + k[1] + " ? " + k[2] + " : " + k[3] + ")";
  if (fn == "clamp") return "fmin(fmax(" + k[0] + ", " + k[1] + "), " + k[2] + ")";
  return "g_" + fn + "(" + k[0] + ")";
}

// The float helpers infix(c_float) calls, each defined only when the expression uses it.
std::string literal_helpers(const expr& e) {
  std::set<std::string> fns;
  collect_fns(e, fns);
  static const std::vector<std::pair<std::string, std::string>> defs{
    {"clamp", "__device__ float clamp(float t, float lo, float hi) { return fminf(fmaxf(t, lo), hi); }\n"},
    {"sigmoid", "__device__ float sigmoid(float t) { return 1.0f / (1.0f + expf(-t)); }\n"},
    {"softplus", "__device__ float softplus(float t) { return t > 20.0f ? t : log1pf(expf(t)); }\n"},
    {"relu", "__device__ float relu(float t) { return fmaxf(t, 0.0f); }\n"},
    {"silu", "__device__ float silu(float t) { return t / (1.0f + expf(-t)); }\n"},
    {"square", "__device__ float square(float t) { return t * t; }\n"}};
  std::string s;
  for (auto& [fn, d] : defs)
    if (fns.count(fn))
      s += d;
  return s.empty() ? s : s + "\n";
}

const char* cuda_helpers =
  "__device__ double g_abs(double t) { return fabs(t); }\n"
  "__device__ double g_exp(double t) { return exp(t); }\n"
  "__device__ double g_tanh(double t) { return tanh(t); }\n"
  "__device__ double g_sigmoid(double t) { return 1.0 / (1.0 + exp(-t)); }\n"
  "__device__ double g_relu(double t) { return t > 0.0 ? t : 0.0; }\n"
  "__device__ double g_softplus(double t) { return t > 20.0 ? t : log1p(exp(t)); }\n"
  "__device__ double g_sin(double t) { return sin(t); }\n"
  "__device__ double g_cos(double t) { return cos(t); }\n"
  "__device__ double g_square(double t) { return t * t; }\n"
  "__device__ double g_silu(double t) { return t / (1.0 + exp(-t)); }\n"
  "__device__ double g_log1p_abs(double t) { return log1p(fabs(t)); }\n";

// ---- the family renderers ----

struct arg_def {
  std::string name;
  std::string ctype;  // const float* / float* / int* / int
  std::string role;   // input output "" (int)
  std::string shape;
  std::string init;
};

struct parts {
  int level = 1;
  std::string category;
  std::string description; // without the two closing lines
  std::vector<arg_def> args;
  std::vector<env::size_set> sizes;
  env::size_set sample;    // a small size set for the tolerance check
  double atol = 1e-5, rtol = 1e-5;
  std::string kernels;     // __global__ kernels
  std::string launch;      // body of solution()
};

std::string join_names(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

struct range_t {
  double lo, hi;
};
std::string uniform(range_t r) { return "uniform(" + num(r.lo) + ", " + num(r.hi) + ")"; }

const std::vector<std::string>& closing() {
  static const std::vector<std::string> c{
    "All pointers are device pointers (allocated with cudaMalloc by the caller); sizes are passed as int.",
    "Arrays are float32 and row-major unless stated otherwise."};
  return c;
}

// The reduction of `m` over an axis, in prose ("sum over 0 <= j < cols of ..."). idx is the
// running index name and bound its bound.
std::string reduce_prose(const std::string& red, const std::string& m, const std::string& idx,
                         const std::string& bound) {
  std::string over = idx + " in [0, " + bound + ")";
  if (red == "sum") return "the sum over " + over + " of " + m;
  if (red == "mean") return "the mean over " + over + " of " + m + " (the sum divided by " + bound + ")";
  if (red == "max") return "the largest value of " + m + " over " + over;
  if (red == "min") return "the smallest value of " + m + " over " + over;
  if (red == "argmax") return "the index " + idx + " in [0, " + bound + ") at which " + m + " is largest (the smallest such index on ties)";
  if (red == "argmin") return "the index " + idx + " in [0, " + bound + ") at which " + m + " is smallest (the smallest such index on ties)";
  if (red == "l1") return "the sum over " + over + " of |" + m + "| (an L1 norm)";
  if (red == "l2") return "sqrt of the sum over " + over + " of (" + m + ")^2 (a Euclidean norm)";
  if (red == "linf") return "the largest |" + m + "| over " + over + " (a max norm)";
  if (red == "lse") return "log(sum over " + over + " of exp(" + m + ")) (a log-sum-exp; subtract the maximum first so exp cannot overflow)";
  return red;
}

// CUDA: accumulate `m` (a double expression of loop index j) into the result `res` (double).
std::string reduce_cuda(const std::string& red, const std::string& m, const std::string& count) {
  std::ostringstream s;
  if (red == "sum" || red == "mean" || red == "l1" || red == "l2") {
    s << "  double acc = 0.0;\n  for (int j = 0; j < " << count << "; ++j) {\n    double m = " << m << ";\n";
    s << (red == "l1" ? "    acc += fabs(m);\n" : red == "l2" ? "    acc += m * m;\n" : "    acc += m;\n") << "  }\n";
    s << (red == "mean" ? "  double res = acc / " + count + ";\n" : red == "l2" ? "  double res = sqrt(acc);\n" : "  double res = acc;\n");
  } else if (red == "max" || red == "min" || red == "linf") {
    std::string mm = red == "linf" ? "fabs(m)" : "m";
    s << "  double res = 0.0;\n  for (int j = 0; j < " << count << "; ++j) {\n    double m = " << m << ";\n";
    s << "    if (j == 0 || " << mm << (red == "min" ? " < " : " > ") << "res) res = " << mm << ";\n  }\n";
  } else if (red == "argmax" || red == "argmin") {
    s << "  double best = 0.0;\n  int res = 0;\n  for (int j = 0; j < " << count << "; ++j) {\n    double m = " << m << ";\n";
    s << "    if (j == 0 || m" << (red == "argmin" ? " < " : " > ") << "best) { best = m; res = j; }\n  }\n";
  } else if (red == "lse") {
    s << "  double mx = 0.0;\n  for (int j = 0; j < " << count << "; ++j) {\n    double m = " << m << ";\n    if (j == 0 || m > mx) mx = m;\n  }\n";
    s << "  double acc = 0.0;\n  for (int j = 0; j < " << count << "; ++j) {\n    double m = " << m << ";\n    acc += exp(m - mx);\n  }\n";
    s << "  double res = mx + log(acc);\n";
  }
  return s.str();
}

double reduce_tol_atol(const std::string& red) {
  if (red == "sum" || red == "l1" || red == "l2" || red == "lse") return 1e-3;
  if (red == "mean") return 1e-5;
  return 1e-6;
}

std::string launch_1d(const std::string& kernel, const std::string& count, const std::string& args) {
  return "  const int total = " + count + ";\n  if (total <= 0) return;\n  const int block = 128;\n"
         "  " + kernel + "<<<(total + block - 1) / block, block>>>(" + args + ");\n"
         "  cudaDeviceSynchronize();\n";
}

parts render_ew(const gen_op& op, rng& r) {
  parts p;
  p.level = 1;
  p.category = "elementwise";
  std::vector<std::string> ins{"a", "b", "c"};
  ins.resize(static_cast<std::size_t>(op.inputs));
  std::vector<range_t> ranges{{-2, 2}, {-1, 1}, {0, 3}, {-3, 1}, {-1.5, 2.5}};
  std::map<std::string, std::string> pn;
  std::string range_text;
  for (auto& v : ins) {
    auto rg = r.pick(ranges);
    p.args.push_back({v, "const float*", "input", "n", uniform(rg)});
    pn[v] = v + "[i]";
    range_text += (range_text.empty() ? "" : ", ") + v + " in [" + num(rg.lo) + ", " + num(rg.hi) + "]";
  }
  p.args.push_back({"out", "float*", "output", "n", ""});
  p.args.push_back({"n", "int", "", "", ""});
  int n1 = r.pick(std::vector<int>{65536, 131072, 262144});
  int n2 = odd_size(r, 50001, 300000);
  p.sizes = {{{"n", n1}}, {{"n", n2}}};
  p.sample = {{"n", 400}};
  p.atol = 1e-5;
  p.rtol = 1e-4;
  std::vector<std::string> openers{
    "Elementwise map over n float32 values: for every 0 <= i < n,",
    "Compute, for each index i in [0, n),",
    "One output per position (0 <= i < n), each depending only on the inputs at that position:",
    "Apply the following formula independently to every element i (0 <= i < n):"};
  std::string all = join_names([&] { auto v = ins; v.push_back("out"); return v; }());
  std::ostringstream d;
  d << r.pick(openers) << "\nout[i] = " << prose(op.body, pn) << ".\n";
  auto defs = definitions({&op.body});
  if (!defs.empty())
    d << defs << "\n";
  d << all << " hold n float32 values each; the inputs are drawn from " << range_text << ". ";
  d << r.pick(std::vector<std::string>{
    "n can be any positive int and is not necessarily a multiple of the block size (one test uses n = " + std::to_string(n2) + "), so guard the tail.",
    "n is not necessarily a multiple of the block size or of 4 (one test size is " + std::to_string(n2) + "); guard the tail.",
    "One test uses n = " + std::to_string(n2) + ", which is not a multiple of any block size."});
  p.description = d.str();
  std::string params, call;
  for (auto& a : p.args) {
    params += (params.empty() ? "" : ", ") + a.ctype + " " + a.name;
    call += (call.empty() ? "" : ", ") + a.name;
  }
  p.kernels = literal_helpers(op.body) + "__global__ void gen_kernel(" + params + ") {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i >= n) return;\n  out[i] = " + infix(op.body, pn, spelling::c_float) + ";\n}\n";
  p.launch = launch_1d("gen_kernel", "n", call);
  return p;
}

// rows x cols helpers: the element of row r, column j in C.
parts render_red(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  p.category = "reduction";
  bool row = op.axis == "row";
  bool idx_out = op.reduce == "argmax" || op.reduce == "argmin";
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {-1, 3}, {-2, 2}, {0, 1}});
  p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)},
            {"out", idx_out ? "int*" : "float*", "output", row ? "rows" : "cols", ""},
            {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
  int r2 = odd_size(r, 33, 121), c2 = odd_size(r, 700, 3001);
  p.sizes = {{{"rows", r.pick(std::vector<int>{128, 256})}, {"cols", r.pick(std::vector<int>{512, 1024})}},
             row ? env::size_set{{"rows", r2}, {"cols", c2}} : env::size_set{{"rows", c2 / 4 | 1}, {"cols", odd_size(r, 301, 1201)}}};
  p.sample = {{"rows", 7}, {"cols", 129}};
  p.atol = reduce_tol_atol(op.reduce);
  p.rtol = op.reduce == "max" || op.reduce == "min" || op.reduce == "linf" ? 1e-6 : 1e-4;
  std::string o = row ? "r" : "c", j = row ? "j" : "i", bound = row ? "cols" : "rows";
  std::string elem = row ? "x[r, j]" : "x[i, c]";
  std::string m = prose(op.map, {{"v", elem}});
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{
         row ? "Reduce each row of x" : "Reduce each column of x",
         row ? "One value per row" : "One value per column",
         row ? "A row-wise reduction" : "A column-wise reduction"})
    << ": x is rows x cols (row-major) and out holds " << (row ? "rows" : "cols")
    << (idx_out ? " int32 indices" : " float32 values") << "; for every " << (row ? "row r" : "column c")
    << ", out[" << o << "] is " << reduce_prose(op.reduce, m, j, bound) << ". ";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << defs << " ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. ";
  d << (row ? "cols" : "rows") << " is not necessarily a multiple of the block or warp size (one test uses "
    << (row ? std::to_string(p.sizes[1]["rows"]) + " rows of " + std::to_string(p.sizes[1]["cols"]) + " columns"
            : std::to_string(p.sizes[1]["rows"]) + " rows of " + std::to_string(p.sizes[1]["cols"]) + " columns")
    << ").";
  if (!idx_out && (op.reduce == "sum" || op.reduce == "mean" || op.reduce == "l1" || op.reduce == "l2" || op.reduce == "lse"))
    d << " Any summation order is accepted within the tolerance.";
  p.description = d.str();
  std::string elem_c = row ? "(double)x[(long long)o * cols + j]" : "(double)x[(long long)j * cols + o]";
  std::string mc = cuda(op.map, {{"v", elem_c}});
  p.kernels = std::string("__global__ void gen_kernel(const float* x, ") + (idx_out ? "int*" : "float*")
              + " out, int rows, int cols) {\n  int o = blockIdx.x * blockDim.x + threadIdx.x;\n  if (o >= "
              + (row ? "rows" : "cols") + ") return;\n" + reduce_cuda(op.reduce, mc, row ? "cols" : "rows")
              + (idx_out ? "  out[o] = res;\n}\n" : "  out[o] = (float)res;\n}\n");
  p.launch = "  if (rows <= 0 || cols <= 0) return;\n" + launch_1d("gen_kernel", row ? "rows" : "cols", "x, out, rows, cols");
  return p;
}

parts render_bcast(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  bool reduced = op.source == "rowred" || op.source == "colred";
  p.category = reduced ? "norm" : "elementwise";
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {-2, 2}, {0, 2}});
  range_t vr = r.pick(std::vector<range_t>{{-1, 1}, {0.5, 2}, {-2, 0}});
  p.args.push_back({"x", "const float*", "input", "rows*cols", uniform(rg)});
  if (!reduced)
    p.args.push_back({"v", "const float*", "input", op.source == "colvec" ? "cols" : "rows", uniform(vr)});
  p.args.push_back({"y", "float*", "output", "rows*cols", ""});
  p.args.push_back({"rows", "int", "", "", ""});
  p.args.push_back({"cols", "int", "", "", ""});
  p.sizes = {{{"rows", 64}, {"cols", r.pick(std::vector<int>{512, 1024})}},
             {{"rows", odd_size(r, 33, 99)}, {"cols", odd_size(r, 300, 1500)}}};
  p.sample = {{"rows", 7}, {"cols", 61}};
  p.atol = 1e-4;
  p.rtol = 1e-4;
  std::string u_name = op.source == "colvec" ? "v[c]" : op.source == "rowvec" ? "v[r]" : op.source == "rowred" ? "s[r]" : "s[c]";
  std::string body = prose(op.body, {{"x", "x[r, c]"}, {"u", u_name}});
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{"Broadcast combine", "Combine every element with a per-" + std::string(op.source == "colvec" || op.source == "colred" ? "column" : "row") + " value", "Elementwise with a broadcast operand"})
    << ": x and y are rows x cols (row-major); for every row r and column c,\ny[r, c] = " << body << ",\n";
  if (op.source == "colvec")
    d << "where v holds cols float32 values (one per column, in [" << num(vr.lo) << ", " << num(vr.hi) << "]). ";
  else if (op.source == "rowvec")
    d << "where v holds rows float32 values (one per row, in [" << num(vr.lo) << ", " << num(vr.hi) << "]). ";
  else {
    bool rw = op.source == "rowred";
    std::string m = prose(op.map, {{"v", rw ? "x[r, j]" : "x[i, c]"}});
    d << "where " << u_name << " is " << reduce_prose(op.reduce, m, rw ? "j" : "i", rw ? "cols" : "rows")
      << " (computed from x itself: no extra input). ";
  }
  auto defs = definitions({&op.body, &op.map});
  if (!defs.empty())
    d << defs << " ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. rows and cols are not necessarily multiples of the block size (one test uses "
    << p.sizes[1]["rows"] << " rows of " << p.sizes[1]["cols"] << " columns).";
  p.description = d.str();
  std::string params = reduced ? "const float* x, float* y, int rows, int cols" : "const float* x, const float* v, float* y, int rows, int cols";
  std::string call = reduced ? "x, y, rows, cols" : "x, v, y, rows, cols";
  std::map<std::string, std::string> cn{{"x", "(double)x[(long long)r * cols + c]"}};
  if (!reduced) {
    cn["u"] = op.source == "colvec" ? "(double)v[c]" : "(double)v[r]";
    p.kernels = "__global__ void gen_kernel(" + params + ") {\n  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                "  if (i >= (long long)rows * cols) return;\n  int r = (int)(i / cols), c = (int)(i % cols);\n"
                "  y[i] = (float)" + cuda(op.body, cn) + ";\n}\n";
    p.launch = launch_1d("gen_kernel", "rows * cols", call);
  } else {
    bool rw = op.source == "rowred";
    std::string elem = rw ? "(double)x[(long long)o * cols + j]" : "(double)x[(long long)j * cols + o]";
    cn["u"] = rw ? "s[r]" : "s[c]";
    p.kernels = "__global__ void gen_reduce(const float* x, double* s, int rows, int cols) {\n"
                "  int o = blockIdx.x * blockDim.x + threadIdx.x;\n  if (o >= " + std::string(rw ? "rows" : "cols") + ") return;\n"
                + reduce_cuda(op.reduce, cuda(op.map, {{"v", elem}}), rw ? "cols" : "rows") + "  s[o] = res;\n}\n\n"
                "__global__ void gen_kernel(const float* x, const double* s, float* y, int rows, int cols) {\n"
                "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                "  if (i >= (long long)rows * cols) return;\n  int r = (int)(i / cols), c = (int)(i % cols);\n"
                "  y[i] = (float)" + cuda(op.body, cn) + ";\n}\n";
    p.launch = std::string("  if (rows <= 0 || cols <= 0) return;\n  double* s = nullptr;\n  cudaMalloc(&s, sizeof(double) * ")
               + (rw ? "rows" : "cols") + ");\n  const int block = 128;\n  gen_reduce<<<(" + (rw ? "rows" : "cols")
               + " + block - 1) / block, block>>>(x, s, rows, cols);\n  const long long total = (long long)rows * cols;\n"
               "  gen_kernel<<<(unsigned)((total + block - 1) / block), block>>>(x, s, y, rows, cols);\n"
               "  cudaDeviceSynchronize();\n  cudaFree(s);\n";
  }
  return p;
}

parts render_softmax(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  p.category = "softmax";
  bool row = op.axis == "row";
  range_t rg = r.pick(std::vector<range_t>{{-5, 5}, {-10, 10}, {-3, 3}});
  p.args.push_back({"x", "const float*", "input", "rows*cols", uniform(rg)});
  if (op.bias)
    p.args.push_back({"b", "const float*", "input", row ? "cols" : "rows", "uniform(-2, 2)"});
  p.args.push_back({"y", "float*", "output", "rows*cols", ""});
  p.args.push_back({"rows", "int", "", "", ""});
  p.args.push_back({"cols", "int", "", "", ""});
  p.sizes = {{{"rows", row ? 128 : 256}, {"cols", row ? 1024 : 128}},
             row ? env::size_set{{"rows", odd_size(r, 33, 99)}, {"cols", odd_size(r, 700, 3001)}}
                 : env::size_set{{"rows", odd_size(r, 300, 1500)}, {"cols", odd_size(r, 33, 99)}}};
  p.sample = {{"rows", 9}, {"cols", 41}};
  p.atol = op.variant == "log" ? 1e-5 : 1e-6;
  p.rtol = 1e-4;
  std::string k = row ? "j" : "i", lane = row ? "row r" : "column c";
  std::string z = (op.scale == 1 ? "" : op.scale == -1 ? "-" : num(op.scale) + " * ") + (row ? "x[r, j]" : "x[i, c]")
                  + (op.bias ? (row ? " + b[j]" : " + b[i]") : "");
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{"Normalise along each " + std::string(row ? "row" : "column"),
                                       "A " + std::string(op.variant == "log" ? "log-" : "") + "softmax along " + (row ? "rows" : "columns"),
                                       "Exponential normalisation per " + std::string(row ? "row" : "column")})
    << ": x and y are rows x cols (row-major). For every " << lane << " let z[" << (row ? "r, j" : "i, c") << "] = " << z
    << " and m = the largest z in that " << (row ? "row" : "column") << "; then\n";
  if (op.variant == "log")
    d << "y[" << (row ? "r, j" : "i, c") << "] = z[" << (row ? "r, j" : "i, c") << "] - m - log(sum over " << k << " of exp(z - m))";
  else
    d << "y[" << (row ? "r, j" : "i, c") << "] = exp(z[" << (row ? "r, j" : "i, c") << "] - m) / (sum over " << k << " of exp(z - m))";
  d << ", the sum running over the whole " << (row ? "row" : "column") << " (subtracting m keeps exp from overflowing). ";
  if (op.bias)
    d << "b holds " << (row ? "cols" : "rows") << " float32 values in [-2, 2], one per " << (row ? "column" : "row") << ". ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. " << (row ? "cols" : "rows")
    << " is not necessarily a multiple of the block or warp size (one test uses " << p.sizes[1]["rows"] << " rows of "
    << p.sizes[1]["cols"] << " columns).";
  p.description = d.str();
  std::string params = op.bias ? "const float* x, const float* b, float* y, int rows, int cols" : "const float* x, float* y, int rows, int cols";
  std::string call = op.bias ? "x, b, y, rows, cols" : "x, y, rows, cols";
  std::string idx = row ? "(long long)o * cols + j" : "(long long)j * cols + o";
  std::string zc = cnum(op.scale) + " * (double)x[" + idx + "]" + (op.bias ? " + (double)b[j]" : "");
  std::string cnt = row ? "cols" : "rows";
  std::ostringstream kc;
  kc << "__global__ void gen_kernel(" << params << ") {\n  int o = blockIdx.x * blockDim.x + threadIdx.x;\n  if (o >= "
     << (row ? "rows" : "cols") << ") return;\n  double m = 0.0;\n  for (int j = 0; j < " << cnt << "; ++j) {\n    double z = " << zc
     << ";\n    if (j == 0 || z > m) m = z;\n  }\n  double s = 0.0;\n  for (int j = 0; j < " << cnt << "; ++j) s += exp(" << zc
     << " - m);\n  for (int j = 0; j < " << cnt << "; ++j)\n    y[" << idx << "] = (float)("
     << (op.variant == "log" ? "(" + zc + ") - m - log(s)" : "exp(" + zc + " - m) / s") << ");\n}\n";
  p.kernels = kc.str();
  p.launch = "  if (rows <= 0 || cols <= 0) return;\n" + launch_1d("gen_kernel", row ? "rows" : "cols", call);
  return p;
}

parts render_scan(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  p.category = "scan";
  bool row = op.axis == "row";
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {0, 1}, {-2, 2}});
  p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)}, {"y", "float*", "output", "rows*cols", ""},
            {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
  p.sizes = {{{"rows", row ? 64 : 512}, {"cols", row ? 512 : 64}},
             row ? env::size_set{{"rows", odd_size(r, 33, 99)}, {"cols", odd_size(r, 700, 3001)}}
                 : env::size_set{{"rows", odd_size(r, 700, 3001)}, {"cols", odd_size(r, 33, 99)}}};
  p.sample = {{"rows", 5}, {"cols", 67}};
  p.atol = op.reduce == "sum" ? 1e-3 : 1e-6;
  p.rtol = op.reduce == "sum" ? 1e-4 : 1e-6;
  std::string lane = row ? "row" : "column", pos = row ? "y[r, j]" : "y[i, c]";
  std::string t = row ? "x[r, t]" : "x[t, c]";
  std::string m = prose(op.map, {{"v", t}});
  std::string bound = row ? "j" : "i";
  std::string range = op.reverse ? (op.exclusive ? bound + " < t < " + (row ? "cols" : "rows") : bound + " <= t < " + (row ? "cols" : "rows"))
                                 : (op.exclusive ? "0 <= t < " + bound : "0 <= t <= " + bound);
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{"Running " + std::string(op.reduce == "sum" ? "sum" : op.reduce == "max" ? "maximum" : "minimum") + " along each " + lane,
                                       std::string(op.reverse ? "Suffix" : "Prefix") + " scan along " + lane + "s"})
    << ": x and y are rows x cols (row-major) and every " << lane << " is scanned independently"
    << (op.reverse ? ", from its last element towards its first" : "") << ":\n" << pos << " = "
    << (op.reduce == "sum" ? "the sum" : op.reduce == "max" ? "the largest value" : "the smallest value") << " of " << m
    << " over " << range << (op.exclusive ? " (0 when that range is empty)" : "") << ". ";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << defs << " ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. The scanned length is not necessarily a multiple of the block or warp size (one test uses "
    << p.sizes[1]["rows"] << " rows of " << p.sizes[1]["cols"] << " columns).";
  if (op.reduce == "sum")
    d << " Any summation order is accepted within the tolerance.";
  p.description = d.str();
  std::string cnt = row ? "cols" : "rows";
  std::string idx = row ? "(long long)o * cols + t" : "(long long)t * cols + o";
  std::string mc = cuda(op.map, {{"v", "(double)x[" + idx + "]"}});
  std::ostringstream kc;
  kc << "__global__ void gen_kernel(const float* x, float* y, int rows, int cols) {\n  int o = blockIdx.x * blockDim.x + threadIdx.x;\n"
     << "  if (o >= " << (row ? "rows" : "cols") << ") return;\n  double acc = 0.0;\n  for (int q = 0; q < " << cnt << "; ++q) {\n"
     << "    int t = " << (op.reverse ? cnt + " - 1 - q" : "q") << ";\n    double m = " << mc << ";\n";
  if (op.reduce == "sum")
    kc << (op.exclusive ? "    y[" + idx + "] = (float)acc;\n    acc += m;\n" : "    acc += m;\n    y[" + idx + "] = (float)acc;\n");
  else
    kc << "    if (q == 0 || m " << (op.reduce == "max" ? ">" : "<") << " acc) acc = m;\n    y[" << idx << "] = (float)acc;\n";
  kc << "  }\n}\n";
  p.kernels = kc.str();
  p.launch = "  if (rows <= 0 || cols <= 0) return;\n" + launch_1d("gen_kernel", row ? "rows" : "cols", "x, y, rows, cols");
  return p;
}

parts render_pool(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  p.category = "pooling";
  const int k = op.window, s = op.stride;
  std::string ol = "((L-" + std::to_string(k) + ")/" + std::to_string(s) + "+1)";
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {-2, 2}, {0, 4}});
  p.args = {{"x", "const float*", "input", "C*L", uniform(rg)}, {"y", "float*", "output", "C*" + ol, ""},
            {"C", "int", "", "", ""}, {"L", "int", "", "", ""}};
  p.sizes = {{{"C", 32}, {"L", 2048}}, {{"C", odd_size(r, 17, 61)}, {"L", odd_size(r, 700, 3001)}}};
  p.sample = {{"C", 3}, {"L", 101}};
  p.atol = 1e-5;
  p.rtol = 1e-5;
  std::string w = "x[c, o * " + std::to_string(s) + " + t]";
  std::string red = op.reduce == "max" ? "the largest of " + w
                  : op.reduce == "min" ? "the smallest of " + w
                  : op.reduce == "avg" ? "the mean of " + w
                  : op.reduce == "sum" ? "the sum of " + w
                  : op.reduce == "l2" ? "sqrt of the sum of (" + w + ")^2"
                                      : "the largest |" + w + "|";
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{"1-D pooling over each channel", "Sliding-window reduction along each row", "Windowed " + op.reduce + " pooling in one dimension"})
    << " (no padding): x is C x L and y is C x OL, both row-major, with OL = (L - " << k << ") / " << s
    << " + 1 (integer division). The window is " << k << " wide and moves by " << s << ":\ny[c, o] = " << red
    << " over 0 <= t < " << k << ". ";
  d << (s < k ? "Windows overlap; " : s > k ? "Windows skip inputs; " : "Windows tile the row; ")
    << "inputs past the last full window are ignored. x lies in [" << num(rg.lo) << ", " << num(rg.hi)
    << "]. L and OL are not multiples of a block size in one test (C = " << p.sizes[1]["C"] << ", L = " << p.sizes[1]["L"] << ").";
  p.description = d.str();
  std::ostringstream kc;
  kc << "__global__ void gen_kernel(const float* x, float* y, int C, int L) {\n  const int out_l = (L - " << k << ") / " << s
     << " + 1;\n  long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (idx >= (long long)C * out_l) return;\n"
     << "  const int c = (int)(idx / out_l), o = (int)(idx % out_l);\n  const float* xc = x + (long long)c * L + (long long)o * " << s << ";\n"
     << "  double acc = 0.0;\n  for (int t = 0; t < " << k << "; ++t) {\n    double v = (double)xc[t];\n";
  if (op.reduce == "max") kc << "    if (t == 0 || v > acc) acc = v;\n";
  else if (op.reduce == "min") kc << "    if (t == 0 || v < acc) acc = v;\n";
  else if (op.reduce == "l2") kc << "    acc += v * v;\n";
  else if (op.reduce == "linf") kc << "    if (fabs(v) > acc) acc = fabs(v);\n";
  else kc << "    acc += v;\n";
  kc << "  }\n";
  if (op.reduce == "avg") kc << "  acc /= " << k << ".0;\n";
  if (op.reduce == "l2") kc << "  acc = sqrt(acc);\n";
  kc << "  y[idx] = (float)acc;\n}\n";
  p.kernels = kc.str();
  p.launch = "  if (C <= 0 || L < " + std::to_string(k) + ") return;\n" + launch_1d("gen_kernel", "C * " + ol, "x, y, C, L");
  return p;
}

parts render_matmul(const gen_op& op, rng& r) {
  parts p;
  p.level = 3;
  p.category = "fused";
  p.args = {{"A", "const float*", "input", "M*K", "uniform(-1, 1)"}, {"B", "const float*", "input", "K*N", "uniform(-1, 1)"},
            {"bias", "const float*", "input", "N", "uniform(-1, 1)"}, {"out", "float*", "output", "M*N", ""},
            {"M", "int", "", "", ""}, {"N", "int", "", "", ""}, {"K", "int", "", "", ""}};
  p.sizes = {{{"M", 64}, {"N", 64}, {"K", 64}}, {{"M", odd_size(r, 33, 97)}, {"N", odd_size(r, 33, 97)}, {"K", odd_size(r, 17, 129)}}};
  p.sample = {{"M", 9}, {"N", 11}, {"K", 37}};
  p.atol = 1e-3;
  p.rtol = 1e-3;
  std::ostringstream d;
  d << r.pick(std::vector<std::string>{"Matrix product with a fused epilogue", "GEMM followed by an elementwise epilogue", "Multiply, then transform each entry"})
    << ": A is M x K, B is K x N, bias holds N values and out is M x N, all row-major. For every m, n let acc = sum over k in [0, K) of A[m, k] * B[k, n]; then\nout[m, n] = "
    << prose(op.body, {{"acc", "acc"}, {"bias", "bias[n]"}}) << ". ";
  auto defs = definitions({&op.body});
  if (!defs.empty())
    d << defs << " ";
  d << "A, B and bias lie in [-1, 1]. M, N and K are not multiples of a tile size in one test (M = " << p.sizes[1]["M"]
    << ", N = " << p.sizes[1]["N"] << ", K = " << p.sizes[1]["K"] << "); any summation order is accepted within the tolerance.";
  p.description = d.str();
  p.kernels = "__global__ void gen_kernel(const float* A, const float* B, const float* bias, float* out, int M, int N, int K) {\n"
              "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= (long long)M * N) return;\n"
              "  int m = (int)(i / N), n = (int)(i % N);\n  double acc = 0.0;\n"
              "  for (int k = 0; k < K; ++k) acc += (double)A[(long long)m * K + k] * (double)B[(long long)k * N + n];\n"
              "  out[i] = (float)" + cuda(op.body, {{"acc", "acc"}, {"bias", "(double)bias[n]"}}) + ";\n}\n";
  p.launch = "  if (M <= 0 || N <= 0 || K <= 0) return;\n" + launch_1d("gen_kernel", "M * N", "A, B, bias, out, M, N, K");
  return p;
}

// ---- layout: transpose, permute, gather, slice, concat ----

bool is_copy(const expr& map) { return to_text(canonical(map)) == "v"; }

// The i-th index of a strided slice, in prose ("1 + 2 * i") and C.
std::string affine(int start, int step, const std::string& var) {
  std::string t = step == 1 ? var : std::to_string(step) + " * " + var;
  return start == 0 ? t : std::to_string(start) + " + " + t;
}
// The number of indices start, start + step, ... below `bound`: (bound - start + step - 1) / step,
// in prose (spaced) or as a shape expression (unspaced).
std::string slice_count(const std::string& bound, int start, int step, bool spaced) {
  const std::string sp = spaced ? " " : "";
  if (step == 1)
    return start == 0 ? bound : "(" + bound + sp + "-" + sp + std::to_string(start) + ")";
  int d = step - 1 - start;
  std::string in = d == 0 ? bound : bound + sp + (d > 0 ? "+" : "-") + sp + std::to_string(d > 0 ? d : -d);
  return "(" + (d == 0 ? in : "(" + in + ")") + sp + "/" + sp + std::to_string(step) + ")";
}
std::string numpy_slice(int start, int step) {
  return (start == 0 ? "" : std::to_string(start)) + (step == 1 ? ":" : "::" + std::to_string(step));
}

std::string kernel_text(const std::string& params, const std::string& pre, const std::string& total,
                        const std::string& body) {
  return "__global__ void gen_kernel(" + params + ") {\n" + pre
         + "  long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (o >= " + total
         + ") return;\n" + body + "}\n";
}

parts render_layout(const gen_op& op, rng& r) {
  parts p;
  p.level = 1;
  p.category = "layout";
  const bool copy = is_copy(op.map);
  p.atol = copy ? 0 : 1e-5;
  p.rtol = copy ? 0 : 1e-5;
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {-2, 2}, {0, 4}});
  auto mp = [&](const std::string& e) { return prose(op.map, {{"v", e}}); };
  auto mc = [&](const std::string& e) { return cuda(op.map, {{"v", e}}); };
  auto defs = definitions({&op.map});
  const std::string exact = copy ? "; values are copied exactly." : ".";
  std::ostringstream d;
  std::string params, call, total, pre, body;
  auto size_text = [&](const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size(); ++i)
      s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i] + " = " + std::to_string(p.sizes[1].at(names[i]));
    return s;
  };
  if (op.variant == "transpose") {
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)}, {"y", "float*", "output", "rows*cols", ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
    p.sizes = {{{"rows", r.pick(std::vector<int>{256, 512})}, {"cols", r.pick(std::vector<int>{384, 640})}},
               {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 101, 399)}}};
    p.sample = {{"rows", 13}, {"cols", 29}};
    d << r.pick(std::vector<std::string>{"Matrix transpose", "Transpose a matrix", "Swap the rows and columns of a matrix"})
      << (copy ? "" : ", transforming every element") << ": x is rows x cols and y is cols x rows, both row-major "
      << "(y[j, i] is y[j * rows + i]); for every 0 <= i < rows and 0 <= j < cols,\ny[j, i] = " << mp("x[i, j]") << ".\n";
    params = "const float* x, float* y, int rows, int cols";
    call = "x, y, rows, cols";
    total = "(long long)rows * cols";
    body = "  const int j = (int)(o / rows), i = (int)(o % rows);\n  y[o] = (float)" + mc("(double)x[(long long)i * cols + j]") + ";\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. rows and cols are arbitrary positive ints, not multiples of a tile size (one test uses "
      << p.sizes[1]["rows"] << " x " << p.sizes[1]["cols"] << ")" << exact;
  } else if (op.variant == "permute") {
    const std::vector<std::string> dims{"A", "B", "C"}, idx{"i", "j", "k"};
    std::vector<int> pm;
    for (char ch : op.perm)
      pm.push_back(ch - '0');
    p.args = {{"x", "const float*", "input", "A*B*C", uniform(rg)}, {"y", "float*", "output", "A*B*C", ""},
              {"A", "int", "", "", ""}, {"B", "int", "", "", ""}, {"C", "int", "", "", ""}};
    p.sizes = {{{"A", 8}, {"B", 48}, {"C", 128}},
               {{"A", odd_size(r, 5, 13)}, {"B", odd_size(r, 33, 99)}, {"C", odd_size(r, 101, 199)}}};
    p.sample = {{"A", 3}, {"B", 5}, {"C", 7}};
    std::string yshape, yidx, torch_perm;
    for (int q = 0; q < 3; ++q) {
      yshape += (q ? " x " : "") + dims[static_cast<std::size_t>(pm[static_cast<std::size_t>(q)])];
      yidx += (q ? ", " : "") + idx[static_cast<std::size_t>(pm[static_cast<std::size_t>(q)])];
      torch_perm += (q ? ", " : "") + std::to_string(pm[static_cast<std::size_t>(q)]);
    }
    d << r.pick(std::vector<std::string>{"Permute the axes of a 3-D tensor", "3-D axis permutation", "Reorder the dimensions of a 3-D array"})
      << " (as x.permute(" << torch_perm << ")" << (copy ? "" : ", then an elementwise map") << "): x is A x B x C and y is " << yshape
      << ", both row-major (contiguous, last index fastest); for every 0 <= i < A, 0 <= j < B and 0 <= k < C,\ny[" << yidx
      << "] = " << mp("x[i, j, k]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. No size is a multiple of a tile size in one test ("
      << size_text({"A", "B", "C"}) << ")" << exact;
    params = "const float* x, float* y, int A, int B, int C";
    call = "x, y, A, B, C";
    total = "(long long)A * B * C";
    const std::string n1 = dims[static_cast<std::size_t>(pm[1])], n2 = dims[static_cast<std::size_t>(pm[2])];
    body = "  const int o2 = (int)(o % " + n2 + "), o1 = (int)((o / " + n2 + ") % " + n1 + "), o0 = (int)(o / ((long long)"
           + n1 + " * " + n2 + "));\n";
    std::string coord[3];
    for (int q = 0; q < 3; ++q)
      coord[pm[static_cast<std::size_t>(q)]] = "o" + std::to_string(q);
    body += "  const int i = " + coord[0] + ", j = " + coord[1] + ", k = " + coord[2] + ";\n";
    body += "  y[o] = (float)" + mc("(double)x[((long long)i * B + j) * C + k]") + ";\n";
  } else if (op.variant == "gather_rows" || op.variant == "gather_cols") {
    p.level = 2;
    p.category = "indexing";
    const bool rows = op.variant == "gather_rows";
    if (rows)
      p.sizes = {{{"rows", 128}, {"cols", 512}, {"n", 384}},
                 {{"rows", odd_size(r, 101, 127)}, {"cols", odd_size(r, 301, 999)}, {"n", odd_size(r, 101, 399)}}};
    else
      p.sizes = {{{"rows", 256}, {"cols", 128}, {"n", 384}},
                 {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 101, 127)}, {"n", odd_size(r, 101, 399)}}};
    const std::string src = rows ? "rows" : "cols";
    const long long hi = std::min(p.sizes[0][src], p.sizes[1][src]) - 1;
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)},
              {"idx", "const int*", "input", "n", "randint(0, " + std::to_string(hi) + ")"},
              {"out", "float*", "output", rows ? "n*cols" : "rows*n", ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}, {"n", "int", "", "", ""}};
    p.sample = rows ? env::size_set{{"rows", hi + 1}, {"cols", 7}, {"n", 23}} : env::size_set{{"rows", 5}, {"cols", hi + 1}, {"n", 31}};
    if (rows)
      d << r.pick(std::vector<std::string>{"Gather rows by index", "Row gather (an embedding-style lookup)", "Select rows of a matrix by an index array"})
        << (copy ? " (as torch.index_select(x, 0, idx))" : ", transforming every element")
        << ": x is rows x cols, idx holds n int32 row indices, each in [0, rows) (indices repeat and come in no particular order), and out is n x cols, all row-major; for every 0 <= i < n and 0 <= j < cols,\nout[i, j] = "
        << mp("x[idx[i], j]") << ".\n";
    else
      d << r.pick(std::vector<std::string>{"Gather columns by index", "Column gather", "Select columns of a matrix by an index array"})
        << (copy ? " (as torch.index_select(x, 1, idx))" : ", transforming every element")
        << ": x is rows x cols, idx holds n int32 column indices, each in [0, cols) (indices repeat and come in no particular order), and out is rows x n, all row-major; for every 0 <= r < rows and 0 <= i < n,\nout[r, i] = "
        << mp("x[r, idx[i]]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. The sizes are not multiples of a block or tile size in one test ("
      << size_text({"rows", "cols", "n"}) << ")" << exact;
    params = "const float* x, const int* idx, float* out, int rows, int cols, int n";
    call = "x, idx, out, rows, cols, n";
    if (rows) {
      total = "(long long)n * cols";
      body = "  const int i = (int)(o / cols), j = (int)(o % cols);\n  out[o] = (float)" + mc("(double)x[(long long)idx[i] * cols + j]") + ";\n";
    } else {
      total = "(long long)rows * n";
      body = "  const int r = (int)(o / n), i = (int)(o % n);\n  out[o] = (float)" + mc("(double)x[(long long)r * cols + idx[i]]") + ";\n";
    }
  } else if (op.variant == "slice") {
    const std::string orow = slice_count("rows", op.start0, op.step0, false), ocol = slice_count("cols", op.start1, op.step1, false);
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)}, {"y", "float*", "output", orow + "*" + ocol, ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
    p.sizes = {{{"rows", r.pick(std::vector<int>{256, 512})}, {"cols", r.pick(std::vector<int>{512, 768})}},
               {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 301, 999)}}};
    p.sample = {{"rows", 17}, {"cols", 23}};
    auto strip = [](std::string t) { return t.size() > 2 && t.front() == '(' && t.back() == ')' ? t.substr(1, t.size() - 2) : t; };
    d << r.pick(std::vector<std::string>{"Strided slice of a matrix", "Copy a strided sub-matrix", "Take every few rows and columns"})
      << " (as x[" << numpy_slice(op.start0, op.step0) << ", " << numpy_slice(op.start1, op.step1) << "] in NumPy"
      << (copy ? "" : ", then an elementwise map") << "): x is rows x cols and y is OR x OC, both row-major, with OR = "
      << strip(slice_count("rows", op.start0, op.step0, true)) << " and OC = " << strip(slice_count("cols", op.start1, op.step1, true))
      << " (integer division: y keeps the rows " << op.start0 << ", " << op.start0 + op.step0 << ", " << op.start0 + 2 * op.step0
      << ", ... that are below rows and the columns " << op.start1 << ", " << op.start1 + op.step1 << ", " << op.start1 + 2 * op.step1
      << ", ... that are below cols); for every 0 <= i < OR and 0 <= j < OC,\ny[i, j] = "
      << mp("x[" + affine(op.start0, op.step0, "i") + ", " + affine(op.start1, op.step1, "j") + "]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. rows and cols are not multiples of a tile size in one test ("
      << size_text({"rows", "cols"}) << ")" << exact;
    params = "const float* x, float* y, int rows, int cols";
    call = "x, y, rows, cols";
    pre = "  const int OR = " + orow + ", OC = " + ocol + ";\n";
    total = "(long long)OR * OC";
    body = "  const int i = (int)(o / OC), j = (int)(o % OC);\n  y[o] = (float)"
           + mc("(double)x[(long long)(" + affine(op.start0, op.step0, "i") + ") * cols + " + affine(op.start1, op.step1, "j") + "]") + ";\n";
  } else { // concat
    range_t rb = rg.lo == -1 ? range_t{2, 3} : range_t{-1, 1};
    const bool by_rows = op.axis == "row";
    if (by_rows) {
      p.args = {{"a", "const float*", "input", "ra*cols", uniform(rg)}, {"b", "const float*", "input", "rb*cols", uniform(rb)},
                {"y", "float*", "output", "(ra+rb)*cols", ""}, {"ra", "int", "", "", ""}, {"rb", "int", "", "", ""}, {"cols", "int", "", "", ""}};
      p.sizes = {{{"ra", 128}, {"rb", 256}, {"cols", 512}},
                 {{"ra", odd_size(r, 33, 199)}, {"rb", odd_size(r, 33, 199)}, {"cols", odd_size(r, 301, 999)}}};
      p.sample = {{"ra", 5}, {"rb", 7}, {"cols", 13}};
      d << r.pick(std::vector<std::string>{"Stack two matrices vertically", "Concatenate along rows", "Join two matrices one above the other"})
        << (copy ? " (as torch.cat((a, b), dim=0))" : ", transforming every element")
        << ": a is ra x cols, b is rb x cols and y is (ra + rb) x cols, all row-major; for every column 0 <= j < cols,\ny[i, j] = "
        << mp("a[i, j]") << " for 0 <= i < ra and y[i, j] = " << mp("b[i - ra, j]") << " for ra <= i < ra + rb.\n";
      if (!defs.empty())
        d << defs << " ";
      d << "a lies in [" << num(rg.lo) << ", " << num(rg.hi) << "] and b in [" << num(rb.lo) << ", " << num(rb.hi)
        << "]. The sizes are not multiples of a tile size in one test (" << size_text({"ra", "rb", "cols"}) << ")" << exact;
      params = "const float* a, const float* b, float* y, int ra, int rb, int cols";
      call = "a, b, y, ra, rb, cols";
      total = "(long long)(ra + rb) * cols";
      body = "  const int i = (int)(o / cols), j = (int)(o % cols);\n"
             "  const double v = i < ra ? (double)a[(long long)i * cols + j] : (double)b[(long long)(i - ra) * cols + j];\n"
             "  y[o] = (float)" + mc("v") + ";\n";
    } else {
      p.args = {{"a", "const float*", "input", "rows*ca", uniform(rg)}, {"b", "const float*", "input", "rows*cb", uniform(rb)},
                {"y", "float*", "output", "rows*(ca+cb)", ""}, {"rows", "int", "", "", ""}, {"ca", "int", "", "", ""}, {"cb", "int", "", "", ""}};
      p.sizes = {{{"rows", 256}, {"ca", 384}, {"cb", 128}},
                 {{"rows", odd_size(r, 101, 299)}, {"ca", odd_size(r, 101, 399)}, {"cb", odd_size(r, 33, 199)}}};
      p.sample = {{"rows", 5}, {"ca", 13}, {"cb", 7}};
      d << r.pick(std::vector<std::string>{"Place two matrices side by side", "Concatenate along columns", "Join two matrices left and right"})
        << (copy ? " (as torch.cat((a, b), dim=1))" : ", transforming every element")
        << ": a is rows x ca, b is rows x cb and y is rows x (ca + cb), all row-major; for every row 0 <= r < rows,\ny[r, j] = "
        << mp("a[r, j]") << " for 0 <= j < ca and y[r, j] = " << mp("b[r, j - ca]") << " for ca <= j < ca + cb.\n";
      if (!defs.empty())
        d << defs << " ";
      d << "a lies in [" << num(rg.lo) << ", " << num(rg.hi) << "] and b in [" << num(rb.lo) << ", " << num(rb.hi)
        << "]. The sizes are not multiples of a tile size in one test (" << size_text({"rows", "ca", "cb"}) << ")" << exact;
      params = "const float* a, const float* b, float* y, int rows, int ca, int cb";
      call = "a, b, y, rows, ca, cb";
      total = "(long long)rows * (ca + cb)";
      body = "  const int w = ca + cb;\n  const int r = (int)(o / w), j = (int)(o % w);\n"
             "  const double v = j < ca ? (double)a[(long long)r * ca + j] : (double)b[(long long)r * cb + (j - ca)];\n"
             "  y[o] = (float)" + mc("v") + ";\n";
    }
  }
  p.description = d.str();
  p.kernels = kernel_text(params, pre, total, body);
  // The launch: one thread per output element.
  std::string sizes_ok;
  for (auto& a : p.args)
    if (a.ctype == "int")
      sizes_ok += (sizes_ok.empty() ? "" : " || ") + a.name + " <= 0";
  std::string count = total;
  if (op.variant == "slice")
    count = "(" + slice_count("rows", op.start0, op.step0, false) + ") * (" + slice_count("cols", op.start1, op.step1, false) + ")";
  p.launch = "  if (" + sizes_ok + ") return;\n" + launch_1d("gen_kernel", count, call);
  return p;
}

// ---- stencil: 3x3 stencils with a border rule, 2-D pooling ----

std::string stencil_formula(const std::string& v) {
  if (v == "box") return "(the sum of N(a, b) over a, b in {-1, 0, 1}) / 9 (the mean of the 3x3 neighbourhood)";
  if (v == "gauss")
    return "(N(-1, -1) + 2 * N(-1, 0) + N(-1, 1) + 2 * N(0, -1) + 4 * N(0, 0) + 2 * N(0, 1) + N(1, -1) + 2 * N(1, 0) + N(1, 1)) / 16 (a 3x3 Gaussian blur)";
  if (v == "cross") return "(N(0, 0) + N(-1, 0) + N(1, 0) + N(0, -1) + N(0, 1)) / 5 (the mean of the pixel and its 4 direct neighbours)";
  if (v == "laplace4") return "N(-1, 0) + N(1, 0) + N(0, -1) + N(0, 1) - 4 * N(0, 0) (a 4-neighbour Laplacian)";
  if (v == "laplace8") return "(the sum of the 8 neighbours N(a, b) with (a, b) != (0, 0)) - 8 * N(0, 0) (an 8-neighbour Laplacian)";
  if (v == "sharpen") return "5 * N(0, 0) - N(-1, 0) - N(1, 0) - N(0, -1) - N(0, 1) (a sharpening filter)";
  if (v == "sobel_x") return "N(-1, 1) + 2 * N(0, 1) + N(1, 1) - N(-1, -1) - 2 * N(0, -1) - N(1, -1) (a horizontal Sobel gradient)";
  return "N(1, -1) + 2 * N(1, 0) + N(1, 1) - N(-1, -1) - 2 * N(-1, 0) - N(-1, 1) (a vertical Sobel gradient)";
}

parts render_stencil(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {0, 1}, {-2, 2}});
  std::ostringstream d;
  std::string pre, body, total = "(long long)C * OH * OW";
  auto size_note = [&] {
    return "H and W are not multiples of a tile size in one test (C = " + std::to_string(p.sizes[1]["C"]) + ", H = "
           + std::to_string(p.sizes[1]["H"]) + ", W = " + std::to_string(p.sizes[1]["W"]) + ").";
  };
  if (op.variant == "pool2d") {
    p.category = "pooling";
    const int k = op.window, s = op.stride;
    const std::string oh = "((H-" + std::to_string(k) + ")/" + std::to_string(s) + "+1)";
    const std::string ow = "((W-" + std::to_string(k) + ")/" + std::to_string(s) + "+1)";
    p.args = {{"x", "const float*", "input", "C*H*W", uniform(rg)}, {"y", "float*", "output", "C*" + oh + "*" + ow, ""},
              {"C", "int", "", "", ""}, {"H", "int", "", "", ""}, {"W", "int", "", "", ""}};
    p.sizes = {{{"C", 8}, {"H", 128}, {"W", 160}}, {{"C", odd_size(r, 5, 13)}, {"H", odd_size(r, 61, 199)}, {"W", odd_size(r, 61, 299)}}};
    p.sample = {{"C", 2}, {"H", 11}, {"W", 14}};
    p.atol = 1e-5;
    p.rtol = 1e-5;
    const std::string w = "x[c, i * " + std::to_string(s) + " + a, j * " + std::to_string(s) + " + b]";
    const std::string red = op.reduce == "max" ? "the largest of " + w
                          : op.reduce == "min" ? "the smallest of " + w
                          : op.reduce == "avg" ? "the mean of " + w + " (the sum divided by " + std::to_string(k * k) + ")"
                          : op.reduce == "sum" ? "the sum of " + w
                          : op.reduce == "l2"  ? "sqrt of the sum of (" + w + ")^2"
                                               : "the largest |" + w + "|";
    const std::string kind = op.reduce == "avg" ? "average" : op.reduce == "l2" ? "L2" : op.reduce == "linf" ? "max-abs" : op.reduce;
    d << r.pick(std::vector<std::string>{"2-D " + kind + " pooling over each channel", "Windowed " + kind + " reduction over 2-D windows",
                                         "Pool every channel of an image with " + std::to_string(k) + " x " + std::to_string(k) + " windows"})
      << " (batch 1, no padding): x is C x H x W and y is C x OH x OW with OH = (H - " << k << ") / " << s << " + 1 and OW = (W - "
      << k << ") / " << s << " + 1 (integer division; trailing rows and columns that do not fill a window are dropped), all row-major. "
      << "The window is " << k << " x " << k << " and moves by " << s << " in both directions:\ny[c, i, j] = " << red
      << " over 0 <= a, b < " << k << ".\n";
    d << (s < k ? "Windows overlap. " : s > k ? "Windows skip some rows and columns. " : "Windows tile the image. ")
      << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. " << size_note();
    pre = "  const int OH = (H - " + std::to_string(k) + ") / " + std::to_string(s) + " + 1, OW = (W - " + std::to_string(k) + ") / "
          + std::to_string(s) + " + 1;\n";
    std::ostringstream b;
    b << "  const int c = (int)(o / ((long long)OH * OW)), i = (int)((o / OW) % OH), j = (int)(o % OW);\n"
      << "  double acc = 0.0;\n  for (int a = 0; a < " << k << "; ++a)\n    for (int b = 0; b < " << k << "; ++b) {\n"
      << "      const double v = (double)x[((long long)c * H + i * " << s << " + a) * W + j * " << s << " + b];\n";
    if (op.reduce == "max") b << "      if ((a == 0 && b == 0) || v > acc) acc = v;\n";
    else if (op.reduce == "min") b << "      if ((a == 0 && b == 0) || v < acc) acc = v;\n";
    else if (op.reduce == "l2") b << "      acc += v * v;\n";
    else if (op.reduce == "linf") b << "      if (fabs(v) > acc) acc = fabs(v);\n";
    else b << "      acc += v;\n";
    b << "    }\n";
    if (op.reduce == "avg") b << "  acc /= " << k * k << ".0;\n";
    if (op.reduce == "l2") b << "  acc = sqrt(acc);\n";
    b << "  y[o] = (float)acc;\n";
    body = b.str();
    p.kernels = kernel_text("const float* x, float* y, int C, int H, int W", pre, total, body);
    p.launch = "  if (C <= 0 || H < " + std::to_string(k) + " || W < " + std::to_string(k) + ") return;\n"
               + launch_1d("gen_kernel", "C * " + oh + " * " + ow, "x, y, C, H, W");
    p.description = d.str();
    return p;
  }
  p.category = "convolution";
  const bool valid = op.border == "valid";
  p.args = {{"x", "const float*", "input", "C*H*W", uniform(rg)}, {"y", "float*", "output", valid ? "C*(H-2)*(W-2)" : "C*H*W", ""},
            {"C", "int", "", "", ""}, {"H", "int", "", "", ""}, {"W", "int", "", "", ""}};
  p.sizes = {{{"C", 4}, {"H", 192}, {"W", 256}}, {{"C", odd_size(r, 3, 7)}, {"H", odd_size(r, 67, 199)}, {"W", odd_size(r, 101, 299)}}};
  p.sample = {{"C", 2}, {"H", 9}, {"W", 13}};
  p.atol = 1e-4;
  p.rtol = 1e-4;
  const bool copy = is_copy(op.map);
  d << r.pick(std::vector<std::string>{"3x3 stencil over each channel", "A 3x3 neighbourhood filter on every image plane",
                                       "2-D stencil, one image per channel"})
    << ": x is C x H x W (C images of H rows and W columns) and y is " << (valid ? "C x (H - 2) x (W - 2)" : "C x H x W")
    << ", both row-major. For every channel c and position (i, j) of y let N(a, b) = "
    << (valid ? "x[c, i + 1 + a, j + 1 + b]" : "x[c, i + a, j + b]") << ", the neighbour a rows down and b columns right of "
    << (valid ? "x[c, i + 1, j + 1]" : "x[c, i, j]") << " (a, b in {-1, 0, 1}), and\nv = " << stencil_formula(op.variant) << ";\nthen y[c, i, j] = "
    << (copy ? "v" : prose(op.map, {{"v", "v"}})) << ".\n";
  if (op.border == "zero")
    d << "Border rule: neighbours outside the image count as 0 (zero padding), i.e. N(a, b) = 0 when i + a is outside [0, H) or j + b is outside [0, W). ";
  else if (op.border == "clamp")
    d << "Border rule: a neighbour outside the image reads the nearest edge pixel (replicate padding): its row index is clamped to [0, H - 1] and its column index to [0, W - 1]. ";
  else if (op.border == "mirror")
    d << "Border rule: a neighbour outside the image is reflected about the edge without repeating the edge (reflect padding): row -1 reads row 1 and row H reads row H - 2, likewise column -1 reads column 1 and column W reads column W - 2. ";
  else
    d << "Border rule: only positions whose whole 3x3 neighbourhood lies inside x are computed (no padding), so y is 2 rows and 2 columns smaller than x. ";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << defs << " ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. " << size_note();
  p.description = d.str();
  pre = valid ? "  const int OH = H - 2, OW = W - 2;\n" : "  const int OH = H, OW = W;\n";
  auto w = stencil_weights(op.variant);
  std::string wl;
  for (std::size_t q = 0; q < w.size(); ++q)
    wl += (q ? ", " : "") + cnum(w[q]);
  std::ostringstream b;
  b << "  const int c = (int)(o / ((long long)OH * OW)), i = (int)((o / OW) % OH), j = (int)(o % OW);\n"
    << "  const double w[9] = {" << wl << "};\n  double v = 0.0;\n  for (int a = -1; a <= 1; ++a)\n    for (int b = -1; b <= 1; ++b) {\n"
    << (valid ? "      int rr = i + 1 + a, cc = j + 1 + b;\n" : "      int rr = i + a, cc = j + b;\n");
  if (op.border == "zero")
    b << "      if (rr < 0 || rr > H - 1 || cc < 0 || cc > W - 1) continue;\n";
  else if (op.border == "clamp")
    b << "      rr = rr < 0 ? 0 : (rr > H - 1 ? H - 1 : rr);\n      cc = cc < 0 ? 0 : (cc > W - 1 ? W - 1 : cc);\n";
  else if (op.border == "mirror")
    b << "      rr = rr < 0 ? -rr : (rr > H - 1 ? 2 * H - 2 - rr : rr);\n      cc = cc < 0 ? -cc : (cc > W - 1 ? 2 * W - 2 - cc : cc);\n";
  b << "      v += w[(a + 1) * 3 + (b + 1)] * (double)x[((long long)c * H + rr) * W + cc];\n    }\n";
  b << "  y[o] = (float)" << cuda(op.map, {{"v", "v"}}) << ";\n";
  body = b.str();
  p.kernels = kernel_text("const float* x, float* y, int C, int H, int W", pre, total, body);
  p.launch = std::string("  if (C <= 0 || H < ") + (valid ? "3" : "2") + " || W < " + (valid ? "3" : "2") + ") return;\n"
             + launch_1d("gen_kernel", valid ? "C * (H - 2) * (W - 2)" : "C * H * W", "x, y, C, H, W");
  return p;
}

parts render_parts(const gen_op& op, rng& r) {
  switch (op.fam) {
    case family::ew: return render_ew(op, r);
    case family::red: return render_red(op, r);
    case family::bcast: return render_bcast(op, r);
    case family::softmax: return render_softmax(op, r);
    case family::scan: return render_scan(op, r);
    case family::pool: return render_pool(op, r);
    case family::matmul: return render_matmul(op, r);
    case family::layout: return render_layout(op, r);
    case family::stencil: return render_stencil(op, r);
  }
  return {};
}

// Wraps prose at about 100 columns (the suite's width).
std::string wrap(const std::string& text) {
  std::string out, line;
  std::istringstream lines(text);
  std::string para;
  while (std::getline(lines, para)) {
    std::istringstream words(para);
    std::string w;
    line.clear();
    while (words >> w) {
      if (!line.empty() && line.size() + 1 + w.size() > 100) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + w;
    }
    if (!line.empty())
      out += line + "\n";
  }
  return out;
}

std::string toml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '\\' || ch == '"')
      o += '\\';
    o += ch;
  }
  return o;
}

std::string render_toml(const std::string& name, gen_kind kind, const parts& p, const std::string& sig) {
  std::ostringstream t;
  t << "# Generated by leap's task generator (env/taskgen); regenerate, do not edit.\n";
  t << "name = \"" << name << "\"\nlevel = " << p.level << "\nsplit = \"" << (kind == gen_kind::train ? "train" : "eval")
    << "\"\ncategory = \"" << p.category << "\"\n";
  t << "description = \"\"\"\n" << toml_escape(wrap(p.description)) << closing()[0] << "\n" << closing()[1] << "\n\"\"\"\n";
  t << "signature = '" << sig << "'\nreference = \"reference.cu\"\nallowed_libraries = []\n";
  char b[64];
  std::snprintf(b, sizeof b, "atol = %g\nrtol = %g\n", p.atol, p.rtol);
  t << b;
  for (auto& a : p.args) {
    t << "\n[[args]]\nname = \"" << a.name << "\"\n";
    if (a.ctype != "int") {
      t << "shape = \"" << a.shape << "\"\nrole = \"" << a.role << "\"\n";
      if (a.role == "input")
        t << "init = \"" << a.init << "\"\n";
    }
  }
  for (auto& s : p.sizes) {
    t << "\n[[sizes]]\n";
    for (auto& a : p.args)
      if (a.ctype == "int")
        t << a.name << " = " << s.at(a.name) << "\n";
  }
  return t.str();
}

const char* ir_marker = "// leap-taskgen-op: ";

std::string signature_of(const parts& p) {
  std::string params;
  for (auto& a : p.args)
    params += (params.empty() ? "" : ", ") + a.ctype + " " + a.name;
  return "extern \"C\" void solution(" + params + ")";
}

std::string render_reference(const std::string& name, const gen_op& op, const parts& p) {
  std::ostringstream s;
  s << ir_marker << serialize(op) << "\n";
  const bool in_double = p.kernels.find("double") != std::string::npos;
  s << "// Reference for generated task " << name << ": naive and correct, computed in "
    << (in_double ? "double" : "float32 as the description writes it") << ".\n"
    << "// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.\n"
    << "#include <cuda_runtime.h>\n#include <math.h>\n\n";
  bool needs_helpers = p.kernels.find("g_") != std::string::npos;
  if (needs_helpers)
    s << cuda_helpers << "\n";
  s << p.kernels << "\n" << signature_of(p) << " {\n" << p.launch << "}\n";
  return s.str();
}

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

// The paths (child indices from the root) of every call node of `e`, parents first.
void call_paths(const expr& e, std::vector<std::size_t>& path, std::vector<std::vector<std::size_t>>& out) {
  if (e.kind == expr::call)
    out.push_back(path);
  for (std::size_t i = 0; i < e.kids.size(); ++i) {
    path.push_back(i);
    call_paths(e.kids[i], path, out);
    path.pop_back();
  }
}
template <class E>
E& node_at(E& e, const std::vector<std::size_t>& path) {
  E* x = &e;
  for (auto i : path)
    x = &x->kids[i];
  return *x;
}

result<void> check_parts(const gen_op& op, const parts& p) {
  auto in = sample_inputs(p, 0x5eed);
  auto want = eval_op<double>(op, p.sample, in);
  bool is_int = op.fam == family::red && (op.reduce == "argmax" || op.reduce == "argmin");
  auto tol = [&](const std::vector<double>& got) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      double g = i < got.size() ? got[i] : 0;
      if (is_int ? g != want[i] : !(std::fabs(g - want[i]) <= p.atol + p.rtol * std::fabs(want[i])))
        return false;
    }
    return true;
  };
  for (double w : want)
    if (!std::isfinite(w) || std::fabs(w) > 1e4)
      return make_error("an expected output is not finite or exceeds 1e4 in magnitude");
  char t[64];
  std::snprintf(t, sizeof t, " (atol %g, rtol %g)", p.atol, p.rtol);
  if (tol(std::vector<double>(want.size(), 0.0)))
    return make_error(std::string("an all-zero output passes the tolerance") + t);
  double mean = 0;
  for (double w : want)
    mean += w / static_cast<double>(want.size());
  if (tol(std::vector<double>(want.size(), is_int ? std::round(mean) : mean)))
    return make_error(std::string("a constant output passes the tolerance") + t);
  for (auto& [name, v] : in)
    if (v.size() >= want.size() && tol(v))
      return make_error("a copy of input '" + name + "' passes the tolerance" + t);
  // Every operation of the formula must matter on the test inputs: a candidate that drops one (a
  // clamp its argument never reaches, a select branch never taken, a max always decided the
  // same way) and writes one of its arguments instead must fail.
  for (expr gen_op::*field : {&gen_op::body, &gen_op::map}) {
    std::vector<std::vector<std::size_t>> paths;
    std::vector<std::size_t> path;
    call_paths(op.*field, path, paths);
    for (const auto& at : paths) {
      const expr& node = node_at(op.*field, at);
      for (const auto& kid : node.kids) {
        gen_op cut = op;
        node_at(cut.*field, at) = kid;
        if (tol(eval_op<double>(cut, p.sample, in)))
          return make_error("the formula without " + node.name + " (" + to_text(node) + " replaced by "
                            + to_text(kid) + ") passes the tolerance on the test inputs" + t);
      }
    }
  }
  // A naive float32 evaluation must pass (else the tolerance is unfair to solvers).
  std::map<std::string, std::vector<float>> inf;
  for (auto& [name, v] : in)
    inf[name] = std::vector<float>(v.begin(), v.end());
  auto f32 = eval_op<float>(op, p.sample, inf);
  std::vector<double> got(f32.begin(), f32.end());
  if (!tol(got))
    return make_error(std::string("a naive float32 computation fails the tolerance") + t);
  return {};
}

// ---- eval-split operators and split rules ----

bool is_eval_split_composition(const std::string& comp) {
  static const std::set<std::string> comps = [] {
    std::set<std::string> s;
    for (auto& [name, op] : eval_split_operators())
      s.insert(composition(op));
    return s;
  }();
  return comps.count(comp) > 0;
}

struct family_lists {
  std::vector<gen_op> kinds[3];
  std::set<std::string> seen;
  std::uint64_t draws = 0;
  std::uint64_t last_new = 0;
  // The compositions of the family's first `anchor_train` (60) admissible train operators (whatever
  // the number asked for): held-out instances are drawn from these compositions only, so they are
  // new instances of trained compositions whenever the family has at least that many train tasks.
  std::set<std::string> train_compositions;
  int anchors = 0;
};

constexpr int anchor_train = 60;

std::uint64_t draw_seed(std::uint64_t seed, family f, std::uint64_t k) {
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(f) + 1) * 0xD1B54A32D192ED03ull;
  splitmix(s);
  s ^= k * 0xA24BAED4963EE407ull;
  return splitmix(s);
}

// The seed of a task's rendering randomness (phrasing, sizes, ranges): the suite seed and the
// operator, so a task's text depends only on (seed, operator).
std::uint64_t render_seed(std::uint64_t seed, family f, const gen_op& op) {
  return draw_seed(seed, f, fnv1a(canonical_form(op)));
}

// Valid = renders and passes the tolerance refusal (with the rendering make_task will use).
bool admissible(const gen_op& op, std::uint64_t seed) {
  rng r(render_seed(seed, op.fam, op));
  auto p = render_parts(op, r);
  return check_parts(op, p).ok();
}

// Draws operators of family f until each kind has `want[kind]` of them or the draw budget ends.
void fill(family_lists& L, family f, std::uint64_t seed, const int want[3]) {
  const std::uint64_t budget = 200000;
  auto done = [&] {
    for (int k = 0; k < 3; ++k)
      if (static_cast<int>(L.kinds[k].size()) < want[k])
        return false;
    return true;
  };
  // A family is dry when 5,000 draws in a row bring no operator it has not seen.
  while (!done() && L.draws < budget && L.draws - L.last_new < 5000) {
    std::uint64_t k = L.draws++;
    rng r(draw_seed(seed, f, k));
    auto op = sample_op(f, r);
    auto canon = canonical_form(op);
    if (L.seen.count(canon))
      continue;
    L.seen.insert(canon);
    L.last_new = k;
    if (is_eval_split_composition(composition(op)))
      continue;
    auto kind = static_cast<int>(classify(op));
    auto comp = composition(op);
    if (kind == static_cast<int>(gen_kind::train) && L.anchors < anchor_train && admissible(op, seed)) {
      ++L.anchors;
      L.train_compositions.insert(comp);
    }
    // A held-out instance must be a new instance of a composition that training has.
    if (kind == static_cast<int>(gen_kind::eval_instance) && !L.train_compositions.count(comp))
      continue;
    if (static_cast<int>(L.kinds[kind].size()) >= want[kind])
      continue;
    if (!admissible(op, seed))
      continue;
    // The operator keeps its draw number for rendering: stored in the op list order.
    L.kinds[kind].push_back(op);
  }
}

char kind_letter(gen_kind k) { return k == gen_kind::train ? 't' : k == gen_kind::eval_instance ? 'i' : 'c'; }

std::string task_name(family f, gen_kind k, int index) {
  char b[16];
  std::snprintf(b, sizeof b, "%05d", index);
  return std::string("gen_") + tag(f) + "_" + kind_letter(k) + b;
}

result<gen_task> make_task(std::uint64_t seed, family f, gen_kind k, int index, const gen_op& op) {
  gen_task t;
  t.name = task_name(f, k, index);
  t.kind = k;
  t.op = op;
  rng r(render_seed(seed, f, op));
  auto p = render_parts(op, r);
  if (auto ok = check_parts(op, p); !ok)
    return make_error("generated task " + t.name + ": tolerance refused: " + ok.message());
  t.toml = render_toml(t.name, k, p, signature_of(p));
  t.reference = render_reference(t.name, op, p);
  auto spec = env::parse_task("<generated seed " + std::to_string(seed) + ">/" + t.name + "/task.toml", t.toml, t.reference);
  if (!spec)
    return make_error("generated task " + t.name + ": " + spec.message());
  t.spec = std::move(*spec);
  t.spec.reference_path = "<generated seed " + std::to_string(seed) + ">/" + t.name + "/reference.cu";
  return t;
}

// Per-family counts of a round-robin spread of `total` over the families.
std::vector<int> spread(int total) {
  std::vector<int> c(all_families().size(), 0);
  for (int i = 0; i < total; ++i)
    ++c[static_cast<std::size_t>(i) % c.size()];
  return c;
}

} // namespace

gen_kind classify(const gen_op& op) {
  if (fnv1a("composition|" + composition(op)) % 100 < 12)
    return gen_kind::eval_composition;
  if (fnv1a("instance|" + canonical_form(op)) % 100 < 6)
    return gen_kind::eval_instance;
  return gen_kind::train;
}

std::vector<std::pair<std::string, gen_op>> eval_split_operators() {
  std::vector<std::pair<std::string, gen_op>> out;
  auto a = expr::v("a");
  auto ew = [](int inputs, expr body) {
    gen_op op;
    op.fam = family::ew;
    op.inputs = inputs;
    op.body = std::move(body);
    return op;
  };
  // elu: a > 0 ? a : alpha * (exp(a) - 1), with alpha 1 (folded) and any other alpha
  out.push_back({"elu", ew(1, expr::f("select", {a, expr::c(0), a, expr::f("sub", {expr::f("exp", {a}), expr::c(1)})}))});
  out.push_back({"elu", ew(1, expr::f("select", {a, expr::c(0), a, expr::f("mul", {expr::c(0.5), expr::f("sub", {expr::f("exp", {a}), expr::c(1)})})}))});
  out.push_back({"elu", ew(1, expr::f("add", {expr::f("relu", {a}), expr::f("min", {expr::c(0), expr::f("sub", {expr::f("exp", {a}), expr::c(1)})})}))});
  out.push_back({"elu", ew(1, expr::f("add", {expr::f("max", {a, expr::c(0)}), expr::f("min", {expr::c(0), expr::f("sub", {expr::f("exp", {a}), expr::c(1)})})}))});
  // mish: a * tanh(softplus(a))
  out.push_back({"mish", ew(1, expr::f("mul", {a, expr::f("tanh", {expr::f("softplus", {a})})}))});
  // lerp: a + c * (b - a)
  auto b = expr::v("b"), c = expr::v("c");
  out.push_back({"lerp", ew(3, expr::f("add", {a, expr::f("mul", {c, expr::f("sub", {b, a})})}))});
  out.push_back({"lerp", ew(3, expr::f("add", {expr::f("mul", {a, expr::f("sub", {expr::c(1), c})}), expr::f("mul", {b, c})}))});
  gen_op r;
  r.fam = family::red;
  r.axis = "row";
  r.reduce = "argmin";
  out.push_back({"row_argmin", r});
  r.axis = "col";
  r.reduce = "mean";
  out.push_back({"col_mean", r});
  gen_op s;
  s.fam = family::softmax;
  s.axis = "row";
  s.variant = "log";
  s.scale = 1;
  out.push_back({"log_softmax_rows", s});
  gen_op p;
  p.fam = family::pool;
  p.reduce = "avg";
  p.window = 3;
  p.stride = 2;
  out.push_back({"avgpool1d", p});
  gen_op sc;
  sc.fam = family::scan;
  sc.axis = "row";
  sc.reduce = "sum";
  out.push_back({"cumsum_rows", sc});
  // batched_transpose: y[b, j, i] = x[b, i, j], a permute of the last two axes
  gen_op bt;
  bt.fam = family::layout;
  bt.variant = "permute";
  bt.perm = "021";
  out.push_back({"batched_transpose", bt});
  // maxpool2d: 2-D max pooling (any window and stride: the composition abstracts them)
  gen_op mp;
  mp.fam = family::stencil;
  mp.variant = "pool2d";
  mp.reduce = "max";
  mp.window = 3;
  mp.stride = 2;
  out.push_back({"maxpool2d", mp});
  return out;
}

std::vector<std::string> eval_split_operators_outside_families() {
  // No family here has a convolution with a weight input, a transposed-A GEMM, GELU, losses,
  // group statistics over channel groups, attention or a 1-D gather (the layout family gathers
  // rows or columns of a matrix).
  return {"depthwise_conv2d", "matmul_transposed_a", "matmul_bias_gelu", "huber_loss",
          "groupnorm", "causal_attention", "gather"};
}

result<void> check_tolerance(const gen_op& op, double atol, double rtol, std::uint64_t seed) {
  rng r(render_seed(seed, op.fam, op));
  auto p = render_parts(op, r);
  p.atol = atol;
  p.rtol = rtol;
  return check_parts(op, p);
}

std::vector<double> evaluate(const gen_op& op, const env::size_set& sizes,
                             const std::map<std::string, std::vector<double>>& inputs) {
  return eval_op<double>(op, sizes, inputs);
}

bool is_generated_name(std::string_view name) { return name.substr(0, 4) == "gen_"; }

result<std::vector<gen_task>> generate_suite(const gen_options& opt) {
  const auto& fams = all_families();
  auto tr = spread(opt.train), ei = spread(opt.eval_instances), ec = spread(opt.eval_compositions);
  std::vector<family_lists> lists(fams.size());
  for (std::size_t f = 0; f < fams.size(); ++f) {
    int want[3] = {tr[f], ei[f], ec[f]};
    fill(lists[f], fams[f], opt.seed, want);
  }
  // A family that ran dry hands its remaining quota to the others, in order.
  int short_by[3] = {0, 0, 0};
  for (std::size_t f = 0; f < fams.size(); ++f) {
    int want[3] = {tr[f], ei[f], ec[f]};
    for (int k = 0; k < 3; ++k)
      short_by[k] += std::max(0, want[k] - static_cast<int>(lists[f].kinds[k].size()));
  }
  for (int k = 0; k < 3; ++k) {
    for (std::size_t f = 0; f < fams.size() && short_by[k] > 0; ++f) {
      int want[3] = {0, 0, 0};
      for (int q = 0; q < 3; ++q)
        want[q] = static_cast<int>(lists[f].kinds[q].size());
      want[k] += short_by[k];
      fill(lists[f], fams[f], opt.seed, want);
      short_by[k] -= static_cast<int>(lists[f].kinds[k].size()) - (want[k] - short_by[k]);
    }
    if (short_by[k] > 0)
      return make_error("the generated families cannot supply " + std::to_string(short_by[k]) + " more "
                        + to_string(static_cast<gen_kind>(k)) + " task(s) (every family ran out of distinct operators)");
  }
  std::vector<gen_task> out;
  for (int k = 0; k < 3; ++k) {
    for (std::size_t f = 0; f < fams.size(); ++f) {
      auto& ops = lists[f].kinds[k];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        auto t = make_task(opt.seed, fams[f], static_cast<gen_kind>(k), static_cast<int>(i), ops[i]);
        if (!t)
          return t.err();
        out.push_back(std::move(*t));
      }
    }
  }
  return out;
}

result<std::vector<env::task_spec>> generated_specs(const gen_options& opt) {
  std::vector<env::task_spec> out;
  if (opt.train <= 0 && opt.eval_instances <= 0 && opt.eval_compositions <= 0)
    return out;
  auto suite = generate_suite(opt);
  if (!suite)
    return suite.err();
  for (auto& t : *suite)
    out.push_back(std::move(t.spec));
  return out;
}

result<gen_task> generate_task(std::uint64_t seed, std::string_view name) {
  auto bad = [&] {
    return make_error("'" + std::string(name) + "' is not a generated task name (gen_<family>_<t|i|c><number>, "
                      "e.g. gen_ew_t00042)");
  };
  if (!is_generated_name(name))
    return bad();
  auto rest = name.substr(4);
  auto us = rest.rfind('_');
  if (us == std::string_view::npos || us + 2 >= rest.size())
    return bad();
  auto f = parse_family(rest.substr(0, us));
  if (!f)
    return f.err();
  char kc = rest[us + 1];
  gen_kind k = kc == 't' ? gen_kind::train : kc == 'i' ? gen_kind::eval_instance : gen_kind::eval_composition;
  if (kc != 't' && kc != 'i' && kc != 'c')
    return bad();
  std::string digits(rest.substr(us + 2));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6)
    return bad();
  int index = std::stoi(digits);
  family_lists L;
  int want[3] = {0, 0, 0};
  want[static_cast<int>(k)] = index + 1;
  fill(L, *f, seed, want);
  auto& ops = L.kinds[static_cast<int>(k)];
  if (static_cast<int>(ops.size()) <= index)
    return make_error("generated family " + std::string(tag(*f)) + " has only " + std::to_string(ops.size()) + " "
                      + to_string(k) + " operator(s); '" + std::string(name) + "' does not exist");
  return make_task(seed, *f, k, index, ops[static_cast<std::size_t>(index)]);
}

result<gen_op> op_of_reference(std::string_view src) {
  std::string_view m = ir_marker;
  if (src.substr(0, m.size()) != m)
    return make_error("not a generated reference (no '" + std::string(m) + "' first line)");
  auto end = src.find('\n');
  return parse_op(src.substr(m.size(), end == std::string_view::npos ? std::string_view::npos : end - m.size()));
}

} // namespace leap::taskgen
