// Pooling family: maxpool1d (C x L, window k, stride s) and avgpool2d (C x H x W, k x k
// window, stride s). Four strategies each: one thread per output on a flat 1-D grid, a capped
// grid-stride loop, a 2-D (maxpool1d: positions x channels) or 3-D (avgpool2d: columns x rows x
// channels) grid, and a shared-memory tile holding the input span of a block's outputs.
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

namespace {

// ---- maxpool1d ----

// The window max of output (c, o), written to y[q]. The wrong-index bug forgets the stride (o * 1):
// wrong whenever s > 1, yet every read stays inside x (o + t <= (L - k) / s + k - 1 < L). Striding
// by k instead read past x's end when k > s, and what lies there is not reproducible.
std::string mp1_window(const std::string& q) {
  return "    const float* xc = x + (long long)c * L + (long long)o * @I{s~|~1}I@;\n"
         "    float m = xc[0];\n"
         "    for (int t = 1; t $< k; ++t) m = @R{fmaxf~|~fminf}R@(m, xc[t]);\n"
         "    y[" + q + "] = m;\n";
}

const char* mp1_host_head = "  if (C <= 0 || L < k) return;\n  const int OL = (L - k) / s + 1;\n";

tmpl mp1_flat(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  // The output-range checks are no bug sites here: past y's end an out-of-range thread would read
  // x's canary and write the max of canary words, i.e. the canary itself, so the bug would pass.
  std::string k = kernel_open(t, st) + "  const int OL = (L - k) / s + 1;\n";
  if (grid_stride)
    k += "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < C * OL; i += blockDim.x * gridDim.x) {\n";
  else
    k += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= C * OL) return;\n  {\n";
  k += "    const int c = i / OL;\n    const int o = i % OL;\n" + mp1_window("i") + "  }\n}\n\n";
  std::string h = host_fn(t, std::string(mp1_host_head) + "  int grid = (C * OL + @BS@ - 1) / @BS@;\n"
    + (grid_stride ? "  if (grid > 256) grid = 256;\n" : "")
    + "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {grid_stride ? "grid_stride" : "naive", "b" + std::to_string(block),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl mp1_grid2d(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = kernel_open(t, st) + "  const int OL = (L - k) / s + 1;\n"
    "  const int o = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const int c = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (o $>= OL || c >= C) return;}G@\n  {\n" + mp1_window("(long long)c * OL + o") + "  }\n}\n\n";
  std::string h = host_fn(t, std::string(mp1_host_head) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OL + block.x - 1) / block.x, (C + block.y - 1) / block.y);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"grid2d", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

tmpl mp1_smem(const env::task_spec& t, const style& st, int block) {
  std::string k = kernel_open(t, st) +
    "  extern __shared__ float tile[];\n"
    "  const int OL = (L - k) / s + 1;\n  const int c = blockIdx.y;\n"
    "  const int o0 = blockIdx.x * blockDim.x;\n  const int start = o0 * s;\n"
    "  const int span = (blockDim.x - 1) * s + k;\n"
    "  const float* xc = x + (long long)c * L;\n"
    "  for (int j = threadIdx.x; j < span; j += blockDim.x)\n"
    "    tile[j] = (start + j < L) ? xc[start + j] : -INFINITY;\n  $SYNC\n"
    "  const int o = o0 + threadIdx.x;\n"
    "  @G{if (o $< OL) }G@{\n"
    "    const float* w = tile + @I{threadIdx.x * s~|~threadIdx.x}I@;\n    float m = w[0];\n"
    "    for (int t = 1; t $< k; ++t) m = @R{fmaxf~|~fminf}R@(m, w[t]);\n"
    "    y[(long long)c * OL + o] = m;\n  }\n}\n\n";
  std::string h = host_fn(t, std::string(mp1_host_head) +
    "  dim3 grid((OL + @BS@ - 1) / @BS@, C);\n  const size_t smem = ((@BS@ - 1) * s + k) * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, @BS@, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {"smem_tile", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

// ---- avgpool2d ----

// The window mean of output (c, i, j), written to y[q].
std::string ap2_window(const std::string& q) {
  return "    const float* xc = x + ((long long)c * H + (long long)i * s) * W + (long long)j * s;\n"
         "    float acc = 0.0f;\n"
         "    for (int a = 0; a $< k; ++a)\n"
         "      for (int b = 0; b < k; ++b) acc += xc[(long long)a * @I{W~|~OW}I@ + b];\n"
         "    y[" + q + "] = acc / (float)(k * k);\n";
}

const char* ap2_host_head = "  if (C <= 0 || H < k || W < k) return;\n"
                            "  const int OH = (H - k) / s + 1;\n  const int OW = (W - k) / s + 1;\n";
const char* ap2_dims = "  const int OH = (H - k) / s + 1;\n  const int OW = (W - k) / s + 1;\n";

tmpl ap2_flat(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  std::string k = kernel_open(t, st) + ap2_dims;
  if (grid_stride)
    k += "  for (int q = blockIdx.x * blockDim.x + threadIdx.x; q $< C * OH * OW; q += blockDim.x * gridDim.x) {\n";
  else
    k += "  const int q = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (q $>= C * OH * OW) return;}G@\n  {\n";
  k += "    const int j = q % OW;\n    const int i = (q / OW) % OH;\n    const int c = q / (OW * OH);\n"
       + ap2_window("q") + "  }\n}\n\n";
  std::string h = host_fn(t, std::string(ap2_host_head) + "  int grid = (C * OH * OW + @BS@ - 1) / @BS@;\n"
    + (grid_stride ? "  if (grid > 256) grid = 256;\n" : "")
    + "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {grid_stride ? "grid_stride" : "naive", "b" + std::to_string(block),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl ap2_grid3d(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = kernel_open(t, st) + ap2_dims +
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n  const int c = blockIdx.z;\n"
    "  @G{if (i $>= OH || j $>= OW) return;}G@\n  {\n" + ap2_window("((long long)c * OH + i) * OW + j") + "  }\n}\n\n";
  std::string h = host_fn(t, std::string(ap2_host_head) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, C);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"grid3d", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

tmpl ap2_smem(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = kernel_open(t, st) + "  extern __shared__ float tile[];\n" + ap2_dims +
    "  const int tw = (blockDim.x - 1) * s + k;\n  const int th = (blockDim.y - 1) * s + k;\n"
    "  const int c = blockIdx.z;\n"
    "  const int r0 = blockIdx.y * blockDim.y * s;\n  const int c0 = blockIdx.x * blockDim.x * s;\n"
    "  for (int q = threadIdx.y * blockDim.x + threadIdx.x; q < tw * th; q += blockDim.x * blockDim.y) {\n"
    "    const int r = r0 + q / tw;\n    const int col = c0 + q % tw;\n"
    "    tile[q] = (r < H && col < W) ? x[((long long)c * H + r) * W + col] : 0.0f;\n  }\n  $SYNC\n"
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (i $< OH && j $< OW) }G@{\n    float acc = 0.0f;\n"
    "    for (int a = 0; a < k; ++a)\n"
    "      for (int b = 0; b $< k; ++b) acc += tile[(threadIdx.y * s + a) * tw + @I{threadIdx.x * s + b~|~threadIdx.x + b}I@];\n"
    "    y[((long long)c * OH + i) * OW + j] = acc / (float)(k * k);\n  }\n}\n\n";
  std::string h = host_fn(t, std::string(ap2_host_head) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, C);\n"
    "  const size_t smem = (size_t)((block.x - 1) * s + k) * ((block.y - 1) * s + k) * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, block, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_tile", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

} // namespace

std::vector<tmpl> pooling_templates(const env::task_spec& t, rng& r) {
  std::vector<tmpl> out;
  auto S = [&](const std::string& strategy) { return make_style(t, strategy, r); };
  const std::vector<std::pair<int, int>> shapes{{16, 16}, {32, 8}, {64, 4}, {32, 4}};
  if (t.name == "maxpool1d") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(mp1_flat(t, S("naive"), b, false));
    out.push_back(mp1_flat(t, S("grid_stride"), r.pick(std::vector<int>{128, 256}), true));
    auto [bx, by] = r.pick(shapes);
    out.push_back(mp1_grid2d(t, S("grid2d"), bx, by));
    out.push_back(mp1_smem(t, S("smem_tile"), r.pick(std::vector<int>{128, 256})));
  } else if (t.name == "avgpool2d") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(ap2_flat(t, S("naive"), b, false));
    out.push_back(ap2_flat(t, S("grid_stride"), r.pick(std::vector<int>{128, 256}), true));
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(ap2_grid3d(t, S("grid3d"), bx, by));
    out.push_back(ap2_smem(t, S("smem_tile"), 16, r.pick(std::vector<int>{8, 16})));
  }
  return out;
}

} // namespace leap::corpus::detail
