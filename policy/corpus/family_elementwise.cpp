// Elementwise family: vector_add, relu, leaky_relu, sigmoid, gelu, saxpy, elementwise_mul, silu,
// softplus, hardswish, clamp.
// Strategies: one thread per element, grid-stride loop, float4 with scalar tail, 4 elements per
// thread (ILP); block sizes 64-512; inline expression or a __device__ helper.
#include "policy/corpus/families.hpp"

#include <map>

namespace leap::corpus::detail {

namespace {

struct ew_op {
  std::vector<std::string> in;      // input arrays
  std::string out;
  std::string expr;                 // in terms of v0, v1 (inputs) and the scalars
  std::string pre;                  // statements run once per thread before the element work
  std::vector<std::string> scalars; // what pre loads (saxpy's s, clamp's low and high)
};

const std::map<std::string, ew_op>& ops() {
  static const std::map<std::string, ew_op> m{
    {"vector_add", {{"a", "b"}, "c", "v0 + v1", "", {}}},
    {"elementwise_mul", {{"a", "b"}, "c", "v0 * v1", "", {}}},
    {"relu", {{"x"}, "y", "fmaxf(v0, 0.0f)", "", {}}},
    {"leaky_relu", {{"x"}, "y", "(v0 > 0.0f ? v0 : 0.01f * v0)", "", {}}},
    {"sigmoid", {{"x"}, "y", "1.0f / (1.0f + expf(-v0))", "", {}}},
    {"gelu", {{"x"}, "y", "0.5f * v0 * (1.0f + tanhf(0.7978845608f * (v0 + 0.044715f * v0 * v0 * v0)))", "", {}}},
    {"saxpy", {{"x", "y"}, "out", "s * v0 + v1", "const float s = alpha[0];", {"s"}}},
    {"silu", {{"x"}, "y", "v0 / (1.0f + expf(-v0))", "", {}}},
    {"softplus", {{"x"}, "y", "(v0 > 20.0f ? v0 : log1pf(expf(v0)))", "", {}}},
    {"hardswish", {{"x"}, "y", "v0 * fminf(fmaxf(v0 + 3.0f, 0.0f), 6.0f) / 6.0f", "", {}}},
    {"clamp", {{"x"}, "y", "fminf(fmaxf(v0, low), high)", "const float low = lo[0];\nconst float high = hi[0];",
               {"low", "high"}}},
  };
  return m;
}

// The value of the element op on inputs given as expressions.
std::string apply(const ew_op& op, const style& st, const std::vector<std::string>& vals) {
  if (st.helper) {
    std::string call = "apply_op(";
    for (std::size_t k = 0; k < vals.size(); ++k)
      call += (k ? ", " : "") + vals[k];
    for (auto& sc : op.scalars)
      call += ", " + sc;
    return call + ")";
  }
  subs_t subs;
  for (std::size_t k = 0; k < vals.size(); ++k)
    subs.emplace_back("v" + std::to_string(k), vals[k]);
  return fill(op.expr, subs);
}

std::string helper(const ew_op& op, const style& st) {
  if (!st.helper)
    return "";
  std::string params;
  for (std::size_t k = 0; k < op.in.size(); ++k)
    params += (k ? ", " : "") + std::string("float v") + std::to_string(k);
  for (auto& sc : op.scalars)
    params += ", float " + sc;
  return "__device__ __forceinline__ float apply_op(" + params + ") {\n  return " + op.expr + ";\n}\n\n";
}

std::string store(const ew_op& op, const style& st, const std::string& i) {
  std::vector<std::string> vals;
  for (auto& a : op.in)
    vals.push_back(a + "[" + i + "]");
  return op.out + "[" + i + "] = " + apply(op, st, vals) + ";";
}

std::string pre_line(const ew_op& op) {
  return op.pre.empty() ? "" : "  " + fill(op.pre, {{"\n", "\n  "}}) + "\n";
}

tmpl naive(const env::task_spec& t, const ew_op& op, const style& st, int block, bool early_return) {
  std::string body;
  const auto& i = st.idx;
  body += "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n";
  body += "  const int " + i + " = blockIdx.x * @I{blockDim.x~|~blockDim.y}I@ + threadIdx.x;\n";
  if (early_return) {
    body += "  @G{if (" + i + " $>= n) return;}G@\n" + pre_line(op);
    body += "  " + store(op, st, i) + "\n";
  } else {
    body += pre_line(op);
    body += "  @G{if (" + i + " $< n) }G@{\n    " + store(op, st, i) + "\n  }\n";
  }
  body += "}\n\n";
  std::string host = "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
                     "  const int grid = (n + @BS@ - 1) / @BS@;\n"
                     "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n"
                     "  cudaDeviceSynchronize();\n}\n";
  std::string what = "one thread per element, " + std::to_string(block) + " threads per block.";
  auto src = prologue(t, st, what, block) + helper(op, st) + body + host;
  return {"naive", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl grid_stride(const env::task_spec& t, const ew_op& op, const style& st, int block, int max_grid) {
  const auto& i = st.idx;
  std::string body = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n" + pre_line(op);
  body += "  const int stride = blockDim.x * gridDim.x;\n";
  body += "  for (int " + i + " = @I{blockIdx.x * blockDim.x + threadIdx.x~|~threadIdx.x}I@; " + i
          + " $< n; " + i + " += stride) {\n";
  body += "    " + store(op, st, i) + "\n  }\n}\n\n";
  std::string host = "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
                     "  int grid = (n + @BS@ - 1) / @BS@;\n"
                     "  if (grid > " + std::to_string(max_grid) + ") grid = " + std::to_string(max_grid) + ";\n"
                     "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n"
                     "  cudaDeviceSynchronize();\n}\n";
  std::string what = "grid-stride loop, at most " + std::to_string(max_grid) + " blocks of "
                     + std::to_string(block) + " threads.";
  auto src = prologue(t, st, what, block) + helper(op, st) + body + host;
  return {"grid_stride", "b" + std::to_string(block) + ".g" + std::to_string(max_grid),
          fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl vec4(const env::task_spec& t, const ew_op& op, const style& st, int block) {
  const auto& i = st.idx;
  std::string kparams = param_list(t) + ", int use_vec4";
  std::string body = "__global__ void " + st.kernel + "(" + kparams + ") {\n" + pre_line(op);
  body += "  const int stride = blockDim.x * gridDim.x;\n"
          "  const int start = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "  int tail = 0;\n"
          "  if (use_vec4) {\n"
          "    const int n4 = n / 4;\n";
  for (std::size_t k = 0; k < op.in.size(); ++k)
    body += "    const float4* in" + std::to_string(k) + " = reinterpret_cast<const float4*>(" + op.in[k] + ");\n";
  body += "    float4* out4 = reinterpret_cast<float4*>(" + op.out + ");\n";
  body += "    for (int " + i + " = start; " + i + " $< n4; " + i + " += stride) {\n";
  for (std::size_t k = 0; k < op.in.size(); ++k)
    body += "      const float4 p" + std::to_string(k) + " = in" + std::to_string(k) + "[" + i + "];\n";
  body += "      float4 r;\n";
  for (std::string c : {"x", "y", "z", "w"}) {
    std::vector<std::string> vals;
    for (std::size_t k = 0; k < op.in.size(); ++k) {
      std::string comp = c == "w" ? "@I{w~|~z}I@" : c;
      vals.push_back("p" + std::to_string(k) + "." + comp);
    }
    body += "      r." + c + " = " + apply(op, st, vals) + ";\n";
  }
  body += "      out4[" + i + "] = r;\n    }\n    tail = n4 * 4;\n  }\n";
  body += "  for (int " + i + " = tail + start; " + i + " $< n; " + i + " += stride) {\n    "
          + store(op, st, i) + "\n  }\n}\n\n";
  std::string align;
  for (auto& a : op.in)
    align += "reinterpret_cast<uintptr_t>(" + a + ") % 16 == 0 && ";
  align += "reinterpret_cast<uintptr_t>(" + op.out + ") % 16 == 0";
  std::string host = "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
                     "  // float4 accesses need 16-byte alignment; otherwise the scalar loop does everything.\n"
                     "  const int aligned = (" + align + ") ? 1 : 0;\n"
                     "  int grid = (n / 4 + @BS@ - 1) / @BS@;\n"
                     "  if (grid < 1) grid = 1;\n"
                     "  if (grid > 2048) grid = 2048;\n"
                     "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ", aligned);\n"
                     "  cudaDeviceSynchronize();\n}\n";
  std::string what = "float4-vectorised grid-stride loop with a scalar tail, " + std::to_string(block)
                     + " threads per block.";
  auto src = prologue(t, st, what, block) + helper(op, st) + body + host;
  return {"float4", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

tmpl ilp4(const env::task_spec& t, const ew_op& op, const style& st, int block) {
  const auto& i = st.idx;
  std::string body = "__global__ void " + st.kernel + "(" + param_list(t) + ") {\n" + pre_line(op);
  body += "  const int base = blockIdx.x * blockDim.x * @I{4~|~2}I@ + threadIdx.x;\n";
  body += "#pragma unroll\n  for (int k = 0; k < 4; ++k) {\n";
  body += "    const int " + i + " = base + k * blockDim.x;\n";
  body += "    @G{if (" + i + " $< n) }G@" + store(op, st, i) + "\n  }\n}\n\n";
  std::string host = "extern \"C\" void solution(" + param_list(t) + ") {\n  if (n <= 0) return;\n"
                     "  const int per_block = @BS@ * 4;\n"
                     "  const int grid = (n + per_block - 1) / per_block;\n"
                     "  " + st.kernel + "<<<grid, @BS@>>>(" + arg_list(t) + ");\n"
                     "  cudaDeviceSynchronize();\n}\n";
  std::string what = "four elements per thread, " + std::to_string(block) + " threads per block.";
  auto src = prologue(t, st, what, block) + helper(op, st) + body + host;
  return {"ilp4", "b" + std::to_string(block), fill(src, {{"@BS@", block_expr(st, block)}})};
}

} // namespace

std::vector<tmpl> elementwise_templates(const env::task_spec& t, rng& r) {
  const auto& op = ops().at(t.name);
  std::vector<int> blocks{64, 128, 256, 512};
  std::vector<tmpl> out;
  for (int b : r.sample(blocks, 2)) {
    auto st = make_style(t, "naive", r);
    out.push_back(naive(t, op, st, b, r.coin()));
  }
  for (int b : r.sample(blocks, 2)) {
    auto st = make_style(t, "grid_stride", r);
    out.push_back(grid_stride(t, op, st, b, r.pick(std::vector<int>{128, 1024, 4096})));
  }
  {
    auto st = make_style(t, "float4", r);
    out.push_back(vec4(t, op, st, r.pick(std::vector<int>{128, 256})));
  }
  {
    auto st = make_style(t, "ilp4", r);
    out.push_back(ilp4(t, op, st, r.pick(blocks)));
  }
  return out;
}

} // namespace leap::corpus::detail
