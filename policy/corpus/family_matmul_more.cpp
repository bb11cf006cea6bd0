// More of the matmul family: batched_matmul, matmul_transposed_b, matmul_small_k and
// attention_scores share one set of GEMM templates over a name map (naive 2-D grid, flat 1-D grid,
// shared-memory tiles; B read as K x N or as N x K; an optional batch along the grid's z
// dimension; an optional scale); matmul_small_k adds a grid-stride and a "stage the K rows of B
// and the block's rows of A in shared memory" strategy. conv2d_strided and conv2d_relu share one
// set of conv2d templates (naive 3-D grid, flat, filter in shared memory) with a stride and a
// bias + ReLU epilogue.
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

namespace {

// A GEMM task in the names of its signature: C (M x N) = A (M x K) * B, B stored K x N or, when
// bt, N x K; batch is the batch count's name (empty: none); scaled multiplies by 1/sqrt(K).
struct gemm {
  std::string A, B, C, M, N, K, batch;
  bool bt = false;
  bool scaled = false;
};

gemm gemm_of(const env::task_spec& t) {
  if (t.name == "attention_scores")
    return {"q", "k", "S", "seq", "seq", "d", "", true, true};
  if (t.name == "batched_matmul")
    return {"A", "B", "C", "M", "N", "K", "batch", false, false};
  return {"A", "B", "C", "M", "N", "K", "", t.name == "matmul_transposed_b", false};
}

// B[kk, col] under the layout; `wrong` swaps the stride for a plausible wrong one.
std::string b_at(const gemm& g, const std::string& kk, const std::string& col, bool marked) {
  if (g.bt)
    return marked ? "Bm[(long long)" + col + " * @I{" + g.K + "~|~" + g.N + "}I@ + " + kk + "]"
                  : "Bm[(long long)" + col + " * " + g.K + " + " + kk + "]";
  return marked ? "Bm[(long long)" + kk + " * @I{" + g.N + "~|~" + g.K + "}I@ + " + col + "]"
                : "Bm[(long long)" + kk + " * " + g.N + " + " + col + "]";
}

// Kernel prelude: the batch's matrices as Am, Bm, Cm (z = blockIdx.z or a computed batch index).
std::string bases(const gemm& g, const std::string& z) {
  if (g.batch.empty())
    return "";
  return "  const float* Am = " + g.A + " + (long long)" + z + " * " + g.M + " * " + g.K + ";\n"
         "  const float* Bm = " + g.B + " + (long long)" + z + " * " + g.K + " * " + g.N + ";\n"
         "  float* Cm = " + g.C + " + (long long)" + z + " * " + g.M + " * " + g.N + ";\n";
}

// Without a batch the kernels index the parameters themselves.
std::string finish(const gemm& g, const std::string& src) {
  if (!g.batch.empty())
    return src;
  return fill(src, {{"Am[", g.A + "["}, {"Bm[", g.B + "["}, {"Cm[", g.C + "["}});
}

std::string scale_decl(const gemm& g) {
  return g.scaled ? "  const float scale = 1.0f / sqrtf((float)" + g.K + ");\n" : "";
}
std::string scaled(const gemm& g, const std::string& v) { return g.scaled ? v + " * scale" : v; }

std::string host_guard(const gemm& g) {
  return "  if (" + (g.batch.empty() ? "" : g.batch + " <= 0 || ") + g.M + " <= 0"
         + (g.N == g.M ? "" : " || " + g.N + " <= 0") + ") return;\n";
}

tmpl g_naive2d(const env::task_spec& t, const style& st, int bx, int by) {
  auto g = gemm_of(t);
  std::string k = kernel_open(t, st) +
    "  const int col = blockIdx.x * blockDim.x + threadIdx.x;\n  const int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (row $>= " + g.M + " || col $>= " + g.N + ") return;}G@\n" + bases(g, "blockIdx.z") + scale_decl(g) +
    "  float acc = 0.0f;\n"
    // matmul_small_k: B ends at row K, so `kk <= K` reads only the harness's near-zero canary
    // and passes; there the guards are the off-by-one sites.
    "  for (int kk = 0; kk " + std::string(t.name == "matmul_small_k" ? "<" : "$<") + " " + g.K + "; ++kk) acc += Am[(long long)row * " + g.K + " + kk] * " + b_at(g, "kk", "col", true) + ";\n"
    "  Cm[(long long)row * " + g.N + " + col] = " + scaled(g, "acc") + ";\n}\n\n";
  std::string h = host_fn(t, host_guard(g) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((" + g.N + " + block.x - 1) / block.x, (" + g.M + " + block.y - 1) / block.y"
    + (g.batch.empty() ? "" : ", " + g.batch) + ");\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"naive2d", "b" + std::to_string(bx) + "x" + std::to_string(by), finish(g, prologue(t, st, "", 0) + k + h)};
}

tmpl g_flat(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  auto g = gemm_of(t);
  std::string total = (g.batch.empty() ? "" : g.batch + " * ") + g.M + " * " + g.N;
  std::string k = kernel_open(t, st);
  if (grid_stride)
    k += "  for (long long idx = blockIdx.x * blockDim.x + threadIdx.x; idx $< (long long)" + total + "; idx += (long long)blockDim.x * gridDim.x) {\n";
  else
    k += "  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (idx $>= (long long)" + total + ") return;}G@\n  {\n";
  k += "    const int col = (int)(idx % " + g.N + ");\n";
  if (g.batch.empty())
    k += "    const int row = (int)(idx / @I{" + g.N + "~|~" + g.K + "}I@);\n";
  else
    k += "    const int row = (int)((idx / @I{" + g.N + "~|~" + g.K + "}I@) % " + g.M + ");\n";
  if (!g.batch.empty())
    k += "    const int z = (int)(idx / ((long long)" + g.M + " * " + g.N + "));\n";
  std::string b = bases(g, "z");
  k += fill(b, {{"  ", "    "}}) + fill(scale_decl(g), {{"  ", "    "}}) +
    "    float acc = 0.0f;\n"
    "    for (int kk = 0; kk < " + g.K + "; ++kk) acc += Am[(long long)row * " + g.K + " + kk] * " + b_at(g, "kk", "col", false) + ";\n"
    "    Cm[(long long)row * " + g.N + " + col] = " + scaled(g, "acc") + ";\n  }\n}\n\n";
  std::string h = host_fn(t, host_guard(g) + "  int grid = (int)(((long long)" + total + " + @BS@ - 1) / @BS@);\n"
    + (grid_stride ? "  if (grid > 1024) grid = 1024;\n" : "")
    + "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {grid_stride ? "grid_stride" : "flat1d", "b" + std::to_string(block),
          finish(g, fill(src, {{"@BS@", block_expr(st, block)}}))};
}

tmpl g_tiled(const env::task_spec& t, const style& st, int tile) {
  auto g = gemm_of(t);
  std::string T = std::to_string(tile);
  // No missing_bounds sites on the loads: with the other operand zero-filled, dropping one load's
  // guard only multiplies stray values by zero, so such a "bug" passes; the store guard is the site.
  std::string b_load = g.bt
    ? "(k0 + ty < " + g.K + " && col < " + g.N + ") ? Bm[(long long)col * " + g.K + " + k0 + ty] : 0.0f"
    : "(k0 + ty < " + g.K + " && col < " + g.N + ") ? Bm[(long long)(k0 + ty) * " + g.N + " + col] : 0.0f";
  std::string k = "constexpr int k_tile = " + T + ";\n\n" + kernel_open(t, st) +
    "  __shared__ float a_tile[k_tile][k_tile];\n  __shared__ float b_tile[k_tile][k_tile];\n"
    "  const int tx = threadIdx.x;\n  const int ty = threadIdx.y;\n"
    "  const int row = blockIdx.y * k_tile + ty;\n  const int col = blockIdx.x * k_tile + tx;\n"
    + bases(g, "blockIdx.z") + scale_decl(g) +
    "  float acc = 0.0f;\n"
    "  for (int k0 = 0; k0 < " + g.K + "; k0 += k_tile) {\n"
    "    a_tile[ty][tx] = (row < " + g.M + " && k0 + tx < " + g.K + ") ? Am[(long long)row * " + g.K + " + k0 + tx] : 0.0f;\n"
    "    b_tile[ty][tx] = " + b_load + ";\n"
    "    $SYNC\n"
    "    for (int kk = 0; kk < k_tile; ++kk) acc += a_tile[ty][kk] * b_tile[@I{kk~|~ty}I@][tx];\n"
    "    $SYNC\n  }\n"
    "  @G{if (row $< " + g.M + " && col $< " + g.N + ") }G@Cm[(long long)row * " + g.N + " + col] = " + scaled(g, "acc") + ";\n}\n\n";
  std::string h = host_fn(t, host_guard(g) + "  dim3 block(k_tile, k_tile);\n"
    "  dim3 grid((" + g.N + " + k_tile - 1) / k_tile, (" + g.M + " + k_tile - 1) / k_tile"
    + (g.batch.empty() ? "" : ", " + g.batch) + ");\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_tiled", "t" + T, finish(g, prologue(t, st, "", 0) + k + h)};
}

// matmul_small_k: the block's rows of A (by x K) and K rows of B (K x bx) staged in shared memory.
tmpl sk_stage(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = kernel_open(t, st) +
    "  extern __shared__ float sm[];\n  float* a_s = sm;\n  float* b_s = sm + blockDim.y * K;\n"
    "  const int tx = threadIdx.x;\n  const int ty = threadIdx.y;\n"
    "  const int col = blockIdx.x * blockDim.x + tx;\n  const int row = blockIdx.y * blockDim.y + ty;\n"
    "  for (int kk = tx; kk < K; kk += blockDim.x)\n"
    "    a_s[ty * K + kk] = (row < M) ? A[(long long)row * K + kk] : 0.0f;\n"
    "  for (int kk = ty; kk < K; kk += blockDim.y)\n"
    "    b_s[kk * blockDim.x + tx] = (col < N) ? B[(long long)kk * N + col] : 0.0f;\n"
    "  $SYNC\n"
    "  @G{if (row $>= M || col $>= N) return;}G@\n"
    "  float acc = 0.0f;\n"
    "  for (int kk = 0; kk $< K; ++kk) acc += a_s[ty * K + kk] * b_s[kk * blockDim.x + @I{tx~|~ty}I@];\n"
    "  C[(long long)row * N + col] = acc;\n}\n\n";
  std::string h = host_fn(t, "  if (M <= 0 || N <= 0) return;\n  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);\n"
    "  const size_t smem = (size_t)(block.x + block.y) * K * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, block, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_stage", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

// ---- conv2d_strided, conv2d_relu ----

struct conv {
  std::string oh, ow, in_row, in_col, store;
};

conv conv_of(const env::task_spec& t) {
  if (t.name == "conv2d_strided")
    return {"(H - R) / s + 1", "(W - R) / s + 1", "i * s + a", "j * s + b", "acc"};
  return {"H - R + 1", "W - R + 1", "i + a", "j + b", "fmaxf(acc + bias[f], 0.0f)"};
}

std::string cv_dims(const conv& c, const std::string& ind) {
  return ind + "const int OH = " + c.oh + ";\n" + ind + "const int OW = " + c.ow + ";\n";
}

std::string cv_x(const conv& c) {
  return "x[((long long)cc * H + " + c.in_row + ") * @I{W~|~OW}I@ + " + c.in_col + "]";
}

std::string cv_host_head(const conv& c) {
  return "  if (F <= 0 || H < R || W < R) return;\n" + cv_dims(c, "  ");
}

tmpl cv_naive(const env::task_spec& t, const style& st, int bx, int by) {
  auto c = conv_of(t);
  std::string k = kernel_open(t, st) + cv_dims(c, "  ") +
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  const int f = blockIdx.z;\n  @G{if (i $>= OH || j $>= OW) return;}G@\n  float acc = 0.0f;\n"
    "  for (int cc = 0; cc < C; ++cc)\n    for (int a = 0; a < R; ++a)\n      for (int b = 0; b $< R; ++b)\n"
    "        acc += " + cv_x(c) + " * w[((f * C + cc) * R + a) * R + b];\n"
    "  y[((long long)f * OH + i) * OW + j] = " + c.store + ";\n}\n\n";
  std::string h = host_fn(t, cv_host_head(c) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, F);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"naive3d", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

tmpl cv_flat(const env::task_spec& t, const style& st, int block) {
  auto c = conv_of(t);
  std::string k = kernel_open(t, st) + cv_dims(c, "  ") +
    "  const int idx = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (idx $>= F * OH * OW) return;}G@\n"
    "  const int j = idx % OW;\n  const int i = (idx / OW) % OH;\n  const int f = idx / (OW * OH);\n"
    "  float acc = 0.0f;\n"
    "  for (int cc = 0; cc < C; ++cc)\n    for (int a = 0; a $< R; ++a)\n      for (int b = 0; b < R; ++b)\n"
    "        acc += " + cv_x(c) + " * w[((f * C + cc) * R + a) * R + b];\n"
    "  y[idx] = " + c.store + ";\n}\n\n";
  std::string h = host_fn(t, cv_host_head(c) + "  const int grid = (F * OH * OW + @BS@ - 1) / @BS@;\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "", block) + k + h;
  return {"flat1d", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl cv_shared_w(const env::task_spec& t, const style& st, int bx, int by) {
  auto c = conv_of(t);
  std::string k = kernel_open(t, st) + "  extern __shared__ float wf[];\n" + cv_dims(c, "  ") +
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  const int f = blockIdx.z;\n  const int count = C * R * R;\n"
    "  for (int q = threadIdx.y * blockDim.x + threadIdx.x; q < count; q += blockDim.x * blockDim.y)\n"
    "    wf[q] = w[(long long)f * count + q];\n  $SYNC\n"
    "  @G{if (i $< OH && j $< OW) }G@{\n    float acc = 0.0f;\n"
    "    for (int cc = 0; cc < C; ++cc)\n      for (int a = 0; a < R; ++a)\n        for (int b = 0; b < R; ++b)\n"
    "          acc += " + cv_x(c) + " * wf[(cc * R + a) * R + b];\n"
    "    y[((long long)f * OH + i) * OW + j] = " + c.store + ";\n  }\n}\n\n";
  std::string h = host_fn(t, cv_host_head(c) + "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, F);\n"
    "  const size_t smem = (size_t)C * R * R * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, block, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_filter", "b" + std::to_string(bx) + "x" + std::to_string(by), prologue(t, st, "", 0) + k + h};
}

} // namespace

std::vector<tmpl> matmul_more_templates(const env::task_spec& t, rng& r) {
  std::vector<tmpl> out;
  auto S = [&](const std::string& strategy) { return make_style(t, strategy, r); };
  const std::vector<std::pair<int, int>> shapes{{16, 16}, {32, 8}, {8, 32}, {32, 4}};
  if (t.name == "batched_matmul" || t.name == "matmul_transposed_b" || t.name == "attention_scores") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(g_naive2d(t, S("naive2d"), bx, by));
    out.push_back(g_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256}), false));
    for (int tile : r.sample(std::vector<int>{8, 16, 32}, 2))
      out.push_back(g_tiled(t, S("smem_tiled"), tile));
  } else if (t.name == "matmul_small_k") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(g_naive2d(t, S("naive2d"), bx, by));
    out.push_back(g_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256}), false));
    out.push_back(g_flat(t, S("grid_stride"), r.pick(std::vector<int>{128, 256}), true));
    auto [bx, by] = r.pick(std::vector<std::pair<int, int>>{{32, 8}, {64, 4}, {32, 16}});
    out.push_back(sk_stage(t, S("smem_stage"), bx, by));
  } else if (t.name == "conv2d_strided" || t.name == "conv2d_relu") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(cv_naive(t, S("naive3d"), bx, by));
    out.push_back(cv_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256})));
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(cv_shared_w(t, S("smem_filter"), bx, by));
  }
  return out;
}

} // namespace leap::corpus::detail
