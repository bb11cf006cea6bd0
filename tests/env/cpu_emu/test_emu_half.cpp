// Tests of the CPU emulation's half and bfloat16 support (shim <cuda_fp16.h> / <cuda_bf16.h>):
// the whole programs programs/hf_*.cu (conversions against hand-derived bits and an independent
// reference, paired arithmetic against an exact reference, a half- vs float-accumulated dot
// product with shuffles of half and half2; each also runs on a GPU), plus the rewriter's feature
// check (half and bf16 accepted, fp8 still refused) and what nvcc accepts around the types.
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"
#include "env/cpu_emu/rewriter.hpp"

namespace {

using leap::emu::rewrite_cuda_source;
using leap::emu::testing::build_and_run;
using leap::emu::testing::expect_ran_ok;
using leap::emu::testing::load_program;

TEST(CpuEmuHalf, ConversionsMatchHandDerivedBitsAndAnIndependentReference) {
  expect_ran_ok(build_and_run("hf_conversions", load_program("hf_conversions.cu"), 120));
}

TEST(CpuEmuHalf, PairedArithmeticIsRoundedOnceLikeTheGpu) {
  expect_ran_ok(build_and_run("hf_arith", load_program("hf_arith.cu"), 120));
}

TEST(CpuEmuHalf, HalfAccumulationDiffersFromFloatAccumulationAsOnTheGpu) {
  auto r = build_and_run("hf_dot", load_program("hf_dot.cu"), 60);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("half accumulation"), std::string::npos) << r.output;
}

TEST(CpuEmuHalf, FeatureCheckAcceptsHalfAndBf16ButNotFp8) {
  auto ok = rewrite_cuda_source(
      "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n__global__ void k(__half* p, half2* q, __nv_bfloat16* b,\n"
      "  __nv_bfloat162* c) { p[0] = __float2half(__half2float(p[0])); b[0] = __float2bfloat16(__bfloat162float(b[0])); }\n",
      "h.cu");
  EXPECT_TRUE(ok.ok) << ok.error;
  auto fp8 = rewrite_cuda_source("#include <cuda_fp8.h>\n\n__global__ void k(__nv_fp8_e4m3* p) {}\n", "f.cu");
  EXPECT_FALSE(fp8.ok);
  EXPECT_NE(fp8.error.find("fp8 types at line 3"), std::string::npos) << fp8.error;
}

// Kernel code in the forms real candidates use: operators, implicit conversions, raw forms,
// volatile accesses, shared arrays, __ldg, half2 reinterpretation of float data, the
// __CUDA_NO_HALF_OPERATORS__ opt-out, and shuffles of both widths under a partial width.
TEST(CpuEmuHalf, CommonSpellingsCompileAndRun) {
  const std::string src = R"cu(
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ __half twice(const __half& h) { return h + h; }
__global__ void k(const __half* in, float* out, __nv_bfloat16* bout) {
  __shared__ __half tile[64];
  __shared__ half2 pairs[32];
  const int t = threadIdx.x;
  tile[t] = __ldg(in + t);
  __syncthreads();
  if (t < 32) pairs[t] = __halves2half2(tile[2 * t], tile[2 * t + 1]);
  __syncthreads();
  __half h = tile[63 - t];
  h += __float2half(1.0f);
  h = -twice(h);
  const __half_raw raw = h;
  __half back(raw);
  const bool neg = back < __float2half(0.0f);
  half2 p = pairs[t % 32];
  p = p * p + __float2half2_rn(0.5f);
  half2 q = __shfl_xor_sync(0xffffffffu, p, 1, 16);
  __half r = __shfl_down_sync(0xffffffffu, h, 2, 8);
  volatile __half* vs = tile;
  __syncthreads();
  if (t == 0) vs[0] = __float2half(7.0f);
  __syncthreads();
  const __half v = vs[0];
  out[t] = __half2float(h) + (neg ? 1000.0f : 0.0f) + __low2float(q) * 0.0f + (float)v + __half2float(r) * 0.0f;
  bout[t] = __float2bfloat16(out[t]) * __nv_bfloat16(2.0f);
}
int main() {
  __half *in;
  float* out;
  __nv_bfloat16* bout;
  cudaMallocManaged(&in, 64 * sizeof(__half));
  cudaMallocManaged(&out, 64 * sizeof(float));
  cudaMallocManaged(&bout, 64 * sizeof(__nv_bfloat16));
  for (int i = 0; i < 64; ++i) in[i] = __float2half((float)i);
  k<<<1, 64>>>(in, out, bout);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int t = 0; t < 64; ++t) {
    const float want = -2.0f * ((63 - t) + 1.0f) + 1000.0f + 7.0f;
    bad += out[t] != want || __bfloat162float(bout[t]) != __bfloat162float(__float2bfloat16(want)) * 2.0f;
  }
  if (bad) { printf("FAIL %d\n", bad); return 1; }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("hf_spellings", src));
}

}  // namespace
