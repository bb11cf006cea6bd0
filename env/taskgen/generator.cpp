// The generated task families: see generator.hpp. The tolerance refusal (check_parts), the split
// rules, the suite's assembly and the public entry points; the stages are in detail.hpp's files.
#include "env/taskgen/generator.hpp"
#include "env/taskgen/detail.hpp"

#include "env/shape_expr.hpp"

#include <algorithm>
#include <array>
#include <map>
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
// gen_<family>_<letter><5 digits>, the one spelling of every generated name.
std::string generated_name_of(family f, char letter, int index) {
  char b[16];
  std::snprintf(b, sizeof b, "%05d", index);
  return std::string("gen_") + tag(f) + "_" + letter + b;
}
} // namespace

std::string task_name(family f, gen_kind k, int index) {
  return generated_name_of(f, k == gen_kind::train ? 't' : k == gen_kind::eval_instance ? 'i' : 'c', index);
}

std::string paraphrase_name(family f, int index) { return generated_name_of(f, 'p', index); }

std::string written_name(family f, int index) { return generated_name_of(f, 'w', index); }

std::string notation_name(family f, int index) { return generated_name_of(f, 'n', index); }

namespace detail {

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
  // The sample inputs by the operator's own names (a paraphrase shows them under op.names).
  std::map<std::string, std::string> canon_of, shown_of;
  for (const auto& [from, to] : op.names) {
    canon_of[to] = from;
    shown_of[from] = to;
  }
  std::map<std::string, std::vector<double>> in;
  for (auto& [name, v] : sample_inputs(p, 0x5eed)) {
    auto it = canon_of.find(name);
    in[it == canon_of.end() ? name : it->second] = std::move(v);
  }
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
      return make_error("a copy of input '" + (shown_of.count(name) ? shown_of[name] : name) + "' passes the tolerance" + t);
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

// The seed of a paraphrase's rendering (its names and wording): another stream than the plain
// task's, `attempt` counting renderings the tolerance refusal turned down.
std::uint64_t paraphrase_seed(std::uint64_t seed, family f, const gen_op& op, std::uint64_t attempt) {
  return draw_seed(seed ^ 0x7061726170687261ull, f, fnv1a("paraphrase|" + canonical_form(op)) + attempt);
}

// The seed of a written form's rendering (gen_<family>_w<n>): a third stream, so that its names,
// wording and layout are a draw of their own, not the paraphrase's.
std::uint64_t written_seed(std::uint64_t seed, family f, const gen_op& op, std::uint64_t attempt) {
  return draw_seed(seed ^ 0x7772697474656e21ull, f, fnv1a("written|" + canonical_form(op)) + attempt);
}

// The seed of a notation form's rendering (gen_<family>_n<n>): a fourth stream.
std::uint64_t notation_seed(std::uint64_t seed, family f, const gen_op& op, std::uint64_t attempt) {
  return draw_seed(seed ^ 0x6e6f746174696f6eull, f, fnv1a("notation|" + canonical_form(op)) + attempt);
}

enum class wording { plain, paraphrase, written, notation };

result<gen_task> make_task(std::uint64_t seed, family f, gen_kind k, int index, const gen_op& op,
                           wording w) {
  const bool paraphrase = w != wording::plain;
  auto stream = [&](std::uint64_t attempt) {
    return w == wording::written    ? written_seed(seed, f, op, attempt)
           : w == wording::notation ? notation_seed(seed, f, op, attempt)
                                    : paraphrase_seed(seed, f, op, attempt);
  };
  gen_task t;
  t.name = w == wording::written    ? written_name(f, index)
           : w == wording::notation ? notation_name(f, index)
           : paraphrase             ? paraphrase_name(f, index)
                                    : task_name(f, k, index);
  t.kind = k;
  t.paraphrase = paraphrase;
  t.written = w == wording::written;
  t.notation = w == wording::notation;
  t.op = op;
  parts p;
  if (!paraphrase) {
    rng r(render_seed(seed, f, op));
    p = render_parts(op, r);
    if (auto ok = check_parts(op, p); !ok)
      return make_error("generated task " + t.name + ": tolerance refused: " + ok.message());
  } else if (op.fam == family::ew || (w == wording::notation && has_notation(f))) {
    // The plain task's ranges and sizes (its stream), so the refusal passes as it did for the
    // plain task; the names and the wording from the paraphrase's (written, notation form's)
    // own stream.
    const bool notation = w == wording::notation;
    rng words(stream(0));
    t.op.names = notation ? notation_names(op, words) : paraphrase_names(op, words);
    rng r(render_seed(seed, f, op));
    p = notation ? render_notation(t.op, r, words)
                 : render_parts(t.op, r, w == wording::written ? style::written : style::paraphrase, &words);
    if (auto ok = check_parts(t.op, p); !ok)
      return make_error("generated task " + t.name + ": tolerance refused: " + ok.message());
  } else {
    // A second draw of the family's wording, sizes and ranges, checked again (another range can
    // fail the refusal); after a few refused draws, the plain task's draw, which passed.
    result<void> ok = make_error("no rendering tried");
    for (std::uint64_t attempt = 0; attempt < 4 && !ok; ++attempt) {
      rng r(stream(attempt));
      p = render_parts(t.op, r, style::paraphrase);
      ok = check_parts(t.op, p);
    }
    if (!ok) {
      rng r(render_seed(seed, f, op));
      p = render_parts(t.op, r, style::paraphrase);
      if (auto again = check_parts(t.op, p); !again)
        return make_error("generated task " + t.name + ": tolerance refused: " + again.message());
    }
  }
  if (w == wording::written || w == wording::notation) {
    // The layout's draws: a stream of their own, after the rendering's.
    rng layout(stream(0) ^ 0x6c61796f7574ull);
    p.description = written_layout(p.description, layout);
  }
  t.toml = render_toml(t.name, k, p, signature_of(p));
  t.reference = render_reference(t.name, t.op, p);
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

} // namespace detail

using namespace detail;

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
        auto t = make_task(opt.seed, fams[f], static_cast<gen_kind>(k), static_cast<int>(i), ops[i], wording::plain);
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

namespace {

struct generated_name {
  family fam;
  gen_kind kind;
  int index;
  wording w; // p: train operator n worded otherwise; w: and laid out as prose; else plain
};

result<generated_name> parse_generated_name(std::string_view name) {
  auto bad = [&] {
    return make_error("'" + std::string(name) + "' is not a generated task name (gen_<family>_<t|i|c|p|w|n><number>, "
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
  if (kc != 't' && kc != 'i' && kc != 'c' && kc != 'p' && kc != 'w' && kc != 'n')
    return bad();
  gen_kind k = kc == 't' || kc == 'p' || kc == 'w' || kc == 'n' ? gen_kind::train : kc == 'i' ? gen_kind::eval_instance : gen_kind::eval_composition;
  std::string digits(rest.substr(us + 2));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6)
    return bad();
  return generated_name{*f, k, std::stoi(digits),
                        kc == 'p'   ? wording::paraphrase
                        : kc == 'w' ? wording::written
                        : kc == 'n' ? wording::notation
                                    : wording::plain};
}

} // namespace

namespace {
// A generated train task's name (gen_<family>_t<n>), parsed; an error naming it otherwise.
result<generated_name> parse_train_name(std::string_view train_name) {
  auto g = parse_generated_name(train_name);
  if (!g)
    return g.err();
  if (g->kind != gen_kind::train || g->w != wording::plain)
    return make_error("'" + std::string(train_name) + "' is not a generated train task (gen_<family>_t<number>)");
  return g;
}
} // namespace

result<std::string> paraphrase_of(std::string_view train_name) {
  auto g = parse_train_name(train_name);
  if (!g)
    return g.err();
  return paraphrase_name(g->fam, g->index);
}

result<std::string> written_of(std::string_view train_name) {
  auto g = parse_train_name(train_name);
  if (!g)
    return g.err();
  return written_name(g->fam, g->index);
}

result<std::string> notation_of(std::string_view train_name) {
  auto g = parse_train_name(train_name);
  if (!g)
    return g.err();
  return notation_name(g->fam, g->index);
}

result<family> family_of(std::string_view name) {
  auto g = parse_generated_name(name);
  if (!g)
    return g.err();
  return g->fam;
}

result<std::vector<gen_task>> generate_tasks(std::uint64_t seed, const std::vector<std::string>& names) {
  std::vector<generated_name> parsed;
  std::map<family, std::array<int, 3>> want; // per family and kind: the largest index + 1
  for (const auto& name : names) {
    auto g = parse_generated_name(name);
    if (!g)
      return g.err();
    parsed.push_back(*g);
    auto& w = want[g->fam];
    w[static_cast<int>(g->kind)] = std::max(w[static_cast<int>(g->kind)], g->index + 1);
  }
  // Each family's operators are drawn once, up to the largest index asked for.
  std::map<family, family_lists> lists;
  for (auto& [f, w] : want)
    fill(lists[f], f, seed, w.data());
  std::vector<gen_task> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& g = parsed[i];
    auto& ops = lists.at(g.fam).kinds[static_cast<int>(g.kind)];
    if (static_cast<int>(ops.size()) <= g.index)
      return make_error("generated family " + std::string(tag(g.fam)) + " has only " + std::to_string(ops.size())
                        + " " + to_string(g.kind) + " operator(s); '" + names[i] + "' does not exist");
    auto t = make_task(seed, g.fam, g.kind, g.index, ops[static_cast<std::size_t>(g.index)], g.w);
    if (!t)
      return t.err();
    out.push_back(std::move(*t));
  }
  return out;
}

result<gen_task> generate_task(std::uint64_t seed, std::string_view name) {
  auto t = generate_tasks(seed, {std::string(name)});
  if (!t)
    return t.err();
  return std::move(t->front());
}

result<gen_op> op_of_reference(std::string_view src) {
  std::string_view m = ir_marker;
  if (src.substr(0, m.size()) != m)
    return make_error("not a generated reference (no '" + std::string(m) + "' first line)");
  auto end = src.find('\n');
  return parse_op(src.substr(m.size(), end == std::string_view::npos ? std::string_view::npos : end - m.size()));
}

} // namespace leap::taskgen
