// Indexing family: embedding (a gather of table rows: one thread per output element,
// grid-stride, one block per id, one warp per id) and scatter_add (global float atomics, a
// grid-stride loop of them, a per-block copy of out in shared memory merged with one atomicAdd per
// bin; out is zeroed first since it arrives uninitialised).
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

namespace {

// ---- embedding ----

tmpl emb_flat(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  std::string k = kernel_open(t, st);
  if (grid_stride)
    k += "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i $< n_ids * dim; i += blockDim.x * gridDim.x) {\n";
  else
    k += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (i $>= n_ids * dim) return;}G@\n  {\n";
  k += "    const int r = i / @I{dim~|~n_ids}I@;\n    const int c = i % dim;\n"
       "    out[i] = table[(long long)ids[r] * dim + c];\n  }\n}\n\n";
  std::string h = host_fn(t, "  if (n_ids <= 0 || dim <= 0) return;\n  int grid = (n_ids * dim + @BS@ - 1) / @BS@;\n"
    + std::string(grid_stride ? "  if (grid > 1024) grid = 1024;\n" : "")
    + "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {grid_stride ? "grid_stride" : "naive", "b" + std::to_string(block),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl emb_row_block(const env::task_spec& t, const style& st, int block) {
  std::string k = kernel_open(t, st) +
    "  const int r = blockIdx.x;\n"
    "  const float* src = table + (long long)ids[r] * @I{dim~|~vocab}I@;\n"
    "  float* dst = out + (long long)r * dim;\n"
    "  for (int c = threadIdx.x; c $< dim; c += blockDim.x) dst[c] = src[c];\n}\n\n";
  std::string h = host_fn(t, "  if (n_ids <= 0 || dim <= 0) return;\n"
    "  " + st.kernel + "<<<n_ids, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {"block_per_row", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl emb_warp_row(const env::task_spec& t, const style& st, int rpb) {
  std::string R = std::to_string(rpb);
  std::string k = kernel_open(t, st) +
    "  const int lane = threadIdx.x % 32;\n"
    "  const int r = blockIdx.x * " + R + " + @I{threadIdx.x / 32~|~threadIdx.x % " + R + "}I@;\n"
    "  @G{if (r $>= n_ids) return;}G@\n"
    "  const long long from = (long long)ids[r] * dim;\n  const long long to = (long long)r * dim;\n"
    "  for (int c = lane; c $< dim; c += 32) out[to + c] = table[from + c];\n}\n\n";
  std::string h = host_fn(t, "  if (n_ids <= 0 || dim <= 0) return;\n"
    "  const int grid = (n_ids + " + R + " - 1) / " + R + ";\n"
    "  " + st.kernel + "<<<grid, " + std::to_string(32 * rpb) + ">>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"warp_per_row", "rpb" + R, prologue(t, st, "", 0) + k + h};
}

// ---- scatter_add ----

const char* sa_zero = "  @Z{cudaMemset(out, 0, n_out * sizeof(float));}Z@\n  if (n <= 0) return;\n";

tmpl sa_global(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  std::string k = kernel_open(t, st);
  if (grid_stride)
    k += "  for (int i = @I{blockIdx.x * blockDim.x + threadIdx.x~|~threadIdx.x}I@; i $< n; i += blockDim.x * gridDim.x)\n"
         "    atomicAdd(&out[idx[i]], src[i]);\n}\n\n";
  else
    k += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (i $>= n) return;}G@\n"
         "  atomicAdd(&out[idx[i]], src[@I{i~|~idx[i]}I@]);\n}\n\n";
  std::string h = host_fn(t, std::string(sa_zero) + "  int grid = (n + @BS@ - 1) / @BS@;\n"
    + (grid_stride ? "  if (grid > 256) grid = 256;\n" : "")
    + "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {grid_stride ? "grid_stride_atomic" : "global_atomic", "b" + std::to_string(block),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl sa_shared(const env::task_spec& t, const style& st, int block, int max_grid) {
  std::string k = kernel_open(t, st) +
    "  extern __shared__ float local[];\n"
    "  for (int b = threadIdx.x; b < n_out; b += blockDim.x) local[b] = 0.0f;\n  $SYNC\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i $< n; i += blockDim.x * gridDim.x)\n"
    "    atomicAdd(&local[idx[i]], src[i]);\n  $SYNC\n"
    "  for (int b = threadIdx.x; b < n_out; b += blockDim.x) @R{atomicAdd(&out[b], local[b])~|~out[b] = local[b]}R@;\n}\n\n";
  std::string h = host_fn(t, std::string(sa_zero) + "  int grid = (n + @BS@ - 1) / @BS@;\n"
    "  if (grid > " + std::to_string(max_grid) + ") grid = " + std::to_string(max_grid) + ";\n"
    "  " + st.kernel + "<<<grid, @BS@, n_out * sizeof(float)>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {"shared_private", "b" + std::to_string(block) + ".g" + std::to_string(max_grid),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

} // namespace

std::vector<tmpl> indexing_templates(const env::task_spec& t, rng& r) {
  std::vector<tmpl> out;
  auto S = [&](const std::string& strategy) { return make_style(t, strategy, r); };
  if (t.name == "embedding") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(emb_flat(t, S("naive"), b, false));
    out.push_back(emb_flat(t, S("grid_stride"), r.pick(std::vector<int>{128, 256}), true));
    out.push_back(emb_row_block(t, S("block_per_row"), r.pick(std::vector<int>{32, 64, 128})));
    out.push_back(emb_warp_row(t, S("warp_per_row"), r.pick(std::vector<int>{4, 8})));
  } else if (t.name == "scatter_add") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(sa_global(t, S("global_atomic"), b, false));
    out.push_back(sa_global(t, S("grid_stride_atomic"), r.pick(std::vector<int>{128, 256}), true));
    for (int b : r.sample(std::vector<int>{128, 256, 512}, 2))
      out.push_back(sa_shared(t, S("shared_private"), b, r.pick(std::vector<int>{32, 64})));
  }
  return out;
}

} // namespace leap::corpus::detail
