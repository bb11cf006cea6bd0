// Internal to leap_taskgen (env/taskgen/*.cpp only): what the generator's files share. The
// deterministic random stream, the parts of a rendered task, and the functions of each stage:
// sampling (sampling.cpp), printing of formulas and the task's text (printing.cpp), the family
// renderers (render_families.cpp, render_layout.cpp), the sequential evaluator that is the
// tolerance check's ground truth (evaluate.cpp) and the checks and suite assembly
// (generator.cpp). Pure functions; any thread.
#pragma once

#include "env/taskgen/generator.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace leap::taskgen::detail {

// ---- deterministic randomness (no std distributions: their output differs between libraries)

inline std::uint64_t splitmix(std::uint64_t& s) {
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

inline std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// An odd size in [lo, hi] that is no multiple of 3 either (so of no common block or tile size).
inline int odd_size(rng& r, int lo, int hi) {
  for (;;) {
    int v = r.range(lo, hi) | 1;
    if (v <= hi && v % 3 != 0)
      return v;
  }
}

// ---- the parts of a rendered task ----

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
  std::string title;       // the name the prompt shows (paraphrases); empty = the task's name
  std::string description; // without the two closing lines
  std::vector<arg_def> args;
  std::vector<env::size_set> sizes;
  env::size_set sample;    // a small size set for the tolerance check
  double atol = 1e-5, rtol = 1e-5;
  std::string kernels;     // __global__ kernels
  std::string launch;      // body of solution()
};

struct range_t {
  double lo, hi;
};

// ---- sampling (sampling.cpp) ----

// One operator of family f, drawn from r.
gen_op sample_op(family f, rng& r);

// ---- printing (printing.cpp) ----

std::string num(double v);  // as the prose writes a number (%g)
std::string cnum(double v); // a parenthesised C double literal
std::string fnum(double v); // a C float literal spelled as the prose spells the number
// Infix text of an expression with the prose's operators, parentheses, argument order and
// names, in the prose's spelling, as float CUDA that transcribes it, or as PyTorch would write
// it over whole tensors (torch.where, torch.clamp, F.softplus, ...; see printing.cpp).
enum class spelling { prose, c_float, torch };
std::string infix(const expr& e, const std::map<std::string, std::string>& names, spelling sp,
                  int prec = 0);
std::string prose(const expr& e, const std::map<std::string, std::string>& names);
// A snake_case name of an expression's operations, as a person might call the operator
// ("clamp_minimum", "tanh_add_mul"): its distinct operations in prefix order, at most three.
std::string op_title(const expr& e);
void collect_fns(const expr& e, std::set<std::string>& out);
std::string definitions(const std::vector<const expr*>& es);
std::string cuda(const expr& e, const std::map<std::string, std::string>& names);
std::string literal_helpers(const expr& e);
extern const char* const cuda_helpers;
std::string join_names(const std::vector<std::string>& v);
std::string uniform(range_t r);
const std::vector<std::string>& closing();
std::string reduce_prose(const std::string& red, const std::string& m, const std::string& idx,
                         const std::string& bound);
std::string reduce_cuda(const std::string& red, const std::string& m, const std::string& count);
double reduce_tol_atol(const std::string& red);
std::string launch_1d(const std::string& kernel, const std::string& count, const std::string& args);
// A description laid out as the suite's hand-written tasks are (written forms): its lines (the
// opener, the formula, definitions, the buffers' sentence) run on as one paragraph, either after
// the opener's line (half of the draws) or from the opener on; render_toml wraps it at 100 columns.
// A one-line description is returned as it is.
std::string written_layout(const std::string& description, rng& r);
std::string render_toml(const std::string& name, gen_kind kind, const parts& p, const std::string& sig);
std::string signature_of(const parts& p);
std::string render_reference(const std::string& name, const gen_op& op, const parts& p);
extern const char* const ir_marker;

// ---- the family renderers (render_families.cpp, render_layout.cpp) ----

// How a task is written: `plain` is the family's own wording (train and held-out tasks);
// `paraphrase` (gen_<family>_p<n>) words the same operator otherwise: the buffer names of
// op.names, the suite's hand-written phrasings (a piecewise formula as "s if p > q, else t", one
// range sentence per input). `written` (gen_<family>_w<n>) is a paraphrase whose buffers'
// sentence may also state one input's range or none, as hand-written tasks often do, so that the
// parameter list is read from the signature, not from the ranges. Families without a paraphrase
// of their own render as plain. `notation` (gen_<family>_n<n>) is written in the mathematical
// notation of the suite's hand-written tasks (render_notation.cpp): `sum_j x[r, j]`,
// `(1 / rows) * sum_r x[r, c]`, `max_{0 <= a < k} x[c, j * s + a]`, named constants and
// bindings (`alpha * (exp(x) - 1) with alpha = 1 and x = x[i]`), an opener naming the operation
// as a person would (with the torch call it matches), and buffer names drawn per task.
enum class style { plain, paraphrase, written, notation };

// The name a task shows for the operator's buffer `own` (op.names, else `own` itself).
std::string shown_name(const gen_op& op, const std::string& own);
// The buffer names a paraphrase of `op` uses, drawn from r (empty where the family has none).
std::map<std::string, std::string> paraphrase_names(const gen_op& op, rng& r);

// `wording` (paraphrases): where the phrasing's choices are drawn from, so that a paraphrase keeps
// its plain task's ranges and sizes (drawn from r) and words them otherwise; null = r.
parts render_ew(const gen_op& op, rng& r, style st = style::plain, rng* wording = nullptr);
parts render_red(const gen_op& op, rng& r);
parts render_bcast(const gen_op& op, rng& r);
parts render_softmax(const gen_op& op, rng& r);
parts render_scan(const gen_op& op, rng& r);
parts render_pool(const gen_op& op, rng& r);
// The pooling reference kernel gen_kernel(x, y, C, L`extra_params`): one thread per output, a
// window of `k` inputs moving by `s` (C++ text: literals, or the names of int parameters listed in
// `extra_params`, e.g. ", int k, int s"), reduced into y[idx] by `reduce` (avg divides by `divisor`).
std::string pool_kernel(const std::string& reduce, const std::string& k, const std::string& s,
                        const std::string& divisor, const std::string& extra_params);
parts render_matmul(const gen_op& op, rng& r);
parts render_layout(const gen_op& op, rng& r);
parts render_stencil(const gen_op& op, rng& r);
parts render_parts(const gen_op& op, rng& r, style st = style::plain, rng* wording = nullptr);

// ---- the notation forms (render_notation.cpp) ----

// Whether family f has a notation form of its own (the others render their written form).
bool has_notation(family f);
// The buffer names a notation form of `op` shows, drawn from r (own name -> shown name; the
// family's own names are left out). Never a name the family's reference kernels use for a local.
std::map<std::string, std::string> notation_names(const gen_op& op, rng& r);
// The notation form of `op` (op.names already drawn by notation_names): sizes and ranges drawn
// from r as the plain task's are, the wording from `wording`. Only for has_notation(op.fam).
parts render_notation(const gen_op& op, rng& r, rng& wording);
// `text` (generated CUDA) with every identifier in `names` replaced whole (not after a `.`, so
// blockIdx.x stays): the reference of a task whose buffers are shown under other names.
std::string rename_identifiers(const std::string& text, const std::map<std::string, std::string>& names);

// ---- evaluation (evaluate.cpp; instantiated for float and double) ----

template <class T>
std::vector<T> eval_op(const gen_op& op, const env::size_set& sz, const std::map<std::string, std::vector<T>>& in);
std::map<std::string, std::vector<double>> sample_inputs(const parts& p, std::uint64_t seed);

// ---- checks (generator.cpp) ----

result<void> check_parts(const gen_op& op, const parts& p);

} // namespace leap::taskgen::detail
