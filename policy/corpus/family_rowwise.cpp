// Row-wise family: softmax_rows, layernorm_rows, rmsnorm_rows, row_max, and matvec (a row
// reduction of A against x). One generic row program (a chain of max/sum reductions, then a
// per-element or per-row write) rendered four ways: one thread per row, one block per row with a
// shared-memory tree, one warp per row with shuffles, one block per row with shuffles + shared.
#include "policy/corpus/families.hpp"

#include <map>

namespace leap::corpus::detail {

namespace {

struct red {
  std::string var;
  bool is_max;
  std::string elem;  // uses xr[j] and earlier results
  std::string after; // statement after the reduction
};

struct row_op {
  std::string mat, rows, cols, out;
  std::vector<red> reds;
  std::string per_elem; // uses j, xr, yr; empty = per-row output
  std::string per_row;  // uses row
};

const std::map<std::string, row_op>& ops() {
  static const std::map<std::string, row_op> m{
    {"softmax_rows",
     {"x", "rows", "cols", "y",
      {{"m", true, "xr[j]", ""}, {"s", false, "expf(xr[j] - m)", "const float inv = 1.0f / s;"}},
      "yr[j] = expf(xr[j] - m) * inv;", ""}},
    {"layernorm_rows",
     {"x", "rows", "cols", "y",
      {{"total", false, "xr[j]", "const float mean = total / (float)cols;"},
       {"sq", false, "(xr[j] - mean) * (xr[j] - mean)", "const float rstd = rsqrtf(sq / (float)cols + 1e-5f);"}},
      "yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];", ""}},
    {"layernorm_affine",
     {"x", "rows", "cols", "y",
      {{"total", false, "xr[j]", "const float mean = total / (float)cols;"},
       {"sq", false, "(xr[j] - mean) * (xr[j] - mean)", "const float rstd = rsqrtf(sq / (float)cols + 1e-5f);"}},
      "yr[j] = ((xr[j] - mean) * rstd * gamma[j] + beta[j]) * scale[0];", ""}},
    {"rmsnorm_rows",
     {"x", "rows", "cols", "y",
      {{"ss", false, "xr[j] * xr[j]", "const float rinv = rsqrtf(ss / (float)cols + 1e-6f);"}},
      "yr[j] = xr[j] * rinv * weight[j];", ""}},
    {"row_max", {"x", "rows", "cols", "out", {{"m", true, "xr[j]", ""}}, "", "out[row] = m;"}},
    {"matvec", {"A", "M", "N", "y", {{"s", false, "xr[j] * x[j]", ""}}, "", "y[row] = s;"}},
  };
  return m;
}

std::string init(const red& r) { return r.is_max ? "-INFINITY" : "0.0f"; }

std::string row_ptrs(const row_op& op, const std::string& ind) {
  std::string s = ind + "const float* xr = " + op.mat + " + (long long)row * " + op.cols + ";\n";
  if (!op.per_elem.empty())
    s += ind + "float* yr = " + op.out + " + (long long)row * " + op.cols + ";\n";
  return s;
}

std::string host(const env::task_spec& t, const style& st, const std::string& grid,
                 const std::string& block, const std::string& smem = "") {
  return "extern \"C\" void solution(" + param_list(t) + ") {\n"
         "  if (" + ops().at(t.name).rows + " <= 0 || " + ops().at(t.name).cols + " <= 0) return;\n"
         "  const int grid = " + grid + ";\n"
         "  " + st.kernel + "<<<grid, " + block + (smem.empty() ? "" : ", " + smem) + ">>>("
         + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
}

tmpl thread_per_row(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n";
  k += "  @G{if (row $>= " + op.rows + ") return;}G@\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = 0; j $< " + op.cols + "; ++j) ";
    if (r.is_max)
      k += r.var + " = @R{fmaxf~|~fminf}R@(" + r.var + ", " + r.elem + ");\n";
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
  auto src = prologue(t, st, "one thread per row, sequential loops over the columns.", block) + k
             + host(t, st, "(" + op.rows + " + @BS@ - 1) / @BS@", "@BS@");
  return {"thread_per_row", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl block_tree(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  __shared__ float partial[@BS@];\n  const int row = blockIdx.x;\n  const int t = threadIdx.x;\n";
  k += row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    std::string p = r.var + "_part";
    k += "  float " + p + " = " + init(r) + ";\n";
    k += "  for (int j = t; j $< " + op.cols + "; j += blockDim.x) ";
    k += r.is_max ? p + " = fmaxf(" + p + ", " + r.elem + ");\n" : p + " += " + r.elem + ";\n";
    k += "  partial[t] = " + p + ";\n  $SYNC\n";
    k += "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n";
    k += r.is_max ? "    if (t < off) partial[t] = fmaxf(partial[t], partial[t + off]);\n"
                  : "    if (t < off) partial[t] += partial[t + off];\n";
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
  auto src = prologue(t, st, "one block per row, shared-memory tree reductions.", block) + k
             + host(t, st, op.rows, "@BS@");
  return {"block_tree", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

std::string warp_helpers(const row_op& op, bool all_lanes) {
  bool any_max = false, any_sum = false;
  for (auto& r : op.reds)
    (r.is_max ? any_max : any_sum) = true;
  std::string s;
  (void)all_lanes;
  if (any_max)
    s += "__device__ float warp_max(float v) {\n"
         "  for (int off = 16; off @R{> 0~|~> 1}R@; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));\n"
         "  return v;\n}\n\n";
  if (any_sum)
    s += "__device__ float warp_sum(float v) {\n"
         "  for (int off = 16; off @R{> 0~|~> 1}R@; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);\n"
         "  return v;\n}\n\n";
  return s;
}

tmpl warp_per_row(const env::task_spec& t, const row_op& op, const style& st, int rpb) {
  std::string R = std::to_string(rpb);
  std::string k = warp_helpers(op, true);
  k += "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  const int lane = threadIdx.x % 32;\n";
  k += "  const int row = blockIdx.x * " + R + " + @I{threadIdx.x / 32~|~threadIdx.x % " + R + "}I@;\n";
  k += "  @G{if (row $>= " + op.rows + ") return;}G@\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = lane; j $< " + op.cols + "; j += 32) ";
    k += r.is_max ? r.var + " = fmaxf(" + r.var + ", " + r.elem + ");\n" : r.var + " += " + r.elem + ";\n";
    k += "  " + r.var + " = " + (r.is_max ? "warp_max(" : "warp_sum(") + r.var + ");\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = lane; j $< " + op.cols + "; j += 32) " + op.per_elem + "\n";
  else
    k += "  if (lane == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one warp per row (" + R + " rows per block), butterfly shuffles.", 0) + k
             + host(t, st, "(" + op.rows + " + " + R + " - 1) / " + R, std::to_string(32 * rpb));
  return {"warp_per_row", "rpb" + R, src};
}

tmpl block_shuffle(const env::task_spec& t, const row_op& op, const style& st, int block) {
  std::string k = warp_helpers(op, true);
  bool any_max = false, any_sum = false;
  for (auto& r : op.reds)
    (r.is_max ? any_max : any_sum) = true;
  for (int pass = 0; pass < 2; ++pass) {
    bool is_max = pass == 0;
    if ((is_max && !any_max) || (!is_max && !any_sum))
      continue;
    std::string nm = is_max ? "block_max" : "block_sum";
    std::string w = is_max ? "warp_max" : "warp_sum";
    k += "// Every thread gets the block's result; scratch holds 33 floats.\n";
    k += "__device__ float " + nm + "(float v, float* scratch) {\n"
         "  const int lane = threadIdx.x % 32;\n  const int warp = threadIdx.x / 32;\n"
         "  v = " + w + "(v);\n  if (lane == 0) scratch[warp] = v;\n  $SYNC\n"
         "  if (warp == 0) {\n"
         "    v = (lane < (int)(blockDim.x / 32)) ? scratch[lane] : " + (is_max ? "-INFINITY" : "0.0f") + ";\n"
         "    v = " + w + "(v);\n    if (lane == 0) scratch[32] = v;\n  }\n  $SYNC\n"
         "  v = scratch[32];\n  $SYNC\n  return v;\n}\n\n";
  }
  k += "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  k += "  __shared__ float scratch[33];\n  const int row = blockIdx.x;\n" + row_ptrs(op, "  ");
  for (auto& r : op.reds) {
    k += "  float " + r.var + " = " + init(r) + ";\n";
    k += "  for (int j = threadIdx.x; j $< " + op.cols + "; j += blockDim.x) ";
    k += r.is_max ? r.var + " = fmaxf(" + r.var + ", " + r.elem + ");\n" : r.var + " += " + r.elem + ";\n";
    k += "  " + r.var + " = " + (r.is_max ? "block_max(" : "block_sum(") + r.var + ", scratch);\n";
    if (!r.after.empty())
      k += "  " + r.after + "\n";
  }
  if (!op.per_elem.empty())
    k += "  for (int j = threadIdx.x; j $< " + op.cols + "; j += blockDim.x) " + op.per_elem + "\n";
  else
    k += "  if (threadIdx.x == 0) " + op.per_row + "\n";
  k += "}\n\n";
  auto src = prologue(t, st, "one block per row, warp shuffles then shared memory across warps.", block)
             + k + host(t, st, op.rows, "@BS@");
  return {"block_shuffle", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
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
  return out;
}

} // namespace leap::corpus::detail
