// The notation forms (gen_<family>_n<n>) of the reduction, scan, softmax, pooling and matmul
// families: the same operator as the train task gen_<family>_t<n>, worded as the suite's
// hand-written tasks word such operators (detail.hpp, style::notation). Each renders the plain
// task first from the same stream (so sizes, ranges, tolerances and the reference are the plain
// task's and pass its refusal), then words it anew and shows its buffers under op.names. The
// elementwise family's notation form is in render_ew (render_families.cpp).
#include "env/taskgen/detail.hpp"

#include <cctype>
#include <sstream>

namespace leap::taskgen::detail {

namespace {

// "[lo, hi]" of an "uniform(lo, hi)" init.
std::string range_text(const std::string& init) {
  auto open = init.find('('), close = init.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return init;
  return "[" + init.substr(open + 1, close - open - 1) + "]";
}

// The args, kernels and launch of `p` under op.names.
void rename_parts(parts& p, const gen_op& op) {
  for (auto& a : p.args) {
    a.name = shown_name(op, a.name);
    // shapes name only int sizes, which keep their names
  }
  p.kernels = rename_identifiers(p.kernels, op.names);
  p.launch = rename_identifiers(p.launch, op.names);
}

// A sum, max or min over an index in the hand-written tasks' notation: `sum_j`, or with its
// range, `sum_{0 <= j < cols}`.
std::string big_op(const std::string& op, const std::string& idx, const std::string& bound, bool ranged) {
  return ranged ? op + "_{0 <= " + idx + " < " + bound + "}" : op + "_" + idx;
}

// The opening sentence's size clause: "(one test uses 37 rows of 3001 columns)".
std::string rows_cols(const parts& p) {
  return std::to_string(p.sizes[1].at("rows")) + " rows of " + std::to_string(p.sizes[1].at("cols")) + " columns";
}

// The closing sentences of a rows x cols task: the reduced length's sizes, and for sums the
// order's freedom.
std::string size_tail(const std::string& len, const parts& p, bool summation) {
  return " " + len + " is not necessarily a multiple of the block or warp size (one test uses " + rows_cols(p) + ")."
         + (summation ? " Any summation order is accepted within the tolerance." : "");
}

parts notation_red(const gen_op& op, rng& r, rng& w) {
  parts p = render_red(op, r);
  const bool row = op.axis == "row";
  const bool idx_out = op.reduce == "argmax" || op.reduce == "argmin";
  const bool identity = op.map.kind == expr::var;
  const std::string x = shown_name(op, "x"), out = shown_name(op, "out");
  const std::string o = row ? w.pick(std::vector<std::string>{"r", "i"}) : w.pick(std::vector<std::string>{"c", "j"});
  const std::string j = row ? w.pick(std::vector<std::string>{"j", "c", "k"}) : w.pick(std::vector<std::string>{"r", "i", "k"});
  const std::string k2 = j == "k" ? "t" : "k"; // argmax's second index
  const std::string bound = row ? "cols" : "rows";
  auto elem = [&](const std::string& idx) { return row ? x + "[" + o + ", " + idx + "]" : x + "[" + idx + ", " + o + "]"; };
  const std::string f = prose(op.map, {{"v", elem(j)}});
  const bool ranged = w.coin(35);
  const std::string sum = big_op("sum", j, bound, ranged);
  std::string formula;
  const std::string& red = op.reduce;
  if (red == "sum") formula = sum + " " + f;
  else if (red == "mean") formula = w.coin(50) ? "(1 / " + bound + ") * " + sum + " " + f : sum + " " + f + " / " + bound;
  else if (red == "max" || red == "min") formula = big_op(red, j, bound, ranged) + " " + f;
  else if (red == "l1") formula = sum + " |" + f + "|";
  else if (red == "l2") formula = "sqrt(" + sum + " (" + f + ")^2)";
  else if (red == "linf") formula = big_op("max", j, bound, ranged) + " |" + f + "|";
  else if (red == "lse") formula = "log(" + sum + " exp(" + f + "))";
  else // argmax, argmin
    formula = "the smallest " + j + " with " + f + " == " + (red == "argmax" ? "max_" : "min_") + k2 + " "
              + prose(op.map, {{"v", elem(k2)}});
  struct naming {
    std::string head, torch_fn, torch_args; // torch_fn(x<torch_args>, dim=...)
  };
  static const std::map<std::string, naming> names{
    {"sum", {"Sum of each", "torch.sum", ""}},          {"mean", {"Mean of each", "torch.mean", ""}},
    {"max", {"Maximum of each", "torch.amax", ""}},     {"min", {"Minimum of each", "torch.amin", ""}},
    {"argmax", {"Index of the maximum of each", "torch.argmax", ""}},
    {"argmin", {"Index of the minimum of each", "torch.argmin", ""}},
    {"l1", {"L1 norm of each", "torch.linalg.vector_norm", ", ord=1"}},
    {"l2", {"Euclidean norm of each", "torch.linalg.vector_norm", ""}},
    {"linf", {"Max norm (largest magnitude) of each", "torch.linalg.vector_norm", ", ord=inf"}},
    {"lse", {"Log-sum-exp of each", "torch.logsumexp", ""}}};
  const naming& nm = names.at(red);
  std::ostringstream d;
  d << nm.head << (row ? " row" : " column");
  if (!identity)
    d << " of " << prose(op.map, {{"v", x}});
  else if (w.coin(50))
    d << " (as " << nm.torch_fn << "(" << x << nm.torch_args << ", dim=" << (row ? "1" : "0") << "))";
  d << ": " << x << " is rows x cols (row-major), " << out << " holds " << (row ? "rows" : "cols")
    << (idx_out ? " int32 values" : " float32 values") << " and\n" << out << "[" << o << "] = " << formula;
  if (red == "lse")
    d << " (subtract the largest term first so exp cannot overflow)";
  d << ".";
  if (idx_out)
    d << " On ties the first, i.e. smallest, index wins (as " << nm.torch_fn << "); the index is a "
      << (row ? "column" : "row") << " index in [0, " << bound << "), not a flat offset.";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << " " << defs;
  switch (w.below(3)) {
    case 0: d << " " << x << " lies in " << range_text(p.args[0].init) << "."; break;
    case 1: d << " Values lie in " << range_text(p.args[0].init) << "."; break;
    default: break;
  }
  d << size_tail(bound, p, !idx_out && red != "max" && red != "min" && red != "linf");
  p.description = d.str();
  rename_parts(p, op);
  return p;
}

parts notation_scan(const gen_op& op, rng& r, rng& w) {
  parts p = render_scan(op, r);
  const bool row = op.axis == "row";
  const std::string x = shown_name(op, "x"), y = shown_name(op, "y");
  const std::string o = row ? "r" : "c", j = row ? "j" : "i", k = w.pick(std::vector<std::string>{"k", "t"});
  const std::string len = row ? "cols" : "rows";
  auto elem = [&](const std::string& a, const std::string& idx) {
    return row ? a + "[" + o + ", " + idx + "]" : a + "[" + idx + ", " + o + "]";
  };
  const std::string range = op.reverse ? (op.exclusive ? j + " < " + k + " < " + len : j + " <= " + k + " < " + len)
                                       : (op.exclusive ? "0 <= " + k + " < " + j : "0 <= " + k + " <= " + j);
  const std::string dim = row ? "1" : "0";
  const bool identity = op.map.kind == expr::var;
  std::ostringstream d;
  std::string what = op.reduce == "sum" ? (op.exclusive ? "Exclusive " : "Inclusive ") + std::string(op.reverse ? "reverse cumulative sum" : "cumulative sum")
                     : std::string("Running ") + (op.reduce == "max" ? "maximum" : "minimum") + (op.reverse ? " from the end" : "");
  d << what << " along each " << (row ? "row" : "column");
  if (!identity)
    d << " of " << prose(op.map, {{"v", x}});
  else if (!op.reverse && !op.exclusive && w.coin(60))
    d << " (as " << (op.reduce == "sum" ? "torch.cumsum(" + x + ", dim=" + dim + ")"
                                        : "torch.cum" + op.reduce + "(" + x + ", dim=" + dim + ").values") << ")";
  d << ": " << x << " and " << y << " are rows x cols (row-major);\n" << elem(y, j) << " = " << op.reduce << "_{" << range << "} "
    << prose(op.map, {{"v", elem(x, k)}});
  if (op.exclusive)
    d << " (0 when the range is empty)";
  d << ". " << (row ? "Rows" : "Columns") << " are independent: the " << (op.reduce == "sum" ? "sum" : "scan") << " restarts at every "
    << (row ? "row" : "column") << ".";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << " " << defs;
  if (w.coin(50))
    d << " " << x << " lies in " << range_text(p.args[0].init) << ".";
  d << size_tail(len, p, op.reduce == "sum");
  p.description = d.str();
  rename_parts(p, op);
  return p;
}

parts notation_softmax(const gen_op& op, rng& r, rng& w) {
  parts p = render_softmax(op, r);
  const bool row = op.axis == "row";
  const bool log = op.variant == "log";
  const std::string x = shown_name(op, "x"), y = shown_name(op, "y"), b = shown_name(op, "b");
  const std::string o = row ? "r" : "c", j = row ? "j" : "i", k = "k";
  auto at = [&](const std::string& a, const std::string& idx) {
    return row ? a + "[" + o + ", " + idx + "]" : a + "[" + idx + ", " + o + "]";
  };
  const bool plain_z = op.scale == 1 && !op.bias;
  auto z_of = [&](const std::string& idx) {
    return (op.scale == 1 ? "" : op.scale == -1 ? "-" : num(op.scale) + " * ") + at(x, idx)
           + (op.bias ? " + " + b + "[" + idx + "]" : "");
  };
  const std::string zj = plain_z ? at(x, j) : "z_" + j, zk = plain_z ? at(x, k) : "z_" + k;
  std::ostringstream d;
  const std::string dim = row ? "1" : "0";
  d << (row ? "Row-wise " : "Column-wise ") << (log ? "log-softmax" : "softmax");
  if (plain_z || w.coin(50))
    d << " (as torch." << (log ? "log_softmax(" : "softmax(") << (plain_z ? x : "z") << ", dim=" << dim << "))";
  d << ": " << x << " and " << y << " are rows x cols (row-major); for every " << (row ? "row r" : "column c") << ",\n"
    << at(y, j) << " = "
    << (log ? zj + " - m - log(sum_" + k + " exp(" + zk + " - m))" : "exp(" + zj + " - m) / sum_" + k + " exp(" + zk + " - m)")
    << " with ";
  if (!plain_z)
    d << "z_" << j << " = " << z_of(j) << " and ";
  d << "m = max_" << k << " " << zk << " (subtracting the maximum keeps exp from overflowing";
  if (w.coin(60))
    d << "; " << x << " lies in " << range_text(p.args[0].init);
  d << ").";
  if (op.bias)
    d << " " << b << " holds " << (row ? "cols" : "rows") << " float32 values, one per " << (row ? "column" : "row") << ".";
  if (log && w.coin(50))
    d << " Do not compute log(softmax): it loses precision for small probabilities.";
  d << size_tail(row ? "cols" : "rows", p, false);
  p.description = d.str();
  rename_parts(p, op);
  return p;
}

// Pooling: the window and stride are either written into the formula or passed as the ints k
// and s (as the suite's avgpool1d and maxpool2d take them), each test size fixing them.
parts notation_pool(const gen_op& op, rng& r, rng& w) {
  parts p = render_pool(op, r);
  const int K = op.window, S = op.stride;
  const bool params = w.coin(50);
  const std::string ks = params ? "k" : std::to_string(K), ss = params ? "s" : std::to_string(S);
  const std::string j = w.pick(std::vector<std::string>{"j", "o", "t"}), a = j == "t" ? "a" : w.pick(std::vector<std::string>{"a", "t"});
  const std::string in = "x[c, " + j + " * " + ss + " + " + a + "]";
  const std::string win = "{0 <= " + a + " < " + ks + "}";
  std::string formula;
  if (op.reduce == "max" || op.reduce == "min") formula = op.reduce + "_" + win + " " + in;
  else if (op.reduce == "avg") formula = "(1 / " + ks + ") * sum_" + win + " " + in;
  else if (op.reduce == "sum") formula = "sum_" + win + " " + in;
  else if (op.reduce == "l2") formula = "sqrt(sum_" + win + " " + in + "^2)";
  else formula = "max_" + win + " |" + in + "|";
  static const std::map<std::string, std::pair<std::string, std::string>> names{
    {"max", {"1-D max pooling", "torch.nn.functional.max_pool1d(x, k, stride=s)"}},
    {"min", {"1-D min pooling", "-torch.nn.functional.max_pool1d(-x, k, stride=s)"}},
    {"avg", {"1-D average pooling", "torch.nn.functional.avg_pool1d(x, k, stride=s)"}},
    {"sum", {"1-D sum pooling", "k * torch.nn.functional.avg_pool1d(x, k, stride=s)"}},
    {"l2", {"1-D L2 pooling", "torch.nn.functional.lp_pool1d(x, 2, k, stride=s)"}},
    {"linf", {"1-D max-magnitude pooling", "torch.nn.functional.max_pool1d(x.abs(), k, stride=s)"}}};
  const auto& [head, torch_call] = names.at(op.reduce);
  std::ostringstream d;
  d << head;
  if (w.coin(60)) {
    std::string call = torch_call;
    if (!params)
      call = rename_identifiers(call, {{"k", std::to_string(K)}, {"s", std::to_string(S)}});
    d << " (as " << call << ", no padding)";
  } else {
    d << " without padding";
  }
  d << ": x is C x L (row-major, one row per channel), y is C x OL with OL = (L - " << ks << ") / " << ss
    << " + 1 (integer division; a trailing part that does not fill a window is dropped);\ny[c, " << j << "] = " << formula << ".";
  if (params)
    d << " k and s are positive ints passed as parameters; windows may " << (S < K ? "overlap (s < k)" : S > K ? "skip inputs (s > k)" : "tile the row (s = k)")
      << " and one test uses C = " << p.sizes[1].at("C") << ", L = " << p.sizes[1].at("L") << ", k = " << K << ", s = " << S << ".";
  else
    d << " Windows " << (S < K ? "overlap" : S > K ? "skip inputs" : "tile the row") << "; one test uses C = " << p.sizes[1].at("C")
      << ", L = " << p.sizes[1].at("L") << ".";
  if (w.coin(50))
    d << " x lies in " << range_text(p.args[0].init) << ".";
  p.description = d.str();
  if (params) {
    // The same operator with k and s taken from the call: every size set fixes them.
    const std::string ol = "((L-k)/s+1)";
    p.args = {p.args[0], p.args[1], p.args[2], p.args[3], {"k", "int", "", "", ""}, {"s", "int", "", "", ""}};
    p.args[1].shape = "C*" + ol;
    for (auto& sz : p.sizes) {
      sz["k"] = K;
      sz["s"] = S;
    }
    p.sample["k"] = K;
    p.sample["s"] = S;
    p.kernels = pool_kernel(op.reduce, "k", "s", "(double)k", ", int k, int s");
    p.launch = "  if (C <= 0 || k <= 0 || s <= 0 || L < k) return;\n" + launch_1d("gen_kernel", "C * " + ol, "x, y, C, L, k, s");
  }
  return p;
}

// Replaces add(acc, bias) (either order) in e by the variable z; true when it did.
bool bind_z(expr& e) {
  if (e.kind != expr::call)
    return false;
  if (e.name == "add" && e.kids.size() == 2 && e.kids[0].kind == expr::var && e.kids[1].kind == expr::var
      && ((e.kids[0].name == "acc" && e.kids[1].name == "bias") || (e.kids[0].name == "bias" && e.kids[1].name == "acc"))) {
    e = expr::v("z");
    return true;
  }
  bool any = false;
  for (auto& k : e.kids)
    any = bind_z(k) || any;
  return any;
}

parts notation_matmul(const gen_op& op, rng& r, rng& w) {
  parts p = render_matmul(op, r);
  const std::string out = shown_name(op, "out"), bias = shown_name(op, "bias");
  const std::string i = "i", j = "j";
  expr body = op.body;
  const bool z = bind_z(body) && !uses(body, "acc") && !uses(body, "bias");
  if (!z)
    body = op.body;
  const std::string acc_name = z ? "z" : w.pick(std::vector<std::string>{"acc", "s", "dot"});
  std::ostringstream d;
  d << w.pick(std::vector<std::string>{"Fused linear layer", "Matrix product with a fused epilogue",
                                       "Linear layer with an elementwise epilogue"});
  d << ": A is M x K, B is K x N, " << out << " is M x N, all row-major, " << bias << " holds N values added to every row";
  const std::string dot = "sum_k A[" + i + ", k] * B[k, " + j + "]";
  d << ": with " << acc_name << " = " << dot << (z ? " + " + bias + "[" + j + "]" : "") << ",\n"
    << out << "[" << i << ", " << j << "] = "
    << prose(body, {{"acc", acc_name}, {"z", "z"}, {"bias", bias + "[" + j + "]"}}) << ".";
  auto defs = definitions({&op.body});
  if (!defs.empty())
    d << " " << defs;
  d << " M, N and K are arbitrary positive ints, not necessarily multiples of a tile size (one test uses M = "
    << p.sizes[1].at("M") << ", N = " << p.sizes[1].at("N") << ", K = " << p.sizes[1].at("K")
    << "). Any summation order is accepted within the tolerance.";
  p.description = d.str();
  rename_parts(p, op);
  return p;
}

} // namespace

bool has_notation(family f) {
  return f == family::ew || f == family::red || f == family::scan || f == family::softmax || f == family::pool
         || f == family::matmul;
}

std::map<std::string, std::string> notation_names(const gen_op& op, rng& r) {
  // Own name -> the names a notation form may show (the first is the family's own). None is a
  // local of the family's reference kernels (o acc m j res best mx q t s z v c xc idx i n k).
  std::vector<std::pair<std::string, std::vector<std::string>>> choices;
  switch (op.fam) {
    case family::ew: return paraphrase_names(op, r);
    case family::red:
      choices = {{"x", {"x", "a", "src", "data", "input", "mat"}}, {"out", {"out", "y", "dst", "result"}}};
      break;
    case family::scan:
      choices = {{"x", {"x", "a", "src", "input"}}, {"y", {"y", "out", "dst", "result"}}};
      break;
    case family::softmax:
      choices = {{"x", {"x", "logits", "a", "scores"}}, {"y", {"y", "out", "probs", "result"}}};
      if (op.bias)
        choices.push_back({"b", {"b", "bias", "shift"}});
      break;
    case family::matmul:
      choices = {{"out", {"C", "out", "Y"}}, {"bias", {"bias", "b"}}};
      break;
    default: return {};
  }
  std::map<std::string, std::string> names;
  for (auto& [own, opts] : choices) {
    const auto& pick = r.pick(opts);
    if (pick != own)
      names[own] = pick;
  }
  return names;
}

parts render_notation(const gen_op& op, rng& r, rng& wording) {
  switch (op.fam) {
    case family::ew: return render_ew(op, r, style::notation, &wording);
    case family::red: return notation_red(op, r, wording);
    case family::scan: return notation_scan(op, r, wording);
    case family::softmax: return notation_softmax(op, r, wording);
    case family::pool: return notation_pool(op, r, wording);
    case family::matmul: return notation_matmul(op, r, wording);
    default: return render_parts(op, r, style::written, &wording);
  }
}

std::string rename_identifiers(const std::string& text, const std::map<std::string, std::string>& names) {
  if (names.empty())
    return text;
  std::string out;
  out.reserve(text.size());
  auto ident = [](char ch, bool first) {
    return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_' || (!first && std::isdigit(static_cast<unsigned char>(ch)));
  };
  for (std::size_t i = 0; i < text.size();) {
    if (ident(text[i], true) && (i == 0 || !ident(text[i - 1], false))) {
      std::size_t e = i;
      while (e < text.size() && ident(text[e], false))
        ++e;
      const std::string word = text.substr(i, e - i);
      auto it = names.find(word);
      const bool member = i > 0 && text[i - 1] == '.';
      out += it != names.end() && !member ? it->second : word;
      i = e;
    } else {
      out += text[i++];
    }
  }
  return out;
}

} // namespace leap::taskgen::detail
