// Matmul-like family: matmul, matmul_bias_relu (naive 2-D / flat 1-D / shared-memory tiles of
// 8, 16, 32), transpose (naive, flat, padded shared tile), conv1d (naive, grid-stride, shared tile
// with halo), conv2d (naive 3-D grid, flat, filter in shared memory), attention_head (three
// kernels through a scores buffer, or one fused block per query row).
#include "policy/corpus/families.hpp"

namespace leap::corpus::detail {

namespace {

std::string mm_store(const env::task_spec& t) {
  return t.name == "matmul_bias_relu" ? "C[(long long)row * N + col] = fmaxf(acc + bias[col], 0.0f);"
                                      : "C[(long long)row * N + col] = acc;";
}

tmpl mm_naive2d(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int col = blockIdx.x * blockDim.x + threadIdx.x;\n  const int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (row $>= M || col $>= N) return;}G@\n  float acc = 0.0f;\n"
    // The wrong-index bug reads B transposed (B[col * K + k]): wrong, but inside B. Striding B's
    // rows by K read past B's end when K > N, and what lies there is not reproducible.
    "  for (int k = 0; k $< K; ++k) acc += A[(long long)row * K + k] * B[@I{(long long)k * N + col~|~(long long)col * K + k}I@];\n"
    "  " + mm_store(t) + "\n}\n\n";
  std::string h = host_fn(t, "  if (M <= 0 || N <= 0) return;\n  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"naive2d", "b" + std::to_string(bx) + "x" + std::to_string(by),
          prologue(t, st, "one thread per output element, 2-D blocks, dot product over K.", 0) + k + h};
}

tmpl mm_flat(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int " + st.idx + " = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  @G{if (" + st.idx + " $>= M * N) return;}G@\n"
    "  const int row = " + st.idx + " / @I{N~|~M}I@;\n  const int col = " + st.idx + " % N;\n  float acc = 0.0f;\n"
    "  for (int k = 0; k $< K; ++k) acc += A[(long long)row * K + k] * B[(long long)k * N + col];\n"
    "  " + mm_store(t) + "\n}\n\n";
  std::string h = host_fn(t, "  if (M <= 0 || N <= 0) return;\n  const int grid = (M * N + @BS@ - 1) / @BS@;\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "flat 1-D grid, one thread per output element.", block) + k + h;
  return {"flat1d", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl mm_tiled(const env::task_spec& t, const style& st, int tile) {
  std::string T = std::to_string(tile);
  std::string k = "constexpr int k_tile = " + T + ";\n\n"
    "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  __shared__ float a_tile[k_tile][k_tile];\n  __shared__ float b_tile[k_tile][k_tile];\n"
    "  const int tx = threadIdx.x;\n  const int ty = threadIdx.y;\n"
    "  const int row = blockIdx.y * k_tile + ty;\n  const int col = blockIdx.x * k_tile + tx;\n  float acc = 0.0f;\n"
    "  for (int k0 = 0; k0 < K; k0 += k_tile) {\n"
    "    a_tile[ty][tx] = @B{(row < M && k0 + tx < K) ? A[(long long)row * K + k0 + tx] : 0.0f~|~A[(long long)row * K + k0 + tx]}B@;\n"
    "    b_tile[ty][tx] = @B{(k0 + ty < K && col < N) ? B[(long long)(k0 + ty) * N + col] : 0.0f~|~B[(long long)(k0 + ty) * N + col]}B@;\n"
    "    $SYNC\n"
    "    for (int k = 0; k < k_tile; ++k) acc += a_tile[ty][k] * b_tile[@I{k~|~ty}I@][tx];\n"
    "    $SYNC\n  }\n"
    "  @G{if (row $< M && col $< N) }G@" + mm_store(t) + "\n}\n\n";
  std::string h = host_fn(t, "  if (M <= 0 || N <= 0) return;\n  dim3 block(k_tile, k_tile);\n"
    "  dim3 grid((N + k_tile - 1) / k_tile, (M + k_tile - 1) / k_tile);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_tiled", "t" + T,
          prologue(t, st, T + "x" + T + " shared-memory tiles; edge loads are zero-filled, stores guarded.", 0) + k + h};
}

tmpl tr_naive2d(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int col = blockIdx.x * blockDim.x + threadIdx.x;\n  const int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (row $< rows && col $< cols) }G@y[(long long)col * @I{rows~|~cols}I@ + row] = x[(long long)row * cols + col];\n}\n\n";
  std::string h = host_fn(t, "  if (rows <= 0 || cols <= 0) return;\n  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"naive2d", "b" + std::to_string(bx) + "x" + std::to_string(by),
          prologue(t, st, "one thread per element, coalesced reads, strided writes.", 0) + k + h};
}

tmpl tr_flat(const env::task_spec& t, const style& st, int block) {
  const auto& i = st.idx;
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int " + i + " = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (" + i + " $>= rows * cols) return;}G@\n"
    "  const int r = " + i + " / cols;\n  const int c = " + i + " % @I{cols~|~rows}I@;\n"
    "  y[(long long)c * rows + r] = x[" + i + "];\n}\n\n";
  std::string h = host_fn(t, "  if (rows <= 0 || cols <= 0) return;\n  const int grid = (rows * cols + @BS@ - 1) / @BS@;\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "flat 1-D grid over the input elements.", block) + k + h;
  return {"flat1d", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl tr_tiled(const env::task_spec& t, const style& st, int tile, int by) {
  std::string T = std::to_string(tile);
  std::string k = "constexpr int k_tile = " + T + ";\n\n"
    "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  __shared__ float tile[k_tile][k_tile + 1];  // +1 avoids bank conflicts\n"
    "  const int bx = blockIdx.x * k_tile;\n  const int by = blockIdx.y * k_tile;\n"
    "  for (int r = threadIdx.y; r < k_tile; r += blockDim.y) {\n"
    "    const int row = by + r;\n    const int col = bx + threadIdx.x;\n"
    "    if (row $< rows && col $< cols) tile[r][threadIdx.x] = x[(long long)row * cols + col];\n  }\n  $SYNC\n"
    "  for (int r = threadIdx.y; r < k_tile; r += blockDim.y) {\n"
    "    const int out_row = bx + r;\n    const int out_col = by + threadIdx.x;\n"
    "    @G{if (out_row $< cols && out_col $< rows) }G@y[(long long)out_row * rows + out_col] = tile[@I{threadIdx.x][r~|~r][threadIdx.x}I@];\n  }\n}\n\n";
  std::string h = host_fn(t, "  if (rows <= 0 || cols <= 0) return;\n  dim3 block(k_tile, " + std::to_string(by) + ");\n"
    "  dim3 grid((cols + k_tile - 1) / k_tile, (rows + k_tile - 1) / k_tile);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_tiled", "t" + T + "x" + std::to_string(by),
          prologue(t, st, "padded shared-memory tile, coalesced reads and writes.", 0) + k + h};
}

tmpl c1_naive(const env::task_spec& t, const style& st, int block, bool grid_stride) {
  const auto& i = st.idx;
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n  const int out_n = n - k + 1;\n";
  std::string inner = "float acc = 0.0f;\n    for (int j = 0; j $< k; ++j) acc += x[" + i + " + j] * w[@I{j~|~k - 1 - j}I@];\n    y[" + i + "] = acc;\n";
  if (grid_stride)
    k += "  for (int " + i + " = blockIdx.x * blockDim.x + threadIdx.x; " + i + " $< out_n; " + i + " += blockDim.x * gridDim.x) {\n    " + inner + "  }\n}\n\n";
  else
    k += "  const int " + i + " = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (" + i + " $>= out_n) return;}G@\n  {\n    " + inner + "  }\n}\n\n";
  std::string h = host_fn(t, "  const int out_n = n - k + 1;\n  if (out_n <= 0) return;\n  int grid = (out_n + @BS@ - 1) / @BS@;\n"
    + std::string(grid_stride ? "  if (grid > 512) grid = 512;\n" : "") +
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, grid_stride ? "grid-stride loop over the outputs." : "one thread per output.", block) + k + h;
  return {grid_stride ? "grid_stride" : "naive", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl c1_shared(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  extern __shared__ float smem[];\n  float* tile = smem;                    // blockDim.x + k - 1 inputs\n"
    "  float* ws = smem + blockDim.x + k - 1;  // the k weights\n"
    "  const int out_n = n - k + 1;\n  const int base = blockIdx.x * blockDim.x;\n"
    "  for (int j = threadIdx.x; j < k; j += blockDim.x) ws[j] = w[j];\n"
    "  for (int j = threadIdx.x; j < blockDim.x + k - 1; j += blockDim.x) {\n"
    "    const int src = base + j;\n    tile[j] = @B{(src < n) ? x[src] : 0.0f~|~x[src]}B@;\n  }\n  $SYNC\n"
    "  const int i = base + threadIdx.x;\n  @G{if (i $< out_n) }G@{\n    float acc = 0.0f;\n"
    "    for (int j = 0; j < k; ++j) acc += tile[@I{threadIdx.x + j~|~threadIdx.x}I@] * ws[j];\n    y[i] = acc;\n  }\n}\n\n";
  std::string h = host_fn(t, "  const int out_n = n - k + 1;\n  if (out_n <= 0) return;\n  const int grid = (out_n + @BS@ - 1) / @BS@;\n"
    "  const size_t smem = (@BS@ + 2 * k - 1) * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, @BS@, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "inputs with halo and the filter staged in shared memory.", block) + k + h;
  return {"smem_halo", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

const char* c2_x = "x[((long long)c * H + i + a) * @I{W~|~OW}I@ + j + b]";

tmpl c2_naive(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n"
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;  // output column\n"
    "  const int i = blockIdx.y * blockDim.y + threadIdx.y;  // output row\n  const int f = blockIdx.z;\n"
    "  @G{if (i $>= OH || j $>= OW) return;}G@\n  float acc = 0.0f;\n"
    "  for (int c = 0; c < C; ++c)\n    for (int a = 0; a < R; ++a)\n      for (int b = 0; b $< R; ++b)\n"
    "        acc += " + std::string(c2_x) + " * w[((f * C + c) * R + a) * R + b];\n"
    "  y[((long long)f * OH + i) * OW + j] = acc;\n}\n\n";
  std::string h = host_fn(t, "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n  if (OH <= 0 || OW <= 0 || F <= 0) return;\n"
    "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, F);\n"
    "  " + st.kernel + "<<<grid, block>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"naive3d", "b" + std::to_string(bx) + "x" + std::to_string(by),
          prologue(t, st, "one thread per output, filters along the grid's z dimension.", 0) + k + h};
}

tmpl c2_flat(const env::task_spec& t, const style& st, int block) {
  const std::string q = st.idx == "i" ? "idx" : st.idx; // `i` is the output row here
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n"
    "  const int " + q + " = blockIdx.x * blockDim.x + threadIdx.x;\n  @G{if (" + q + " $>= F * OH * OW) return;}G@\n"
    "  const int j = " + q + " % OW;\n  const int i = (" + q + " / OW) % OH;\n  const int f = " + q + " / (OW * OH);\n"
    "  float acc = 0.0f;\n"
    "  for (int c = 0; c < C; ++c)\n    for (int a = 0; a $< R; ++a)\n      for (int b = 0; b < R; ++b)\n"
    "        acc += " + std::string(c2_x) + " * w[((f * C + c) * R + a) * R + b];\n"
    "  y[" + q + "] = acc;\n}\n\n";
  std::string h = host_fn(t, "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n  if (OH <= 0 || OW <= 0 || F <= 0) return;\n"
    "  const int total = F * OH * OW;\n  const int grid = (total + @BS@ - 1) / @BS@;\n"
    "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "flat 1-D grid over all outputs.", block) + k + h;
  return {"flat1d", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl c2_shared_w(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n"
    "  extern __shared__ float wf[];  // the C*R*R weights of filter f\n"
    "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n"
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  const int f = blockIdx.z;\n  const int count = C * R * R;\n"
    "  for (int q = threadIdx.y * blockDim.x + threadIdx.x; q < count; q += blockDim.x * blockDim.y)\n"
    "    wf[q] = w[(long long)f * count + q];\n  $SYNC\n"
    "  @G{if (i $< OH && j $< OW) }G@{\n    float acc = 0.0f;\n"
    "    for (int c = 0; c < C; ++c)\n      for (int a = 0; a < R; ++a)\n        for (int b = 0; b < R; ++b)\n"
    "          acc += " + std::string(c2_x) + " * wf[(c * R + a) * R + b];\n"
    "    y[((long long)f * OH + i) * OW + j] = acc;\n  }\n}\n\n";
  std::string h = host_fn(t, "  const int OH = H - R + 1;\n  const int OW = W - R + 1;\n  if (OH <= 0 || OW <= 0 || F <= 0) return;\n"
    "  dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n"
    "  dim3 grid((OW + block.x - 1) / block.x, (OH + block.y - 1) / block.y, F);\n"
    "  const size_t smem = (size_t)C * R * R * sizeof(float);\n"
    "  " + st.kernel + "<<<grid, block, smem>>>(" + arg_list(t) + ");\n  cudaDeviceSynchronize();\n");
  return {"smem_filter", "b" + std::to_string(bx) + "x" + std::to_string(by),
          prologue(t, st, "the block's filter staged in shared memory.", 0) + k + h};
}

tmpl at_three(const env::task_spec& t, const style& st, int bx, int by) {
  std::string k = "__global__ void " + st.kernel + "_scores(const float* q, const float* k, float* S, int seq, int d, float scale) {\n"
    "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (i $>= seq || j $>= seq) return;}G@\n  float acc = 0.0f;\n"
    "  for (int c = 0; c < d; ++c) acc += q[(long long)i * d + c] * k[@I{(long long)j * d + c~|~(long long)c * seq + j}I@];\n"
    "  S[(long long)i * seq + j] = acc * scale;\n}\n\n"
    "__global__ void " + st.kernel + "_softmax(float* S, int seq) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= seq) return;\n"
    "  float* r = S + (long long)i * seq;\n  float m = -INFINITY;\n"
    "  for (int j = 0; j < seq; ++j) m = @R{fmaxf~|~fminf}R@(m, r[j]);\n"
    "  float s = 0.0f;\n  for (int j = 0; j < seq; ++j) {\n    r[j] = expf(r[j] - m);\n    s += r[j];\n  }\n"
    "  const float inv = 1.0f / s;\n  for (int j = 0; j $< seq; ++j) r[j] *= inv;\n}\n\n"
    "__global__ void " + st.kernel + "_pv(const float* P, const float* v, float* out, int seq, int d) {\n"
    "  const int c = blockIdx.x * blockDim.x + threadIdx.x;\n  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  @G{if (i $>= seq || c $>= d) return;}G@\n  float acc = 0.0f;\n"
    "  for (int j = 0; j < seq; ++j) acc += P[(long long)i * seq + j] * v[(long long)j * d + c];\n"
    "  out[(long long)i * d + c] = acc;\n}\n\n";
  std::string B = "dim3 block(" + std::to_string(bx) + ", " + std::to_string(by) + ");\n";
  std::string h = host_fn(t, "  if (seq <= 0 || d <= 0) return;\n  float* S = nullptr;\n"
    "  cudaMalloc(&S, (size_t)seq * seq * sizeof(float));\n  const float scale = 1.0f / sqrtf((float)d);\n  " + B +
    "  dim3 grid_s((seq + block.x - 1) / block.x, (seq + block.y - 1) / block.y);\n"
    "  " + st.kernel + "_scores<<<grid_s, block>>>(q, k, S, seq, d, scale);\n"
    "  " + st.kernel + "_softmax<<<(seq + 63) / 64, 64>>>(S, seq);\n"
    "  dim3 grid_o((d + block.x - 1) / block.x, (seq + block.y - 1) / block.y);\n"
    "  " + st.kernel + "_pv<<<grid_o, block>>>(S, v, out, seq, d);\n"
    "  cudaDeviceSynchronize();\n  cudaFree(S);\n");
  return {"three_kernels", "b" + std::to_string(bx) + "x" + std::to_string(by),
          prologue(t, st, "scores, row softmax and P*V as three kernels through a seq x seq buffer.", 0) + k + h};
}

tmpl at_fused(const env::task_spec& t, const style& st, int block) {
  std::string k = "__global__ void " + st.kernel + "(const float* q, const float* k, const float* v, float* out, int seq, int d, float scale) {\n"
    "  extern __shared__ float sm[];\n  float* p = sm;            // the row's seq scores\n"
    "  float* part = sm + seq;   // blockDim.x partials\n  const int i = blockIdx.x;\n  const int t = threadIdx.x;\n"
    "  float m_part = -INFINITY;\n"
    "  for (int j = t; j $< seq; j += blockDim.x) {\n    float acc = 0.0f;\n"
    "    for (int c = 0; c < d; ++c) acc += q[(long long)i * d + c] * k[(long long)j * d + c];\n"
    "    p[j] = acc * scale;\n    m_part = fmaxf(m_part, p[j]);\n  }\n"
    "  part[t] = m_part;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off @R{> 0~|~> 1}R@; off >>= 1) {\n"
    "    if (t < off) part[t] = fmaxf(part[t], part[t + off]);\n    $SYNC\n  }\n"
    "  const float m = part[0];\n  $SYNC\n"
    "  float s_part = 0.0f;\n  for (int j = t; j < seq; j += blockDim.x) {\n"
    "    const float e = expf(p[j] - m);\n    p[j] = e;\n    s_part += e;\n  }\n"
    "  part[t] = s_part;\n  $SYNC\n"
    "  for (int off = blockDim.x / 2; off > 0; off >>= 1) {\n"
    "    if (t < off) part[t] += part[t + off];\n    $SYNC\n  }\n"
    "  const float inv = 1.0f / part[0];\n"
    "  for (int c = t; c < d; c += blockDim.x) {\n    float acc = 0.0f;\n"
    "    for (int j = 0; j < seq; ++j) acc += p[j] * v[(long long)j * d + @I{c~|~t}I@];\n"
    "    out[(long long)i * d + c] = acc * inv;\n  }\n}\n\n";
  std::string h = host_fn(t, "  if (seq <= 0 || d <= 0) return;\n  const float scale = 1.0f / sqrtf((float)d);\n"
    "  const size_t smem = (size_t)(seq + @BS@) * sizeof(float);\n"
    "  " + st.kernel + "<<<seq, @BS@, smem>>>(q, k, v, out, seq, d, scale);\n  cudaDeviceSynchronize();\n");
  auto src = prologue(t, st, "one block per query row: scores in shared memory, tree max and sum, then P*V.", block) + k + h;
  return {"fused_row_block", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

} // namespace

std::vector<tmpl> matmul_templates(const env::task_spec& t, rng& r) {
  std::vector<tmpl> out;
  auto S = [&](const std::string& strategy) { return make_style(t, strategy, r); };
  const std::vector<std::pair<int, int>> shapes{{16, 16}, {32, 8}, {8, 32}, {32, 4}};
  if (t.name == "matmul" || t.name == "matmul_bias_relu") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(mm_naive2d(t, S("naive2d"), bx, by));
    out.push_back(mm_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256})));
    for (int tile : r.sample(std::vector<int>{8, 16, 32}, 2))
      out.push_back(mm_tiled(t, S("smem_tiled"), tile));
  } else if (t.name == "transpose") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(tr_naive2d(t, S("naive2d"), bx, by));
    out.push_back(tr_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256, 512})));
    out.push_back(tr_tiled(t, S("smem_tiled"), 32, r.pick(std::vector<int>{8, 16})));
    out.push_back(tr_tiled(t, S("smem_tiled"), 16, r.pick(std::vector<int>{4, 16})));
  } else if (t.name == "conv1d") {
    for (int b : r.sample(std::vector<int>{64, 128, 256, 512}, 2))
      out.push_back(c1_naive(t, S("naive"), b, false));
    out.push_back(c1_naive(t, S("grid_stride"), r.pick(std::vector<int>{128, 256}), true));
    for (int b : r.sample(std::vector<int>{128, 256, 512}, 2))
      out.push_back(c1_shared(t, S("smem_halo"), b));
  } else if (t.name == "conv2d") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(c2_naive(t, S("naive3d"), bx, by));
    out.push_back(c2_flat(t, S("flat1d"), r.pick(std::vector<int>{128, 256})));
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(c2_shared_w(t, S("smem_filter"), bx, by));
  } else if (t.name == "attention_head") {
    for (auto [bx, by] : r.sample(shapes, 2))
      out.push_back(at_three(t, S("three_kernels"), bx, by));
    for (int b : r.sample(std::vector<int>{64, 128, 256}, 2))
      out.push_back(at_fused(t, S("fused_row_block"), b));
  }
  return out;
}

} // namespace leap::corpus::detail
