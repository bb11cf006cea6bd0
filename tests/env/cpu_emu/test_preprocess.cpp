// Unit tests of the rewriter's feature check after preprocessing (env/cpu_emu/conditionals.hpp)
// and of its volatile-pointer rewrite (env/cpu_emu/volatile_rewrite.hpp).
#include <gtest/gtest.h>

#include <string>

#include "env/cpu_emu/conditionals.hpp"
#include "env/cpu_emu/rewriter.hpp"

namespace {

using leap::emu::rewrite_cuda_source;

TEST(CpuEmuPreprocess, Fp8InDisabledIfIsNotAFeature) {
  const char* src = R"cu(#include <cuda_runtime.h>
#if defined(USE_FP8)
#include <cuda_fp8.h>
typedef __nv_fp8_e4m3 elem_t;
#else
typedef float elem_t;
#endif
__global__ void scale(elem_t* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }
)cu";
  auto r = rewrite_cuda_source(src, "fp8_off.cu");
  EXPECT_TRUE(r.ok) << r.error;

  // The same code with the macro defined uses fp8: unsupported, named at its line.
  auto on = rewrite_cuda_source(std::string("#define USE_FP8 1\n") + src, "fp8_on.cu");
  EXPECT_FALSE(on.ok);
  EXPECT_NE(on.error.find("fp8 types at line 5"), std::string::npos) << on.error;
}

TEST(CpuEmuPreprocess, ArchGuardsElifAndUndecidableConditions) {
  // __CUDA_ARCH__ is not defined for the emulation's g++ compile: the #else branch is the one.
  auto arch = rewrite_cuda_source(
      "#if __CUDA_ARCH__ >= 800\n__nv_fp8_e4m3 h;\n#elif defined(__CUDA_ARCH__)\n__nv_fp8_e5m2 g;\n#else\nint ok;\n#endif\n", "a.cu");
  EXPECT_TRUE(arch.ok) << arch.error;
  // #undef, #ifndef and arithmetic.
  auto undef = rewrite_cuda_source("#define W 4\n#undef W\n#ifndef W\n#if (3 * 4) > 11 && !0\n__nv_fp8_e4m3 h;\n#endif\n#endif\n", "u.cu");
  EXPECT_FALSE(undef.ok);
  EXPECT_NE(undef.error.find("at line 5"), std::string::npos) << undef.error;
  // A function-like macro in a condition cannot be evaluated: every branch stays checked.
  auto fn = rewrite_cuda_source("#define V(x) x\n#if V(0)\n__nv_fp8_e4m3 h;\n#endif\n", "f.cu");
  EXPECT_FALSE(fn.ok);
}

TEST(CpuEmuPreprocess, LiveLinesDirectly) {
  using leap::emu::directive;
  std::vector<directive> ds = {{1, 1, "if 0"}, {3, 3, "else"}, {5, 5, "endif"}};
  auto live = leap::emu::live_lines(ds, 6);
  EXPECT_FALSE(live[2]);
  EXPECT_TRUE(live[4]);
  EXPECT_TRUE(live[6]);
}

TEST(CpuEmuPreprocess, UnusedCooperativeGroupsAndFp16IncludesAreFine) {
  auto r = rewrite_cuda_source(
      "#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
      "inc.cu");
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(CpuEmuVolatile, PointersBecomeLockstepPointers) {
  auto r = rewrite_cuda_source(
      "__device__ void tail(volatile float* s, int t) { s[t] += s[t + 16]; }\n"
      "template <class T> __device__ void tail2(T volatile* s);\n"
      "__global__ void k(float* x) { volatile float* v = x; float volatile* w = x;"
      " ((volatile int*)x)[0] = 1; volatile float4* q; volatile int n; }\n",
      "v.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.uses_sync);
  EXPECT_EQ(r.volatile_pointers, 4);
  EXPECT_NE(r.code.find("volatile float* leap_emu_volatile_s, int t) { ::leap_emu::vptr<float> s(leap_emu_volatile_s);"),
            std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::vptr<float> v = x;"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::vptr<float> w = x;"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("((::leap_emu::vptr<int> )x)[0]"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("volatile float4* q"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("volatile int n"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("T volatile* s);"), std::string::npos) << r.code;  // prototype left alone
}

TEST(CpuEmuVolatile, ConstVolatilePointersKeepConst) {
  auto r = rewrite_cuda_source(
      "__global__ void k(const float* a) {\n  const volatile float* x = a;\n  volatile const float* y = a;\n"
      "  float const volatile* z = a;\n  const volatile float4* q;\n}\n",
      "cv.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.volatile_pointers, 3);
  EXPECT_NE(r.code.find("::leap_emu::vptr<const float> x = a;"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::vptr<const float> y = a;"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("::leap_emu::vptr<const float> z = a;"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("const volatile float4* q;"), std::string::npos) << r.code;
}

TEST(CpuEmuVolatile, SharedArraysInFunctionsBecomeLockstepPointers) {
  auto r = rewrite_cuda_source(
      "__shared__ volatile int file_scope[8];\n"
      "__global__ void k() {\n  __shared__ volatile float a[64];\n  volatile __shared__ int b[2 * 16];\n"
      "  __shared__ volatile float two_d[4][4];\n}\n",
      "va.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.volatile_pointers, 2);
  EXPECT_NE(r.code.find("static thread_local volatile float leap_emu_volatile_a[64]; ::leap_emu::vptr<float> a(leap_emu_volatile_a);"),
            std::string::npos) << r.code;
  EXPECT_NE(r.code.find("static thread_local volatile int leap_emu_volatile_b[2 * 16]; ::leap_emu::vptr<int> b(leap_emu_volatile_b);"),
            std::string::npos) << r.code;
  // File scope and 2-D arrays stay plain volatile shared memory.
  EXPECT_NE(r.code.find("static thread_local volatile int file_scope[8];"), std::string::npos) << r.code;
  EXPECT_NE(r.code.find("static thread_local volatile float two_d[4][4];"), std::string::npos) << r.code;
}

}  // namespace
