// Reduction family: sum_reduce, dot_product, mse_loss (one block / atomics per block after a
// shared tree / warp shuffles / two passes through a partials buffer; mse_loss scales each
// block's sum by 1/n), histogram (global atomics, grid-stride, shared-memory privatised),
// prefix_scan and exclusive_scan (sequential, block Hillis-Steele, warp-shuffle scan; both block
// scans add the scanned block sums in a third kernel; the exclusive scan is the inclusive scan of
// x shifted right by one). matvec lives with the row family.
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

namespace {

std::string elem_of(const env::task_spec& t) {
  if (t.name == "mse_loss")
    return "(pred[i] - target[i]) * (pred[i] - target[i])";
  return t.name == "dot_product" ? "a[i] * b[i]" : "x[i]";
}

// A block's (or the whole) sum as the task's output: mse_loss is a mean.
std::string scaled(const env::task_spec& t, const std::string& v) {
  return t.name == "mse_loss" ? v + " / (float)n" : v;
}

std::string kernel_params(const env::task_spec& t) { return param_list(t); }

tmpl sum_one_block(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + kernel_params(t) + ") {\n"
    "  __shared__ float partial[@BS@];\n  float acc = 0.0f;\n"
    "  for (int i = threadIdx.x; i $< n; i += blockDim.x) acc += " + elem_of(t) + ";\n"
    "  partial[threadIdx.x] = acc;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n"
    "    if (threadIdx.x < off) partial[threadIdx.x] += partial[threadIdx.x + off];\n    $SYNC\n  }\n"
    "  if (threadIdx.x == 0) out[0] = " + scaled(t, "partial[0]") + ";\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  " + st.kernel + "<<<1, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  auto src = prologue(t, st, "a single block strides over the input, then a shared-memory tree.", block) + k + h;
  return {"one_block", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl sum_atomic_tree(const env::task_spec& t, const style& st, int block, int max_grid) {
  std::string k = "__global__ void " + st.kernel + "(" + kernel_params(t) + ") {\n"
    "  __shared__ float partial[@BS@];\n  float acc = 0.0f;\n"
    "  for (int i = @I{blockIdx.x * blockDim.x + threadIdx.x~|~threadIdx.x}I@; i $< n; i += blockDim.x * gridDim.x) acc += " + elem_of(t) + ";\n"
    "  partial[threadIdx.x] = acc;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n"
    "    if (threadIdx.x < off) partial[threadIdx.x] += partial[threadIdx.x + off];\n    $SYNC\n  }\n"
    "  if (threadIdx.x == 0) atomicAdd(out, " + scaled(t, "partial[0]") + ");\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  @Z{cudaMemset(out, 0, sizeof(float));}Z@\n  if (n <= 0) return;\n"
    "  int grid = (n + @BS@ - 1) / @BS@;\n  if (grid > " + std::to_string(max_grid) + ") grid = " + std::to_string(max_grid) + ";\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  auto src = prologue(t, st, "grid-stride partial sums, a shared-memory tree per block, one atomicAdd per block.", block) + k + h;
  return {"atomic_tree", "b" + std::to_string(block) + ".g" + std::to_string(max_grid),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl sum_atomic_shuffle(const env::task_spec& t, const style& st, int block) {
  std::string k = "__device__ float warp_sum(float v) {\n"
    "  for (int off = 16; off @R{> 0~|~> 1}R@; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);\n"
    "  return v;\n}\n\n"
    "__global__ void " + st.kernel + "(" + kernel_params(t) + ") {\n"
    "  __shared__ float warp_totals[32];\n  float acc = 0.0f;\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i $< n; i += blockDim.x * gridDim.x) acc += " + elem_of(t) + ";\n"
    "  acc = warp_sum(acc);\n  const int lane = threadIdx.x % 32;\n  const int warp = threadIdx.x / 32;\n"
    "  if (lane == 0) warp_totals[warp] = acc;\n  $SYNC\n"
    "  if (warp == 0) {\n    acc = (lane < (int)(blockDim.x / 32)) ? warp_totals[lane] : 0.0f;\n"
    "    acc = warp_sum(acc);\n    if (lane == 0) atomicAdd(out, " + scaled(t, "acc") + ");\n  }\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  @Z{cudaMemset(out, 0, sizeof(float));}Z@\n  if (n <= 0) return;\n"
    "  int grid = (n + @BS@ - 1) / @BS@;\n  if (grid > 1024) grid = 1024;\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  auto src = prologue(t, st, "warp shuffles, warp totals through shared memory, one atomicAdd per block.", block) + k + h;
  return {"atomic_shuffle", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl sum_two_pass(const env::task_spec& t, const style& st, int block) {
  std::string in_params = t.name == "dot_product" ? "const float* a, const float* b"
                          : t.name == "mse_loss"  ? "const float* pred, const float* target"
                                                  : "const float* x";
  std::string in_args = t.name == "dot_product" ? "a, b" : t.name == "mse_loss" ? "pred, target" : "x";
  std::string k = "__global__ void " + st.kernel + "_partials(" + in_params + ", float* partials, int n) {\n"
    "  __shared__ float partial[@BS@];\n  float acc = 0.0f;\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i $< n; i += blockDim.x * gridDim.x) acc += " + elem_of(t) + ";\n"
    "  partial[threadIdx.x] = acc;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off > 0; off >>= 1) {\n"
    "    if (threadIdx.x < off) partial[threadIdx.x] += partial[threadIdx.x + off];\n    $SYNC\n  }\n"
    "  if (threadIdx.x == 0) partials[@I{blockIdx.x~|~threadIdx.x}I@] = " + scaled(t, "partial[0]") + ";\n}\n\n"
    "__global__ void " + st.kernel + "_final(const float* partials, float* out, int count) {\n"
    "  __shared__ float partial[@BS@];\n  float acc = 0.0f;\n"
    "  for (int i = threadIdx.x; i $< count; i += blockDim.x) acc += partials[i];\n"
    "  partial[threadIdx.x] = acc;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n"
    "    if (threadIdx.x < off) partial[threadIdx.x] += partial[threadIdx.x + off];\n    $SYNC\n  }\n"
    "  if (threadIdx.x == 0) out[0] = partial[0];\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  int grid = (n + @BS@ - 1) / @BS@;\n  if (grid > 512) grid = 512;\n  if (grid < 1) grid = 1;\n"
    "  float* partials = nullptr;\n  cudaMalloc(&partials, grid * sizeof(float));\n"
    "  " + st.kernel + "_partials<<<grid, @BS@>>>(" + in_args + ", partials, n);\n"
    "  " + st.kernel + "_final<<<1, @BS@>>>(partials, out, grid);\n"
    "  cudaDeviceSynchronize();\n  cudaFree(partials);\n}\n";
  auto src = prologue(t, st, "two passes: per-block partial sums into a buffer, then one block sums them.", block) + k + h;
  return {"two_pass", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl hist_global(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  if (grid_stride) {
    k += "  for (int i = @I{blockIdx.x * blockDim.x + threadIdx.x~|~threadIdx.x}I@; i $< n; i += blockDim.x * gridDim.x) {\n"
         "    const int v = x[i];\n    @G{if (v >= 0 && v $< bins) }G@atomicAdd(&hist[v], 1);\n  }\n}\n\n";
  } else {
    k += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (i $>= n) return;}G@\n"
         "  const int v = x[i];\n  @G{if (v >= 0 && v $< bins) }G@atomicAdd(&hist[v], 1);\n}\n\n";
  }
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  @Z{cudaMemset(hist, 0, bins * sizeof(int));}Z@\n  if (n <= 0) return;\n"
    "  int grid = (n + @BS@ - 1) / @BS@;\n" + std::string(grid_stride ? "  if (grid > 256) grid = 256;\n" : "") +
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  auto src = prologue(t, st, grid_stride ? "grid-stride loop, one global atomicAdd per in-range value."
                                         : "one thread per value, global atomicAdd for values in range.", block) + k + h;
  return {grid_stride ? "grid_stride_atomic" : "global_atomic", "b" + std::to_string(block),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl hist_shared(const env::task_spec& t, const style& st, int block, int max_grid) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  extern __shared__ int local[];\n"
    "  for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;\n  $SYNC\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i $< n; i += blockDim.x * gridDim.x) {\n"
    "    const int v = x[i];\n    @G{if (v >= 0 && v $< bins) }G@atomicAdd(&local[v], 1);\n  }\n  $SYNC\n"
    "  for (int b = threadIdx.x; b < bins; b += blockDim.x) @R{atomicAdd(&hist[b], local[b])~|~hist[b] = local[b]}R@;\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n"
    "  @Z{cudaMemset(hist, 0, bins * sizeof(int));}Z@\n  if (n <= 0 || bins <= 0) return;\n"
    "  int grid = (n + @BS@ - 1) / @BS@;\n  if (grid > " + std::to_string(max_grid) + ") grid = " + std::to_string(max_grid) + ";\n"
    "  " + st.kernel + "<<<grid, @BS@, bins * sizeof(int)>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  auto src = prologue(t, st, "per-block histogram in shared memory, merged with one atomicAdd per bin.", block) + k + h;
  return {"shared_private", "b" + std::to_string(block) + ".g" + std::to_string(max_grid),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl scan_sequential(const env::task_spec& t, const style& st) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  double acc = 0.0;\n"
    "  for (int i = 0; i $< n; ++i) {\n    "
    + std::string(t.name == "exclusive_scan" ? "@I{y[i] = (float)acc;\n    acc += x[i];~|~acc += x[i];\n    y[i] = (float)acc;}I@"
                                             : "@I{acc += x[i];\n    y[i] = (float)acc;~|~y[i] = (float)acc;\n    acc += x[i];}I@")
    + "\n  }\n}\n\n";
  std::string h = "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
    "  " + st.kernel + "<<<1, 1>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n}\n";
  return {"sequential", "b1", prologue(t, st, "one thread walks the array with a double accumulator.", 0) + k + h};
}

// The value thread i scans: x[i], or x[i - 1] (0 at i == 0) for the exclusive scan.
std::string scan_load(const env::task_spec& t) {
  if (t.name == "exclusive_scan")
    return "@B{(i > 0 && i $< n) ? x[i - 1] : 0.0f~|~x[i - 1]}B@";
  return "@B{(i $< n) ? x[i] : 0.0f~|~x[i]}B@";
}

std::string scan_tail_kernels(const style& st) {
  return "// Inclusive scan of the per-block sums by one thread (a few thousand values at most).\n"
    "__global__ void " + st.kernel + "_sums(float* sums, int count) {\n"
    "  float acc = 0.0f;\n  for (int b = 0; b < count; ++b) {\n    acc += sums[b];\n    sums[b] = acc;\n  }\n}\n\n"
    "__global__ void " + st.kernel + "_add(float* y, const float* sums, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (blockIdx.x > 0 && i < n) y[i] += sums[@I{blockIdx.x - 1~|~blockIdx.x}I@];\n}\n\n";
}

std::string scan_host(const env::task_spec& t, const style& st) {
  return "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
    "  const int blocks = (n + @BS@ - 1) / @BS@;\n  float* sums = nullptr;\n"
    "  cudaMalloc(&sums, blocks * sizeof(float));\n"
    "  " + st.kernel + "_blocks<<<blocks, @BS@>>>(x, y, sums, n);\n"
    "  " + st.kernel + "_sums<<<1, 1>>>(sums, blocks);\n"
    "  " + st.kernel + "_add<<<blocks, @BS@>>>(y, sums, n);\n"
    "  cudaDeviceSynchronize();\n  cudaFree(sums);\n}\n";
}

tmpl scan_hillis_steele(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "_blocks(const float* x, float* y, float* sums, int n) {\n"
    "  __shared__ float buf[@BS@];\n  const int t = threadIdx.x;\n  const int i = blockIdx.x * blockDim.x + t;\n"
    "  buf[t] = " + scan_load(t) + ";\n  $SYNC\n"
    "  for (int off = 1; off < blockDim.x; off <<= 1) {\n"
    "    const float v = (t >= off) ? buf[t - off] : 0.0f;\n    $SYNC\n    buf[t] += v;\n    $SYNC\n  }\n"
    "  @G{if (i $< n) }G@y[i] = buf[t];\n"
    "  if (t == blockDim.x - 1) sums[blockIdx.x] = buf[t];\n}\n\n";
  auto src = prologue(t, st, "Hillis-Steele scan per block in shared memory, then the block sums.", block) + k
             + scan_tail_kernels(st) + scan_host(t, st);
  return {"block_hillis_steele", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl scan_shuffle(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "_blocks(const float* x, float* y, float* sums, int n) {\n"
    "  __shared__ float warp_totals[32];\n  const int t = threadIdx.x;\n  const int lane = t % 32;\n  const int warp = t / 32;\n"
    "  const int i = blockIdx.x * blockDim.x + t;\n"
    "  float v = " + scan_load(t) + ";\n"
    "  for (int off = 1; off < 32; off <<= 1) {\n"
    "    const float u = __shfl_up_sync(0xffffffffu, v, off);\n    if (lane >= off) v += u;\n  }\n"
    "  if (lane == 31) warp_totals[warp] = v;\n  $SYNC\n"
    "  if (warp == 0) {\n    float w = (lane < (int)(blockDim.x / 32)) ? warp_totals[lane] : 0.0f;\n"
    "    for (int off = 1; off < 32; off <<= 1) {\n"
    "      const float u = __shfl_up_sync(0xffffffffu, w, off);\n      if (lane >= off) w += u;\n    }\n"
    "    warp_totals[lane] = w;\n  }\n  $SYNC\n"
    "  if (warp > 0) v += warp_totals[@I{warp - 1~|~warp}I@];\n"
    "  @G{if (i $< n) }G@y[i] = v;\n"
    "  if (t == blockDim.x - 1) sums[blockIdx.x] = v;\n}\n\n";
  auto src = prologue(t, st, "warp-shuffle scan, warp totals scanned by the first warp, then the block sums.", block) + k
             + scan_tail_kernels(st) + scan_host(t, st);
  return {"warp_shuffle_scan", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

} // namespace

std::vector<tmpl> reduction_templates(const env::task_spec& t, rng& r) {
  std::vector<tmpl> out;
  auto S = [&](const std::string& strategy) { return make_style(t, strategy, r); };
  if (t.name == "sum_reduce" || t.name == "dot_product" || t.name == "mse_loss") {
    out.push_back(sum_one_block(t, S("one_block"), r.pick(std::vector<int>{128, 256, 512})));
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(sum_atomic_tree(t, S("atomic_tree"), b, r.pick(std::vector<int>{64, 256, 1024})));
    out.push_back(sum_atomic_shuffle(t, S("atomic_shuffle"), r.pick(std::vector<int>{128, 256, 512})));
    out.push_back(sum_two_pass(t, S("two_pass"), r.pick(std::vector<int>{128, 256})));
  } else if (t.name == "histogram") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(hist_global(t, S("global_atomic"), b, false));
    out.push_back(hist_global(t, S("grid_stride_atomic"), r.pick(std::vector<int>{128, 256}), true));
    for (int b : r.sample(std::vector<int>{128, 256, 512}, 2))
      out.push_back(hist_shared(t, S("shared_private"), b, r.pick(std::vector<int>{64, 128})));
  } else if (t.name == "prefix_scan" || t.name == "exclusive_scan") {
    out.push_back(scan_sequential(t, S("sequential")));
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(scan_hillis_steele(t, S("hillis_steele"), b));
    for (int b : r.sample(std::vector<int>{128, 256, 512}, 2))
      out.push_back(scan_shuffle(t, S("shuffle_scan"), b));
  }
  return out;
}

} // namespace leap::corpus::detail
