// Row-wise family: softmax_rows, layernorm_rows, rmsnorm_rows, row_max, row_sum, row_mean,
// row_argmax (a max, then the smallest index holding it as a min), cross_entropy (per-row loss
// added atomically), and matvec (a row reduction of A against x). The column-wise tasks (col_sum,
// col_max, softmax_cols, batchnorm) are the same program over strided lines: line c starts at
// x + c and its element j is xr[j * cols]. One generic line program (a chain of max/min/sum
// reductions, then a per-element or per-line write) rendered four ways: one thread per line, one
// block per line with a shared-memory tree, one warp per line with shuffles, one block per line
// with shuffles + shared; column tasks also as 2-D tiles (32 columns x TY rows per block).
#include "policy/corpus/families.hpp"

#include <map>

namespace leap::corpus::detail {

namespace {

struct red {
  std::string var;
  bool is_max;
  std::string elem;    // uses xr[j] and earlier results
  std::string after;   // statement after the reduction
  bool is_min = false; // a min reduction (is_max false)
};

// rows: how many lines; cols: the length of a line. For column tasks these are the matrix's cols
// and rows, the line variable is `col` and a line starts at mat + col.
struct row_op {
  std::string mat, rows, cols, out;
  std::vector<red> reds;
  std::string per_elem;      // uses j, xr, yr; empty = per-line output
  std::string per_row;       // uses the line variable
  std::string line = "row";  // the line variable and the strategy names' unit
  std::string zero;          // host statement zeroing an accumulated output
};

const std::map<std::string, row_op>& ops() {
  static const std::map<std::string, row_op> m{
    {"softmax_rows",
     {"x", "rows", "cols", "y",
      {{"m", true, "xr[j]", ""}, {"s", false, "expf(xr[j] - m)", "const float inv = 1.0f / s;"}},
      "yr[j] = expf(xr[j] - m) * inv;", "", "row", ""}},
    {"layernorm_rows",
     {"x", "rows", "cols", "y",
      {{"total", false, "xr[j]", "const float mean = total / (float)cols;"},
       {"sq", false, "(xr[j] - mean) * (xr[j] - mean)", "const float rstd = rsqrtf(sq / (float)cols + 1e-5f);"}},
      "yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];", "", "row", ""}},
    {"layernorm_affine",
     {"x", "rows", "cols", "y",
      {{"total", false, "xr[j]", "const float mean = total / (float)cols;"},
       {"sq", false, "(xr[j] - mean) * (xr[j] - mean)", "const float rstd = rsqrtf(sq / (float)cols + 1e-5f);"}},
      "yr[j] = ((xr[j] - mean) * rstd * gamma[j] + beta[j]) * scale[0];", "", "row", ""}},
    {"rmsnorm_rows",
     {"x", "rows", "cols", "y",
      {{"ss", false, "xr[j] * xr[j]", "const float rinv = rsqrtf(ss / (float)cols + 1e-6f);"}},
      "yr[j] = xr[j] * rinv * weight[j];", "", "row", ""}},
    {"row_max", {"x", "rows", "cols", "out", {{"m", true, "xr[j]", ""}}, "", "out[row] = m;", "row", ""}},
    {"matvec", {"A", "M", "N", "y", {{"s", false, "xr[j] * x[j]", ""}}, "", "y[row] = s;", "row", ""}},
    {"row_sum", {"x", "rows", "cols", "out", {{"s", false, "xr[j]", ""}}, "", "out[row] = s;", "row", ""}},
    {"row_mean", {"x", "rows", "cols", "out", {{"s", false, "xr[j]", ""}}, "", "out[row] = s / (float)cols;", "row", ""}},
    {"row_argmax",
     {"x", "rows", "cols", "out",
      {{"m", true, "xr[j]", ""}, {"first", false, "(xr[j] == m ? (float)j : (float)cols)", "", true}},
      "", "out[row] = (int)first;", "row", ""}},
    {"cross_entropy",
     {"logits", "N", "C", "out",
      {{"m", true, "xr[j]", ""}, {"s", false, "expf(xr[j] - m)", ""}},
      "", "atomicAdd(out, (m + logf(s) - xr[labels[row]]) / (float)N);", "row",
      "cudaMemset(out, 0, sizeof(float));"}},
    {"col_sum", {"x", "cols", "rows", "out", {{"s", false, "xr[j * cols]", ""}}, "", "out[col] = s;", "col", ""}},
    {"col_max", {"x", "cols", "rows", "out", {{"m", true, "xr[j * cols]", ""}}, "", "out[col] = m;", "col", ""}},
    {"softmax_cols",
     {"x", "cols", "rows", "y",
      {{"m", true, "xr[j * cols]", ""},
       {"s", false, "expf(xr[j * cols] - m)", "const float inv = 1.0f / s;"}},
      "yr[j * cols] = expf(xr[j * cols] - m) * inv;", "", "col", ""}},
    {"batchnorm",
     {"x", "C", "N", "y",
      {{"total", false, "xr[j * C]", "const float mean = total / (float)N;"},
       {"sq", false, "(xr[j * C] - mean) * (xr[j * C] - mean)", "const float rstd = rsqrtf(sq / (float)N + 1e-5f);"}},
      "yr[j * C] = (xr[j * C] - mean) * rstd * gamma[col] + beta[col];", "", "col", ""}},
  };
  return m;
}

std::string init(const red& r) { return r.is_max ? "-INFINITY" : r.is_min ? "INFINITY" : "0.0f"; }

// `v = v op e;` as the statement for reduction r's kind.
std::string combine(const red& r, const std::string& v, const std::string& e) {
  if (r.is_max)
    return v + " = fmaxf(" + v + ", " + e + ");";
  if (r.is_min)
    return v + " = fminf(" + v + ", " + e + ");";
  return v + " += " + e + ";";
}

std::string kind_name(const red& r) { return r.is_max ? "max" : r.is_min ? "min" : "sum"; }

std::string row_ptrs(const row_op& op, const std::string& ind) {
  const bool col = op.line != "row";
  const std::string base = col ? op.line : "(long long)row * " + op.cols;
  std::string s = ind + "const float* xr = " + op.mat + " + " + base + ";\n";
  if (!op.per_elem.empty())
    s += ind + "float* yr = " + op.out + " + " + base + ";\n";
  return s;
}

std::string host(const env::task_spec& t, const style& st, const std::string& grid,
                 const std::string& block, const std::string& smem = "") {
  const std::string zero = ops().at(t.name).zero;
  return "extern \"C\" void solution(" + param_list(t) + ") {\n"
         + (zero.empty() ? std::string() : "  @Z{" + zero + "}Z@\n") +
         "  if (" + ops().at(t.name).rows + " <= 0 || " + ops().at(t.name).cols + " <= 0) return;\n"
         "  const int grid = " + grid + ";\n"
         "  " + st.kernel + "<<<grid, " + block + (smem.empty() ? "" : ", " + smem) + ">>>("
         + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
}

tmpl thread_per_row(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  const int " + op.line + " = blockIdx.x * blockDim.x + threadIdx.x;\n";
  k += "  @G{if (" + op.line + " $>= " + op.rows + ") return;}G@\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = 0; j $< " + op.cols + "; ++j) ";
    if (r.is_max)
      k += r.var + " = @R{fmaxf~|~fminf}R@(" + r.var + ", " + r.elem + ");\n";
    else if (r.is_min)
      k += r.var + " = @R{fminf~|~fmaxf}R@(" + r.var + ", " + r.elem + ");\n";
    else
      k += "@R{" + r.var + " += " + r.elem + "~|~" + r.var + " = " + r.elem + "}R@;\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = 0; j $< " + op.cols + "; ++j) " + op.per_elem + "\n";
  else
    k += "  " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one thread per line, sequential loops along it.", block) + k
             + host(t, st, "(" + op.rows + " + @BS@ - 1) / @BS@", "@BS@");
  return {"thread_per_" + op.line, "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl block_tree(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  __shared__ float partial[@BS@];\n  const int " + op.line + " = blockIdx.x;\n  const int t = threadIdx.x;\n";
  k += row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    std::string p = r.var + "_part";
    k += "  float " + p + " = " + init(r) + ";\n";
    k += "  for (int j = t; j $< " + op.cols + "; j += blockDim.x) " + combine(r, p, r.elem) + "\n";
    k += "  partial[t] = " + p + ";\n  $SYNC\n";
    k += "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n";
    k += "    if (t < off) " + combine(r, "partial[t]", "partial[t + off]") + "\n";
    k += "    $SYNC\n  }\n";
    k += "  const float " + r.var + " = partial[0];\n  $SYNC\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = t; j $< " + op.cols + "; j += blockDim.x) " + op.per_elem + "\n";
  else
    k += "  if (t == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one block per line, shared-memory tree reductions.", block) + k
             + host(t, st, op.rows, "@BS@");
  return {"block_tree", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

// The reduction kinds a row program uses, in the order max, min, sum (one representative each).
std::vector<red> kinds_used(const row_op& op) {
  std::vector<red> out;
  for (const char* want : {"max", "min", "sum"})
    for (auto& r : op.reds)
      if (kind_name(r) == want) {
        out.push_back(r);
        break;
      }
  return out;
}

std::string warp_helpers(const row_op& op, bool all_lanes) {
  std::string s;
  (void)all_lanes;
  for (auto& r : kinds_used(op))
    s += "__device__ float warp_" + kind_name(r) + "(float v) {\n"
         "  for (int off = 16; off @R{> 0~|~> 1}R@; off >>= 1) "
         + combine(r, "v", "__shfl_xor_sync(0xffffffffu, v, off)") + "\n"
         "  return v;\n}\n\n";
  return s;
}

tmpl warp_per_row(const env::task_spec& t, const row_op& op, const style& st, int rpb) {
  std::string R = std::to_string(rpb);
  std::string k = warp_helpers(op, true);
  k += "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  const int lane = threadIdx.x % 32;\n";
  k += "  const int " + op.line + " = blockIdx.x * " + R + " + @I{threadIdx.x / 32~|~threadIdx.x % " + R + "}I@;\n";
  k += "  @G{if (" + op.line + " $>= " + op.rows + ") return;}G@\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = lane; j $< " + op.cols + "; j += 32) " + combine(r, r.var, r.elem) + "\n";
    k += "  " + r.var + " = warp_" + kind_name(r) + "(" + r.var + ");\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = lane; j $< " + op.cols + "; j += 32) " + op.per_elem + "\n";
  else
    k += "  if (lane == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one warp per line (" + R + " lines per block), butterfly shuffles.", 0) + k
             + host(t, st, "(" + op.rows + " + " + R + " - 1) / " + R, std::to_string(32 * rpb));
  return {"warp_per_" + op.line, "rpb" + R, src};
}

tmpl block_shuffle(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = warp_helpers(op, true);
  for (auto& kr : kinds_used(op)) {
    std::string nm = "block_" + kind_name(kr);
    std::string w = "warp_" + kind_name(kr);
    k += "// Every thread gets the block's result; scratch holds 33 floats.\n";
    k += "__device__ float " + nm + "(float v, float* scratch) {\n"
         "  const int lane = threadIdx.x % 32;\n  const int warp = threadIdx.x / 32;\n"
         "  v = " + w + "(v);\n  if (lane == 0) scratch[warp] = v;\n  $SYNC\n"
         "  if (warp == 0) {\n"
         "    v = (lane < (int)(blockDim.x / 32)) ? scratch[lane] : " + init(kr) + ";\n"
         "    v = " + w + "(v);\n    if (lane == 0) scratch[32] = v;\n  }\n  $SYNC\n"
         "  v = scratch[32];\n  $SYNC\n  return v;\n}\n\n";
  }
  k += "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  __shared__ float scratch[33];\n  const int " + op.line + " = blockIdx.x;\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = threadIdx.x; j $< " + op.cols + "; j += blockDim.x) " + combine(r, r.var, r.elem) + "\n";
    k += "  " + r.var + " = block_" + kind_name(r) + "(" + r.var + ", scratch);\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = threadIdx.x; j $< " + op.cols + "; j += blockDim.x) " + op.per_elem + "\n";
  else
    k += "  if (threadIdx.x == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one block per line, warp shuffles then shared memory across warps.", block)
             + k + host(t, st, op.rows, "@BS@");
  return {"block_shuffle", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

// Column tasks only: a 32-column tile per block, TY threads down each column (coalesced rows of
// 32 loads), partials through shared memory, every thread then combines its column's TY partials.
tmpl tile_2d(const env::task_spec& t, const row_op& op, const style& st, int ty) {
  const std::string TY = std::to_string(ty);
  const std::string& L = op.line;
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  __shared__ float tile[" + TY + "][33];\n  const int tx = threadIdx.x;\n  const int ty = threadIdx.y;\n";
  k += "  const int " + L + " = blockIdx.x * 32 + @I{tx~|~ty}I@;\n";
  k += row_ptrs(op, "  ");
  const std::string guard = L + " $< " + op.rows;
  for (auto& r : op.reds) {
    std::string p = r.var + "_part";
    k += "  float " + p + " = " + init(r) + ";\n";
    k += "  @G{if (" + guard + ") }G@for (int j = ty; j $< " + op.cols + "; j += " + TY + ") " + combine(r, p, r.elem) + "\n";
    k += "  tile[ty][tx] = " + p + ";\n  $SYNC\n";
    k += "  float " + r.var + " = tile[0][tx];\n";
    k += "  for (int q = 1; q @R{< " + TY + "~|~< " + std::to_string(ty / 2) + "}R@; ++q) " + combine(r, r.var, "tile[q][tx]") + "\n";
    k += "  $SYNC\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  @G{if (" + guard + ") }G@for (int j = ty; j $< " + op.cols + "; j += " + TY + ") " + op.per_elem + "\n";
  else
    k += "  if (@G{" + guard + " && }G@ty == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "32-column tiles, partials down the rows through shared memory.", 0) + k
             + host(t, st, "(" + op.rows + " + 31) / 32", "dim3(32, " + TY + ")");
  return {"tile_2d", "ty" + TY, src};
}

} // namespace

std::vector<tmpl> rowwise_templates(const env::task_spec& t, rng& r) {
  const auto& op = ops().at(t.name);
  std::vector<tmpl> out;
  {
    auto st = make_style(t, "thread_per_row", r);
    out.push_back(thread_per_row(t, op, st, r.pick(std::vector<int>{32, 64, 128})));
  }
  for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2)) {
    auto st = make_style(t, "block_tree", r);
    out.push_back(block_tree(t, op, st, b));
  }
  for (int rpb : std::vector<int>{4, 8}) {
    auto st = make_style(t, "warp_per_row", r);
    out.push_back(warp_per_row(t, op, st, rpb));
  }
  {
    auto st = make_style(t, "block_shuffle", r);
    out.push_back(block_shuffle(t, op, st, r.pick(std::vector<int>{128, 256})));
  }
  if (op.line == "col") {
    auto st = make_style(t, "tile_2d", r);
    out.push_back(tile_2d(t, op, st, r.pick(std::vector<int>{8, 16})));
  }
  return out;
}

} // namespace leap::corpus::detail
