// The generator's printing: formulas in prose and CUDA, the shared pieces of every family's
// text, and the task.toml and reference files (detail.hpp).
#include "env/taskgen/detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

namespace leap::taskgen::detail {

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
std::string infix(const expr& e, const std::map<std::string, std::string>& names, spelling sp,
                  int prec) {
  const bool c = sp == spelling::c_float, torch = sp == spelling::torch;
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
  if (torch) { // PyTorch over whole tensors
    if (fn == "max" || fn == "min") return "torch." + fn + "imum(" + p(0) + ", " + p(1) + ")";
    if (fn == "log1p_abs") return "torch.log1p(torch.abs(" + p(0) + "))";
    if (fn == "select") return "torch.where(" + p(0, 1) + " > " + p(1, 1) + ", " + p(2) + ", " + p(3) + ")";
    if (fn == "clamp") return "torch.clamp(" + p(0) + ", " + p(1) + ", " + p(2) + ")";
    if (fn == "softplus" || fn == "silu") return "F." + fn + "(" + p(0) + ")";
    return "torch." + fn + "(" + p(0) + ")"; // abs square exp tanh sigmoid relu sin cos
  }
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

std::string op_title(const expr& e) {
  std::vector<std::string> words;
  std::function<void(const expr&)> walk = [&](const expr& x) {
    if (x.kind != expr::call)
      return;
    static const std::map<std::string, std::string> word{{"max", "maximum"}, {"min", "minimum"}, {"select", "where"}};
    auto it = word.find(x.name);
    const std::string w = it == word.end() ? x.name : it->second;
    if (std::find(words.begin(), words.end(), w) == words.end())
      words.push_back(w);
    for (const auto& k : x.kids)
      walk(k);
  };
  walk(e);
  if (words.size() > 3)
    words.resize(3);
  std::string t;
  for (const auto& w : words)
    t += (t.empty() ? "" : "_") + w;
  // One operation alone would read like a bundled task (relu, sigmoid); say it is a map.
  return words.size() < 2 ? (t.empty() ? "identity" : t) + "_map" : t;
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

extern const char* const cuda_helpers;
const char* const cuda_helpers =
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



std::string join_names(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

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

std::string written_layout(const std::string& description, rng& r) {
  std::vector<std::string> lines;
  std::istringstream in(description);
  for (std::string l; std::getline(in, l);)
    if (l.find_first_not_of(' ') != std::string::npos)
      lines.push_back(l);
  if (lines.size() < 2)
    return description;
  const bool opener_alone = r.coin(50);
  std::string out = lines[0];
  for (std::size_t i = 1; i < lines.size(); ++i)
    out += (i == 1 && opener_alone ? "\n" : " ") + lines[i];
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
  t << "name = \"" << name << "\"\n";
  if (!p.title.empty())
    t << "title = \"" << p.title << "\"\n";
  t << "level = " << p.level << "\nsplit = \"" << (kind == gen_kind::train ? "train" : "eval")
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

extern const char* const ir_marker;
const char* const ir_marker = "// leap-taskgen-op: ";

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

} // namespace leap::taskgen::detail
