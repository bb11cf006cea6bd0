// Renderers of the elementwise, reduction, broadcast, softmax, scan, pooling and matmul families:
// prose, sizes, tolerances and the CUDA reference of one operator (detail.hpp).
#include "env/taskgen/detail.hpp"

#include "env/shape_expr.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

namespace leap::taskgen::detail {

std::string shown_name(const gen_op& op, const std::string& own) {
  auto it = op.names.find(own);
  return it == op.names.end() ? own : it->second;
}

std::map<std::string, std::string> paraphrase_names(const gen_op& op, rng& r) {
  if (op.fam != family::ew)
    return {};
  // Names people give such buffers (the bundled suite's among them), inputs then the output.
  static const std::vector<std::vector<std::string>> one{
    {"x", "y"}, {"x", "out"}, {"a", "out"}, {"src", "dst"}, {"u", "v"}, {"x", "z"}, {"input", "output"}, {"v", "w"}};
  static const std::vector<std::vector<std::string>> two{
    {"x", "y", "z"}, {"a", "b", "out"}, {"x", "y", "out"}, {"pred", "target", "out"}, {"a", "w", "out"},
    {"x", "w", "y"}, {"u", "v", "w"}, {"p", "q", "out"}, {"lhs", "rhs", "out"}, {"x", "b", "y"}};
  static const std::vector<std::vector<std::string>> three{
    {"a", "b", "w", "out"}, {"x", "y", "z", "out"}, {"a", "b", "c", "out"}, {"p", "q", "r", "out"},
    {"u", "v", "w", "out"}, {"x", "y", "w", "out"}, {"a", "b", "t", "out"}, {"x", "s", "b", "y"}};
  const auto& pool = op.inputs == 1 ? one : op.inputs == 2 ? two : three;
  const auto& pick = r.pick(pool);
  std::map<std::string, std::string> names;
  const char* canon[] = {"a", "b", "c"};
  for (int i = 0; i < op.inputs; ++i)
    if (pick[static_cast<std::size_t>(i)] != canon[i])
      names[canon[i]] = pick[static_cast<std::size_t>(i)];
  if (pick.back() != "out")
    names["out"] = pick.back();
  return names;
}

namespace {
// The nonzero constants of e (what name_constant can name).
int count_nonzero_constants(const expr& e) {
  if (e.kind == expr::constant)
    return e.value == 0 ? 0 : 1;
  int n = 0;
  for (auto& k : e.kids)
    n += count_nonzero_constants(k);
  return n;
}

// Replaces the `index`-th nonzero constant of e (prefix order) by the variable `name`; returns
// its value (`index` counts down as the walk passes constants).
double name_constant(expr& e, int index, const std::string& name) {
  struct walker {
    int left;
    const std::string& name;
    double value = 0;
    bool done = false;
    void walk(expr& x) {
      if (done)
        return;
      if (x.kind == expr::constant && x.value != 0) {
        if (left-- == 0) {
          value = x.value;
          x = expr::v(name);
          done = true;
        }
        return;
      }
      for (auto& k : x.kids)
        walk(k);
    }
  } w{index, name};
  w.walk(e);
  return w.value;
}
} // namespace

parts render_ew(const gen_op& op, rng& r, style st, rng* wording) {
  rng& wr = wording ? *wording : r; // the phrasing's draws; ranges and sizes come from r
  parts p;
  p.level = 1;
  p.category = "elementwise";
  auto shown = [&](const std::string& n) { return shown_name(op, n); };
  std::vector<std::string> ins{"a", "b", "c"};
  ins.resize(static_cast<std::size_t>(op.inputs));
  const std::string out = shown("out");
  std::vector<range_t> ranges{{-2, 2}, {-1, 1}, {0, 3}, {-3, 1}, {-1.5, 2.5}};
  std::map<std::string, std::string> pn;
  std::vector<std::pair<std::string, range_t>> in_ranges;
  std::vector<std::string> shown_names;
  for (auto& v : ins) {
    auto rg = r.pick(ranges);
    const std::string name = shown(v);
    p.args.push_back({name, "const float*", "input", "n", uniform(rg)});
    pn[v] = name + "[i]";
    in_ranges.push_back({name, rg});
    shown_names.push_back(name);
  }
  p.args.push_back({out, "float*", "output", "n", ""});
  p.args.push_back({"n", "int", "", "", ""});
  int n1 = r.pick(std::vector<int>{65536, 131072, 262144});
  int n2 = odd_size(r, 50001, 300000);
  p.sizes = {{{"n", n1}}, {{"n", n2}}};
  p.sample = {{"n", 400}};
  p.atol = 1e-5;
  p.rtol = 1e-4;
  shown_names.push_back(out);
  std::string all = join_names(shown_names);
  auto range_of = [](const std::pair<std::string, range_t>& x) {
    return x.first + " in [" + num(x.second.lo) + ", " + num(x.second.hi) + "]";
  };
  std::string range_text;
  for (auto& x : in_ranges)
    range_text += (range_text.empty() ? "" : ", ") + range_of(x);
  std::ostringstream d;
  if (st == style::plain) {
    std::vector<std::string> openers{
      "Elementwise map over n float32 values: for every 0 <= i < n,",
      "Compute, for each index i in [0, n),",
      "One output per position (0 <= i < n), each depending only on the inputs at that position:",
      "Apply the following formula independently to every element i (0 <= i < n):"};
    d << wr.pick(openers) << "\n" << out << "[i] = " << prose(op.body, pn) << ".\n";
    auto defs = definitions({&op.body});
    if (!defs.empty())
      d << defs << "\n";
    d << all << " hold n float32 values each; the inputs are drawn from " << range_text << ". ";
  } else {
    // A name a person would give the operator, shown in the prompt instead of gen_ew_p<n>, and
    // often the opener of the suite's hand-written tasks: "<Name> (as torch...): for 0 <= i < n,".
    p.title = op_title(op.body);
    std::map<std::string, std::string> tn;
    for (auto& v : ins)
      tn[v] = shown(v);
    std::string heading = p.title;
    std::replace(heading.begin(), heading.end(), '_', ' ');
    heading[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(heading[0])));
    std::vector<std::string> openers{
      "For 0 <= i < n,", "Elementwise, for 0 <= i < n,", "For every index 0 <= i < n,",
      "Compute, for each i in [0, n),", "An elementwise operator: for 0 <= i < n,",
      "Pointwise over n float32 values: for 0 <= i < n,",
      heading + " (as " + infix(op.body, tn, spelling::torch) + "): for 0 <= i < n,",
      heading + ", elementwise (as torch computes " + infix(op.body, tn, spelling::torch) + "): for 0 <= i < n,",
      heading + ": for 0 <= i < n,"};
    d << wr.pick(openers) << "\n" << out << "[i] = ";
    // Notation forms: a constant named (`alpha * (exp(x) - 1) with alpha = 1`) and the inputs
    // bound (`x * tanh(softplus(x)) with x = x[i]`), each in about half of them.
    expr body = op.body;
    std::vector<std::string> with;
    auto fpn = pn; // the formula's names
    if (st == style::notation) {
      if (const int consts = count_nonzero_constants(body); consts > 0 && wr.coin(50)) {
        std::string cname;
        for (int tries = 0; tries < 10 && cname.empty(); ++tries) {
          cname = wr.pick(std::vector<std::string>{"alpha", "beta", "gamma", "delta", "k", "scale", "lam", "eps"});
          for (auto& v : ins)
            if (shown(v) == cname)
              cname.clear();
          if (cname == out)
            cname.clear();
        }
        if (!cname.empty()) {
          const double value = name_constant(body, wr.below(consts), cname);
          fpn[cname] = cname;
          with.push_back(cname + " = " + num(value));
        }
      }
      if (wr.coin(50)) {
        for (auto& v : ins) {
          fpn[v] = shown(v);
          with.push_back(shown(v) + " = " + shown(v) + "[i]");
        }
        if (wr.coin(50))
          std::reverse(with.begin(), with.end());
      }
    }
    std::string with_text;
    for (std::size_t i = 0; i < with.size(); ++i)
      with_text += (i == 0 ? " with " : i + 1 == with.size() ? " and " : ", ") + with[i];
    // A select at the top is written as the suite writes piecewise functions.
    const bool piecewise = body.kind == expr::call && body.name == "select" && wr.coin(70);
    if (piecewise) {
      const auto& k = body.kids;
      d << prose(k[2], fpn) << " if " << prose(k[0], fpn) << " > " << prose(k[1], fpn) << ", else "
        << prose(k[3], fpn) << with_text << ".\n";
      std::vector<const expr*> rest{&k[0], &k[1], &k[2], &k[3]};
      auto defs = definitions(rest);
      if (!defs.empty())
        d << defs << "\n";
    } else {
      d << prose(body, fpn) << with_text << ".\n";
      auto defs = definitions({&body});
      if (!defs.empty())
        d << defs << "\n";
    }
    switch (wr.below(st == style::paraphrase ? 3 : 5)) {
      case 0:
        d << all << " hold n float32 values each; the inputs are drawn from " << range_text << ". ";
        break;
      case 1: {
        d << all << " hold n float32 values each; ";
        for (std::size_t i = 0; i < in_ranges.size(); ++i)
          d << (i == 0 ? "" : i + 1 == in_ranges.size() ? " and " : ", ") << in_ranges[i].first << " lies in ["
            << num(in_ranges[i].second.lo) << ", " << num(in_ranges[i].second.hi) << "]";
        d << ". ";
        break;
      }
      case 2:
        d << all << " hold n float32 values each (" << range_text << "). ";
        break;
      case 3: {  // written forms only: one input's range
        const auto& x = in_ranges[static_cast<std::size_t>(wr.below(static_cast<int>(in_ranges.size())))];
        d << all << " hold n float32 values each; " << x.first << " lies in [" << num(x.second.lo) << ", "
          << num(x.second.hi) << "]. ";
        break;
      }
      default:  // written forms only: no range
        d << all << " hold n float32 values each. ";
    }
  }
  std::vector<std::string> tails{
    "n can be any positive int and is not necessarily a multiple of the block size (one test uses n = " + std::to_string(n2) + "), so guard the tail.",
    "n is not necessarily a multiple of the block size or of 4 (one test size is " + std::to_string(n2) + "); guard the tail.",
    "One test uses n = " + std::to_string(n2) + ", which is not a multiple of any block size."};
  if (st != style::plain)
    tails.push_back("n can be any positive int and is not necessarily a multiple of the block size or of 4 (one test size is "
                    + std::to_string(n2) + "), so guard the tail.");
  d << wr.pick(tails);
  p.description = d.str();
  std::string params, call;
  for (auto& a : p.args) {
    params += (params.empty() ? "" : ", ") + a.ctype + " " + a.name;
    call += (call.empty() ? "" : ", ") + a.name;
  }
  p.kernels = literal_helpers(op.body) + "__global__ void gen_kernel(" + params + ") {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i >= n) return;\n  " + out + "[i] = " + infix(op.body, pn, spelling::c_float) + ";\n}\n";
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

std::string pool_kernel(const std::string& reduce, const std::string& k, const std::string& s,
                        const std::string& divisor, const std::string& extra_params) {
  std::string c = "__global__ void gen_kernel(const float* x, float* y, int C, int L" + extra_params + ") {\n"
                  "  const int out_l = (L - " + k + ") / " + s + " + 1;\n"
                  "  long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (idx >= (long long)C * out_l) return;\n"
                  "  const int c = (int)(idx / out_l), o = (int)(idx % out_l);\n"
                  "  const float* xc = x + (long long)c * L + (long long)o * " + s + ";\n"
                  "  double acc = 0.0;\n  for (int t = 0; t < " + k + "; ++t) {\n";
  c += "    double v = (double)xc[t];\n";
  if (reduce == "max") c += "    if (t == 0 || v > acc) acc = v;\n";
  else if (reduce == "min") c += "    if (t == 0 || v < acc) acc = v;\n";
  else if (reduce == "l2") c += "    acc += v * v;\n";
  else if (reduce == "linf") c += "    if (fabs(v) > acc) acc = fabs(v);\n";
  else c += "    acc += v;\n";
  c += "  }\n";
  if (reduce == "avg") c += "  acc /= " + divisor + ";\n";
  if (reduce == "l2") c += "  acc = sqrt(acc);\n";
  return c + "  y[idx] = (float)acc;\n}\n";
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
  p.kernels = pool_kernel(op.reduce, std::to_string(k), std::to_string(s), std::to_string(k) + ".0", "");
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

} // namespace leap::taskgen::detail
