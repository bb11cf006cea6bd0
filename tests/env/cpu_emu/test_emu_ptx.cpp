// Tests of inline PTX on the CPU emulation (env/cpu_emu/ptx_rewrite.cpp, leap_emu/ptx.h): the
// rewrite of the supported instructions (cp.async and its groups, %lanemask_*), cp.async with
// zero fill into static and dynamic shared memory, and the count and name of unsupported ones.
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"
#include "env/cpu_emu/rewriter.hpp"

namespace {

using leap::emu::rewrite_cuda_source;
using leap::emu::testing::build_and_run;

TEST(CpuEmuPtx, UnsupportedInstructionsAreCountedAndNamed) {
  auto r = rewrite_cuda_source(
      "__device__ void f(unsigned a, unsigned* r) {\n"
      "  asm volatile(\"cp.async.commit_group;\" ::);\n"
      "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\"\n"
      "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a));\n"
      "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1}, {%2}, {%3};\" : \"=r\"(r[0]) : \"r\"(a), \"r\"(a), \"r\"(a));\n"
      "}\n",
      "p.cu");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.inline_asm, 1);
  EXPECT_EQ(r.inline_asm_unsupported, 2);
  EXPECT_NE(r.error.find("2 asm statement(s), the first with 'ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
            std::string::npos) << r.error;
  EXPECT_NE(r.error.find("at line 3"), std::string::npos) << r.error;
}

TEST(CpuEmuPtx, SupportedStatementsKeepLinesAndDisabledOnesAreIgnored) {
  auto r = rewrite_cuda_source(
      "__device__ unsigned f(const float* p, float* s) {\n"
      "  unsigned lane; float v;\n"
      "  asm volatile(\"mov.u32 %0, %%laneid;\"\n"
      "               : \"=r\"(lane));\n"
      "  asm volatile(\"ld.global.nc.L1::no_allocate.f32 %0, [%1+4];\" : \"=f\"(v) : \"l\"(p));\n"
      "#if __CUDA_ARCH__ >= 900\n"
      "  asm volatile(\"wgmma.fence.sync.aligned;\");\n"
      "#endif\n"
      "  asm volatile(\"\" ::: \"memory\");\n"
      "  return lane + (unsigned)v;\n"
      "}\n",
      "q.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.inline_asm, 3);
  EXPECT_NE(r.code.find("::leap_emu::ptx::set((lane), ::leap_emu::detail::lane_id());"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::ptx::load<float>(leap_emu_src + 0 * sizeof(float))"), std::string::npos)
      << r.code;
  EXPECT_NE(r.code.find("::leap_emu::ptx::addr((p)) + 4"), std::string::npos) << r.code;
  // `return` stays on line 10 of the source.
  const auto body = r.code.substr(r.code.find("#line 1"));
  int line = 0;
  for (std::size_t k = 0; k < body.find("return lane"); ++k) line += body[k] == '\n';
  EXPECT_EQ(line, 10);
}

TEST(CpuEmuPtx, CpAsyncGroupsAndLaneMasksBecomeRuntimeCalls) {
  auto r = rewrite_cuda_source(
      "template <int N> __device__ void w() { asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N)); }\n"
      "__device__ unsigned f(unsigned d, const void* p) {\n"
      "  unsigned lt;\n"
      "  asm volatile(\"cp.async.cg.shared::cta.global.L2::128B [%0], [%1], 16;\" :: \"r\"(d), \"l\"(p));\n"
      "  asm volatile(\"cp.async.commit_group;\\n\\tcp.async.wait_all;\" ::);\n"
      "  asm(\"mov.u32 %0, %%lanemask_lt;\" : \"=r\"(lt));\n"
      "  return lt;\n"
      "}\n",
      "g.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.code.find("::leap_emu::ptx::cp_async_wait_group((N));"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::ptx::cp_async(::leap_emu::ptx::shared_addr((d)), ::leap_emu::ptx::global("
                        "::leap_emu::ptx::addr((p))), 16, 16, true);"),
            std::string::npos)
      << r.code;
  EXPECT_NE(r.code.find("::leap_emu::ptx::cp_async_commit(); ::leap_emu::ptx::cp_async_wait_all();"),
            std::string::npos)
      << r.code;
  EXPECT_NE(r.code.find("::leap_emu::ptx::set((lt), ::leap_emu::ptx::lanemask_lt());"), std::string::npos) << r.code;
}

TEST(CpuEmuPtx, CpAsyncZeroFillIntoStaticAndDynamicSharedMemory) {
  const char* src = R"cu(
__global__ void stage(const float4* in, float4* out, int valid) {
  __shared__ float4 fixed[64];
  extern __shared__ float4 dyn[];
  const int t = threadIdx.x;
  const unsigned a = (unsigned)__cvta_generic_to_shared(&fixed[t]);
  const unsigned b = (unsigned)__cvta_generic_to_shared(&dyn[t]);
  const int bytes = t < valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(a), "l"(in + t), "r"(bytes));
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" :: "r"(b), "l"(in + t));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  const float4 x = fixed[63 - t], y = dyn[63 - t];
  out[t] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  if (__cvta_shared_to_generic(a) != (void*)&fixed[t]) out[t].x = -1;
}
int main() {
  float4 *in, *out;
  cudaMallocManaged(&in, 64 * sizeof(float4)); cudaMallocManaged(&out, 64 * sizeof(float4));
  for (int i = 0; i < 64; ++i) in[i] = make_float4(i, 2 * i, 3 * i, 4 * i);
  stage<<<1, 64, 64 * sizeof(float4)>>>(in, out, 40);
  cudaDeviceSynchronize();
  for (int t = 0; t < 64; ++t) {
    const int s = 63 - t;
    const float want = (s < 40 ? s : 0) + s;
    if (out[t].x != want || out[t].w != 4 * want) { printf("FAIL %d: %f want %f\n", t, out[t].x, want); return 1; }
  }
  printf("PASS\n");
}
)cu";
  auto r = build_and_run("cp_async_fill", src);
  ASSERT_TRUE(r.rewritten) << r.rewrite_error;
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_EQ(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

TEST(CpuEmuPtx, CpAsyncThroughMacros) {
  // The macro style of Ampere GEMMs: each asm statement inside a #define, with a continuation.
  const char* src = R"cu(
#define CP_ASYNC_CG(dst, src, bytes) \
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(bytes))
#define CP_ASYNC_COMMIT() asm volatile("cp.async.commit_group;\n" ::)
#define CP_ASYNC_WAIT(n) asm volatile("cp.async.wait_group %0;\n" ::"n"(n))
__global__ void reverse_tile(const int4* in, int4* out) {
  __shared__ int4 tile[32];
  const unsigned t = threadIdx.x;
  const unsigned dst = (unsigned)__cvta_generic_to_shared(&tile[t]);
  CP_ASYNC_CG(dst, in + t, 16);
  CP_ASYNC_COMMIT();
  CP_ASYNC_WAIT(0);
  __syncthreads();
  out[t] = tile[31 - t];
}
int main() {
  int4 *in, *out;
  cudaMallocManaged(&in, 32 * sizeof(int4)); cudaMallocManaged(&out, 32 * sizeof(int4));
  for (int i = 0; i < 32; ++i) in[i] = make_int4(i, -i, 2 * i, 7);
  reverse_tile<<<1, 32>>>(in, out);
  cudaDeviceSynchronize();
  for (int t = 0; t < 32; ++t)
    if (out[t].x != 31 - t || out[t].y != t - 31 || out[t].w != 7) { printf("FAIL %d\n", t); return 1; }
  printf("PASS\n");
}
)cu";
  auto r = build_and_run("cp_async_macros", src);
  ASSERT_TRUE(r.rewritten) << r.rewrite_error;
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_EQ(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

TEST(CpuEmuPtx, PipelinePrimitivesWithZeroFill) {
  const char* src = R"cu(
#include <cuda_pipeline.h>
__global__ void stage(const float2* in, float2* out) {
  extern __shared__ float2 buf[];
  const unsigned t = threadIdx.x;
  __pipeline_memcpy_async(&buf[t], &in[t], sizeof(float2), t % 2 ? 4 : 0);  // odd: keep only .x
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = buf[t ^ 1];
}
int main() {
  float2 *in, *out;
  cudaMallocManaged(&in, 64 * sizeof(float2)); cudaMallocManaged(&out, 64 * sizeof(float2));
  for (int i = 0; i < 64; ++i) in[i] = make_float2(i, 100 + i);
  stage<<<1, 64, 64 * sizeof(float2)>>>(in, out);
  cudaDeviceSynchronize();
  for (int t = 0; t < 64; ++t) {
    const int s = t ^ 1;
    const float want_y = s % 2 ? 0.0f : 100.0f + s;
    if (out[t].x != s || out[t].y != want_y) { printf("FAIL %d: %f %f\n", t, out[t].x, out[t].y); return 1; }
  }
  printf("PASS\n");
}
)cu";
  auto r = build_and_run("pipeline_primitives", src);
  ASSERT_TRUE(r.rewritten) << r.rewrite_error;
  ASSERT_EQ(r.compile_rc, 0) << r.compile_log;
  EXPECT_EQ(r.run_rc, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

}  // namespace
