// The operator IR of the generated task families: see ir.hpp.
#include "env/taskgen/ir.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace leap::taskgen {

const std::vector<family>& all_families() {
  static const std::vector<family> all{family::ew,     family::red,    family::bcast,
                                       family::softmax, family::scan,  family::pool,
                                       family::matmul, family::layout, family::stencil};
  return all;
}

const char* tag(family f) {
  switch (f) {
    case family::ew: return "ew";
    case family::red: return "red";
    case family::bcast: return "bcast";
    case family::softmax: return "softmax";
    case family::scan: return "scan";
    case family::pool: return "pool";
    case family::matmul: return "matmul";
    case family::layout: return "layout";
    case family::stencil: return "stencil";
  }
  return "?";
}

result<family> parse_family(std::string_view t) {
  for (auto f : all_families())
    if (t == tag(f))
      return f;
  return make_error("'" + std::string(t) + "' is not a generated family (ew, red, bcast, softmax, "
                    "scan, pool, matmul, layout, stencil)");
}

namespace {

const std::set<std::string>& unary_fns() {
  static const std::set<std::string> s{"abs",  "exp",    "tanh", "sigmoid", "relu",   "softplus",
                                       "sin",  "cos",    "square", "silu",  "log1p_abs"};
  return s;
}
const std::set<std::string>& binary_fns() {
  static const std::set<std::string> s{"add", "sub", "mul", "div", "max", "min"};
  return s;
}
bool commutative(const std::string& fn) {
  return fn == "add" || fn == "mul" || fn == "max" || fn == "min";
}
// Functions whose value is never negative: abs() and relu() of them change nothing.
bool non_negative(const expr& e) {
  if (e.kind == expr::constant)
    return e.value >= 0;
  if (e.kind != expr::call)
    return false;
  static const std::set<std::string> s{"abs", "exp", "sigmoid", "relu", "softplus", "square",
                                       "log1p_abs"};
  return s.count(e.name) > 0;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest text that reads back exactly.
  for (int p = 1; p <= 17; ++p) {
    char s[40];
    std::snprintf(s, sizeof s, "%.*g", p, v);
    if (std::strtod(s, nullptr) == v)
      return s;
  }
  return buf;
}

template <class T>
T apply_fn(const std::string& fn, const std::vector<T>& k) {
  using std::exp;
  if (fn == "abs") return std::fabs(k[0]);
  if (fn == "exp") return exp(k[0]);
  if (fn == "tanh") return std::tanh(k[0]);
  if (fn == "sigmoid") return T(1) / (T(1) + exp(-k[0]));
  if (fn == "relu") return k[0] > T(0) ? k[0] : T(0);
  if (fn == "softplus") return k[0] > T(20) ? k[0] : std::log1p(exp(k[0]));
  if (fn == "sin") return std::sin(k[0]);
  if (fn == "cos") return std::cos(k[0]);
  if (fn == "square") return k[0] * k[0];
  if (fn == "silu") return k[0] / (T(1) + exp(-k[0]));
  if (fn == "log1p_abs") return std::log1p(std::fabs(k[0]));
  if (fn == "add") return k[0] + k[1];
  if (fn == "sub") return k[0] - k[1];
  if (fn == "mul") return k[0] * k[1];
  if (fn == "div") return k[0] / k[1];
  if (fn == "max") return std::fmax(k[0], k[1]);
  if (fn == "min") return std::fmin(k[0], k[1]);
  if (fn == "select") return k[0] > k[1] ? k[2] : k[3];
  if (fn == "clamp") return std::fmin(std::fmax(k[0], k[1]), k[2]);
  return T(0);
}

template <class T>
T eval_t(const expr& e, const std::map<std::string, T>& env) {
  switch (e.kind) {
    case expr::constant: return static_cast<T>(e.value);
    case expr::var: {
      auto it = env.find(e.name);
      return it == env.end() ? T(0) : it->second;
    }
    case expr::call: {
      std::vector<T> k;
      k.reserve(e.kids.size());
      for (auto& c : e.kids)
        k.push_back(eval_t(c, env));
      return apply_fn(e.name, k);
    }
  }
  return T(0);
}

} // namespace

double eval_expr(const expr& e, const std::map<std::string, double>& env) { return eval_t(e, env); }
float eval_expr_f32(const expr& e, const std::map<std::string, float>& env) { return eval_t(e, env); }

int depth(const expr& e) {
  int d = 0;
  for (auto& k : e.kids)
    d = std::max(d, depth(k));
  return e.kind == expr::call ? d + 1 : 0;
}

bool uses(const expr& e, const std::string& var) {
  if (e.kind == expr::var)
    return e.name == var;
  return std::any_of(e.kids.begin(), e.kids.end(), [&](const expr& k) { return uses(k, var); });
}

std::string to_text(const expr& e, bool skeleton) {
  switch (e.kind) {
    case expr::var: return e.name;
    case expr::constant: return skeleton ? "#" : number(e.value);
    case expr::call: {
      std::string s = e.name + "(";
      for (std::size_t i = 0; i < e.kids.size(); ++i)
        s += (i ? "," : "") + to_text(e.kids[i], skeleton);
      return s + ")";
    }
  }
  return "?";
}

expr canonical(const expr& e) {
  if (e.kind != expr::call)
    return e;
  expr out = e;
  for (auto& k : out.kids)
    k = canonical(k);
  bool all_const = std::all_of(out.kids.begin(), out.kids.end(),
                               [](const expr& k) { return k.kind == expr::constant; });
  if (all_const)
    return expr::c(eval_expr(out, {}));
  auto& k = out.kids;
  const std::string& fn = out.name;
  if (commutative(fn) && to_text(k[1]) < to_text(k[0]))
    std::swap(k[0], k[1]);
  auto is_c = [](const expr& x, double v) { return x.kind == expr::constant && x.value == v; };
  if ((fn == "abs" || fn == "relu") && non_negative(k[0]))
    return k[0];
  if (fn == "square" && k[0].kind == expr::call && k[0].name == "abs")
    return canonical(expr::f("square", {k[0].kids[0]}));
  if (fn == "select" && to_text(k[2]) == to_text(k[3]))
    return k[2];
  if (k.size() == 2 && to_text(k[0]) == to_text(k[1])) {
    if (fn == "max" || fn == "min") return k[0];
    if (fn == "sub") return expr::c(0);
    if (fn == "add") return canonical(expr::f("mul", {expr::c(2), k[0]}));
    if (fn == "mul") return canonical(expr::f("square", {k[0]}));
  }
  if (fn == "add" && is_c(k[0], 0)) return k[1];
  if (fn == "add" && is_c(k[1], 0)) return k[0];
  if (fn == "sub" && is_c(k[1], 0)) return k[0];
  if (fn == "mul" && is_c(k[0], 1)) return k[1];
  if (fn == "mul" && is_c(k[1], 1)) return k[0];
  if (fn == "mul" && (is_c(k[0], 0) || is_c(k[1], 0))) return expr::c(0);
  return out;
}

namespace {

struct parser {
  std::string_view s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  }
  error fail(const std::string& what) const {
    return make_error("expression \"" + std::string(s) + "\" at offset " + std::to_string(i) + ": " + what);
  }
  result<expr> parse() {
    ws();
    if (i >= s.size())
      return fail("unexpected end");
    char ch = s[i];
    if (ch == '-' || ch == '+' || ch == '.' || std::isdigit(static_cast<unsigned char>(ch))) {
      std::string num(s.substr(i));
      char* end = nullptr;
      double v = std::strtod(num.c_str(), &end);
      if (end == num.c_str())
        return fail("bad number");
      i += static_cast<std::size_t>(end - num.c_str());
      return expr::c(v);
    }
    if (!(std::isalpha(static_cast<unsigned char>(ch)) || ch == '_'))
      return fail(std::string("unexpected '") + ch + "'");
    std::size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      ++i;
    std::string name(s.substr(b, i - b));
    ws();
    if (i >= s.size() || s[i] != '(')
      return expr::v(name);
    ++i;
    std::vector<expr> kids;
    for (;;) {
      auto k = parse();
      if (!k)
        return k.err();
      kids.push_back(std::move(*k));
      ws();
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == ')') {
        ++i;
        break;
      }
      return fail("expected ',' or ')'");
    }
    std::size_t want = unary_fns().count(name) ? 1 : binary_fns().count(name) ? 2
                     : name == "clamp"          ? 3 : name == "select" ? 4 : 0;
    if (want == 0)
      return fail("unknown operator '" + name + "'");
    if (kids.size() != want)
      return fail("'" + name + "' takes " + std::to_string(want) + " operand(s)");
    return expr::f(name, std::move(kids));
  }
};

} // namespace

result<expr> parse_expr(std::string_view text) {
  parser p{text};
  auto e = p.parse();
  if (!e)
    return e;
  p.ws();
  if (p.i != text.size())
    return p.fail("trailing text");
  return e;
}

namespace {

std::string form(const gen_op& op, bool skel) {
  auto ex = [&](const expr& e) { return to_text(canonical(e), skel); };
  auto num = [&](double v) { return skel ? std::string("#") : number(v); };
  std::string s = std::string(tag(op.fam)) + ";";
  switch (op.fam) {
    case family::ew:
      s += "inputs=" + std::to_string(op.inputs) + ";body=" + ex(op.body);
      break;
    case family::red:
      s += "axis=" + op.axis + ";reduce=" + op.reduce + ";map=" + ex(op.map);
      break;
    case family::bcast:
      s += "source=" + op.source + ";body=" + ex(op.body);
      if (op.source == "rowred" || op.source == "colred")
        s += ";reduce=" + op.reduce + ";map=" + ex(op.map);
      break;
    case family::softmax:
      s += "axis=" + op.axis + ";variant=" + op.variant + ";sign=" + (op.scale < 0 ? "-" : "+")
           + ";scale=" + num(std::fabs(op.scale)) + ";bias=" + (op.bias ? "1" : "0");
      break;
    case family::scan:
      s += "axis=" + op.axis + ";reduce=" + op.reduce + ";exclusive=" + (op.exclusive ? "1" : "0")
           + ";reverse=" + (op.reverse ? "1" : "0") + ";map=" + ex(op.map);
      break;
    case family::pool:
      s += "reduce=" + op.reduce + ";window=" + num(op.window) + ";stride=" + num(op.stride);
      break;
    case family::matmul:
      s += "body=" + ex(op.body);
      break;
    case family::layout:
      s += "variant=" + op.variant;
      if (op.variant == "permute")
        s += ";perm=" + op.perm;
      if (op.variant == "concat")
        s += ";axis=" + op.axis;
      if (op.variant == "slice")
        s += ";start0=" + num(op.start0) + ";step0=" + num(op.step0) + ";start1=" + num(op.start1)
             + ";step1=" + num(op.step1);
      s += ";map=" + ex(op.map);
      break;
    case family::stencil:
      s += "variant=" + op.variant;
      if (op.variant == "pool2d")
        s += ";reduce=" + op.reduce + ";window=" + num(op.window) + ";stride=" + num(op.stride);
      else
        s += ";border=" + op.border + ";map=" + ex(op.map);
      break;
  }
  return s;
}

} // namespace

std::string canonical_form(const gen_op& op) { return form(op, false); }
std::string composition(const gen_op& op) { return form(op, true); }

std::vector<double> stencil_weights(const std::string& v) {
  if (v == "box") return std::vector<double>(9, 1.0 / 9.0);
  if (v == "gauss") return {1 / 16.0, 2 / 16.0, 1 / 16.0, 2 / 16.0, 4 / 16.0, 2 / 16.0, 1 / 16.0, 2 / 16.0, 1 / 16.0};
  if (v == "cross") return {0, 0.2, 0, 0.2, 0.2, 0.2, 0, 0.2, 0};
  if (v == "laplace4") return {0, 1, 0, 1, -4, 1, 0, 1, 0};
  if (v == "laplace8") return {1, 1, 1, 1, -8, 1, 1, 1, 1};
  if (v == "sharpen") return {0, -1, 0, -1, 5, -1, 0, -1, 0};
  if (v == "sobel_x") return {-1, 0, 1, -2, 0, 2, -1, 0, 1};
  if (v == "sobel_y") return {-1, -2, -1, 0, 0, 0, 1, 2, 1};
  return {};
}

namespace {

// ";names=a:x,out:y", or "" (the operator lines of tasks that keep the family's names stay as
// they were).
std::string names_text(const std::map<std::string, std::string>& names) {
  std::string s;
  for (const auto& [from, to] : names)
    s += (s.empty() ? ";names=" : ",") + from + ":" + to;
  return s;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

result<std::map<std::string, std::string>> parse_names(const std::string& text) {
  std::map<std::string, std::string> names;
  std::set<std::string> shown;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find(',', at);
    if (end == std::string::npos)
      end = text.size();
    auto item = text.substr(at, end - at);
    at = end + 1;
    auto colon = item.find(':');
    std::string from = item.substr(0, colon), to = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (!is_identifier(from) || !is_identifier(to))
      return make_error("operator: names entry '" + item + "' is not name:shown_name (two identifiers)");
    if (names.count(from) || shown.count(to))
      return make_error("operator: names entry '" + item + "' repeats a name");
    names[from] = to;
    shown.insert(to);
  }
  return names;
}

} // namespace

std::string serialize(const gen_op& op) {
  // The layout and stencil fields only for those families: the earlier families' operator
  // lines (the first line of their references) stay as they were.
  std::string extra;
  if (op.fam == family::layout || op.fam == family::stencil)
    extra = ";perm=" + op.perm + ";border=" + op.border + ";start0=" + std::to_string(op.start0)
            + ";step0=" + std::to_string(op.step0) + ";start1=" + std::to_string(op.start1)
            + ";step1=" + std::to_string(op.step1);
  return std::string("fam=") + tag(op.fam) + ";inputs=" + std::to_string(op.inputs) + ";body="
         + to_text(op.body) + ";map=" + to_text(op.map) + ";reduce=" + op.reduce + ";axis=" + op.axis
         + ";source=" + op.source + ";variant=" + op.variant + ";scale=" + number(op.scale)
         + ";bias=" + (op.bias ? "1" : "0") + ";exclusive=" + (op.exclusive ? "1" : "0")
         + ";reverse=" + (op.reverse ? "1" : "0") + ";window=" + std::to_string(op.window)
         + ";stride=" + std::to_string(op.stride) + extra + names_text(op.names);
}

result<gen_op> parse_op(std::string_view text) {
  gen_op op;
  std::size_t at = 0;
  std::set<std::string> seen;
  while (at <= text.size()) {
    auto end = text.find(';', at);
    if (end == std::string_view::npos)
      end = text.size();
    auto item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty())
      continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      return make_error("operator \"" + std::string(text) + "\": '" + std::string(item) + "' is not key=value");
    std::string key(item.substr(0, eq)), val(item.substr(eq + 1));
    seen.insert(key);
    auto to_int = [&](int& out) -> result<void> {
      char* e = nullptr;
      long v = std::strtol(val.c_str(), &e, 10);
      if (e == val.c_str() || *e)
        return make_error("operator: " + key + "=" + val + " is not an integer");
      out = static_cast<int>(v);
      return {};
    };
    result<void> ok;
    if (key == "fam") {
      auto f = parse_family(val);
      if (!f)
        return f.err();
      op.fam = *f;
    } else if (key == "inputs") ok = to_int(op.inputs);
    else if (key == "body" || key == "map") {
      auto e = parse_expr(val);
      if (!e)
        return e.err();
      (key == "body" ? op.body : op.map) = *e;
    } else if (key == "reduce") op.reduce = val;
    else if (key == "axis") op.axis = val;
    else if (key == "source") op.source = val;
    else if (key == "variant") op.variant = val;
    else if (key == "scale") op.scale = std::strtod(val.c_str(), nullptr);
    else if (key == "bias") op.bias = val == "1";
    else if (key == "exclusive") op.exclusive = val == "1";
    else if (key == "reverse") op.reverse = val == "1";
    else if (key == "window") ok = to_int(op.window);
    else if (key == "stride") ok = to_int(op.stride);
    else if (key == "perm") op.perm = val;
    else if (key == "border") op.border = val;
    else if (key == "start0") ok = to_int(op.start0);
    else if (key == "step0") ok = to_int(op.step0);
    else if (key == "start1") ok = to_int(op.start1);
    else if (key == "step1") ok = to_int(op.step1);
    else if (key == "names") {
      auto n = parse_names(val);
      if (!n)
        return n.err();
      op.names = std::move(*n);
    } else
      return make_error("operator \"" + std::string(text) + "\": unknown key '" + key + "'");
    if (!ok)
      return ok.err();
  }
  if (!seen.count("fam"))
    return make_error("operator \"" + std::string(text) + "\": no fam=");
  return op;
}

} // namespace leap::taskgen
