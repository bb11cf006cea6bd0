// The generator's sampling: one random operator per draw, for each family (detail.hpp).
#include "env/taskgen/detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

namespace leap::taskgen::detail {

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

} // namespace leap::taskgen::detail
