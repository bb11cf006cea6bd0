// The operator IR of the generated task families: a small, pure description of one operator
// (an elementwise expression, a reduction by axis, a broadcast, a softmax-like row/column program,
// a scan, a 1-D pooling, a matmul with a fused epilogue, a layout change (transpose, permute,
// gather by index, slice, concat), a 2-D stencil or 2-D pooling). From one `gen_op` the generator
// renders the task (prose, signature, args, sizes, tolerances, a CUDA reference) and
// env/oracles/gen_oracle computes the same operator with LibTorch. Values only: no I/O, no LibTorch, no CAF; any thread.
#pragma once

#include "common/result.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace leap::taskgen {

// An expression over named scalar variables (buffer elements such as a, b, c, x, v, acc).
// Operators (fn): unary  abs exp tanh sigmoid relu softplus sin cos square silu log1p_abs;
//                 binary add sub mul max min;
//                 select (kids: lhs, threshold, then, else: lhs > threshold ? then : else);
//                 clamp  (kids: value, lo, hi).
struct expr {
  enum kind_t { var, constant, call } kind = constant;
  std::string name; // var: the variable; call: the operator
  double value = 0; // constant
  std::vector<expr> kids;

  static expr v(std::string n) { return {var, std::move(n), 0, {}}; }
  static expr c(double x) { return {constant, "", x, {}}; }
  static expr f(std::string fn, std::vector<expr> args) { return {call, std::move(fn), 0, std::move(args)}; }
};

// The generated families. Each names a tag used in task names (gen_<tag>_...).
enum class family { ew, red, bcast, softmax, scan, pool, matmul, layout, stencil };
const std::vector<family>& all_families();
const char* tag(family f);
result<family> parse_family(std::string_view tag);

// One operator. Which fields matter depends on `fam`:
//   ew      body over inputs a (b, c when inputs >= 2, 3): out[i] = body
//   red     out[r] (axis row) or out[col] (axis col) = reduce over the axis of map(v = x[..])
//           reduce: sum mean max min argmax argmin l1 l2 linf lse
//   bcast   y[r, col] = body(x = x[r, col], u) where u is a vector input indexed by column
//           (source "colvec", length cols) or row ("rowvec", length rows), or the reduce of map
//           over the row ("rowred") or the column ("colred")
//   softmax y = softmax (log_softmax when variant "log") along axis of scale * x (+ b[col] when
//           bias): scale carries the temperature and the sign (softmin)
//   scan    along axis (row: over columns; col: over rows), reverse or not, of map(v = x[..]):
//           reduce sum (inclusive, or exclusive when exclusive), max or min
//   pool    C x L input, windows of `window` with `stride`: reduce max min avg sum l2 linf
//   matmul  out[m, n] = body(acc = sum_k A[m, k] B[k, n], bias = bias[n])
//   layout  y = map(v = the moved element), variant:
//           transpose    rows x cols -> cols x rows
//           permute      A x B x C -> the axes in `perm` order (y = x.permute(perm), e.g. "201")
//           gather_rows  out[i, j] = x[idx[i], j] (idx: n int32 row indices)
//           gather_cols  out[r, i] = x[r, idx[i]] (idx: n int32 column indices)
//           slice        y[i, j] = x[start0 + step0 * i, start1 + step1 * j]
//           concat       a and b joined along axis (row: stacked, col: side by side)
//   stencil C x H x W planes, variant:
//           box gauss cross laplace4 laplace8 sharpen sobel_x sobel_y: a 3x3 stencil v, then
//             y = map(v); border zero clamp mirror (same shape) or valid (H-2 x W-2)
//           pool2d       k x k windows (`window`) with `stride`, no padding: reduce max min avg
//                        sum l2 linf
struct gen_op {
  family fam = family::ew;
  int inputs = 1;           // ew
  expr body;                // ew, bcast, matmul
  expr map = expr::v("v");  // red, bcast (rowred/colred), scan
  std::string reduce;       // red, bcast (reduced source), scan, pool
  std::string axis = "row"; // red, softmax, scan: "row" or "col"
  std::string source;       // bcast: colvec rowvec rowred colred
  std::string variant;      // softmax: "softmax" or "log"
  double scale = 1;         // softmax
  bool bias = false;        // softmax
  bool exclusive = false;   // scan
  bool reverse = false;     // scan
  int window = 0, stride = 0; // pool, stencil pool2d
  std::string perm;           // layout permute: the source axis of each output axis, "201"
  std::string border;         // stencil: zero clamp mirror valid
  int start0 = 0, step0 = 1, start1 = 0, step1 = 1; // layout slice (rows, columns)
  // How the task names its buffers where that differs from the family's own names (ew: a, b, c
  // and out), e.g. {a: x, out: y}: rendering only, so not part of the canonical form or the
  // composition. The reference's operator line carries it, so the oracle finds the buffers.
  std::map<std::string, std::string> names;
};

// The 3x3 weights of a stencil variant (row-major: w[(a + 1) * 3 + (b + 1)] multiplies the
// neighbour a rows down and b columns right); empty for an unknown variant.
std::vector<double> stencil_weights(const std::string& variant);

// ---- expressions ----

// Simplified canonical form of an expression: children first, constants folded, commutative
// operands (add mul max min) in a fixed order, abs(abs(e)) = abs(e), abs(square(e)) = square(e).
expr canonical(const expr& e);
// Prefix text: add(mul(a,2),tanh(b)). Constants in full precision (round-trips exactly) or, with
// skeleton, as `#` (the composition, without the instance's constants).
std::string to_text(const expr& e, bool skeleton = false);
result<expr> parse_expr(std::string_view text);
// Evaluates with the variables in `env` (missing variable: 0). Same formulas as the reference.
double eval_expr(const expr& e, const std::map<std::string, double>& env);
float eval_expr_f32(const expr& e, const std::map<std::string, float>& env);
int depth(const expr& e);
bool uses(const expr& e, const std::string& var);

// ---- operators ----

// The canonical form of an operator: family, every field that matters for it and the canonical
// expressions, as text. Two operators compute the same function (up to the simplifications of
// `canonical(expr)`) iff their canonical forms are equal; distinctness is measured on it.
std::string canonical_form(const gen_op& op);
// The composition (template and op combination): the canonical form with the instance's
// constants (expression constants, softmax scale, pooling window and stride) abstracted.
// Held-out compositions and the exclusion of eval-split operators compare this.
std::string composition(const gen_op& op);
// Serialisation (`key=value;...`), exact: parse_op(serialize(op)) has the same canonical form
// and names.
std::string serialize(const gen_op& op);
result<gen_op> parse_op(std::string_view text);

} // namespace leap::taskgen
