// Unit tests of leap::emu::rewrite_cuda_source: launches, shared memory, comments and literals,
// line numbers, unsupported-feature errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "env/cpu_emu/rewriter.hpp"

namespace {

using leap::emu::rewrite_cuda_source;

// The rewritten body without the prelude (everything after the #line directive).
std::string body(const std::string& code) {
  auto at = code.find("#line 1 ");
  EXPECT_NE(at, std::string::npos);
  return code.substr(code.find('\n', at) + 1);
}

int line_of(const std::string& text, const std::string& needle) {
  auto at = text.find(needle);
  if (at == std::string::npos) return -1;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

TEST(CpuEmuRewriter, SimpleLaunch) {
  auto r = rewrite_cuda_source("void f(float* a, int n) { add<<<(n + 255) / 256, 256>>>(a, n); }", "x.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.launches, 1);
  EXPECT_FALSE(r.uses_sync);
  EXPECT_NE(r.code.find("#define LEAP_EMU_TU_USES_SYNC 0"), std::string::npos);
  EXPECT_NE(r.code.find("#line 1 \"x.cu\""), std::string::npos);
  EXPECT_NE(r.code.find("::leap_emu::launch_kernel(\"add\", LEAP_EMU_TU_USES_SYNC, "
                        "::leap_emu::make_launch_config((n + 255) / 256, 256), "
                        "[&](auto&... leap_emu_args) { add(leap_emu_args...); }, a, n);"),
            std::string::npos)
      << r.code;
}

TEST(CpuEmuRewriter, ThreeAndFourArgConfigsTemplatesNamespaces) {
  const char* src =
      "void f(float* a, cudaStream_t s) {\n"
      "  ns::inner::k<float, (4 > 2)><<<dim3(g(1, 2), 1), blk, 64 * sizeof(float)>>>(a, h(a, 3));\n"
      "  k2<std::pair<int, int>><<<1, 32, 0, s>>>();\n"
      "  ::k3 <<< grid , block >>> ( a );\n"
      "}\n";
  auto r = rewrite_cuda_source(src, "t.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.launches, 3);
  const std::string b = body(r.code);
  EXPECT_NE(b.find("make_launch_config(dim3(g(1, 2), 1), blk, 64 * sizeof(float))"), std::string::npos) << b;
  EXPECT_NE(b.find("{ ns::inner::k<float, (4 > 2)>(leap_emu_args...); }, a, h(a, 3))"), std::string::npos) << b;
  EXPECT_NE(b.find("make_launch_config(1, 32, 0, s), [&](auto&... leap_emu_args) { "
                   "k2<std::pair<int, int>>(leap_emu_args...); })"),
            std::string::npos)
      << b;
  EXPECT_NE(b.find("launch_kernel(\"::k3\""), std::string::npos) << b;
  EXPECT_EQ(b.find("<<<"), std::string::npos);
}

TEST(CpuEmuRewriter, SkipsCommentsAndLiterals) {
  const char* src =
      "// k<<<1, 1>>>(x); __syncthreads();\n"
      "/* k<<<1, 1>>>(x);\n __syncthreads(); */\n"
      "const char* s1 = \"k<<<1, 1>>>(x) __syncthreads() \\\" asm\";\n"
      "const char* s2 = R\"raw(k<<<1, 1>>>(x) \" __shared__ )raw\";\n"
      "char c = '<'; char d = '\\''; int big = 1'000'000;\n";
  auto r = rewrite_cuda_source(src, "c.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.launches, 0);
  EXPECT_FALSE(r.uses_sync);
  EXPECT_EQ(body(r.code), src);
}

TEST(CpuEmuRewriter, LineNumbersPreserved) {
  const char* src =
      "__global__ void k(float* a, int n) {}\n"
      "void f(float* a, int n) {\n"
      "  k\n"
      "  <<<\n"
      "    (n + 255) / 256,\n"
      "    256>>>\n"
      "  (a,\n"
      "   n);\n"
      "  int marker_after = 0;\n"
      "}\n";
  auto r = rewrite_cuda_source(src, "lines.cu");
  ASSERT_TRUE(r.ok) << r.error;
  const std::string b = body(r.code);
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 10);
  EXPECT_EQ(line_of(b, "marker_after"), 9);
  EXPECT_EQ(line_of(b, "launch_kernel"), 3);
}

TEST(CpuEmuRewriter, SharedMemory) {
  const char* src =
      "extern __shared__ float file_scope_dyn[];\n"
      "__global__ void k() {\n"
      "  __shared__ float tile[16][17];\n"
      "  static __shared__ int counter;\n"
      "  extern __shared__ __align__(16) unsigned char raw[];\n"
      "  extern __shared__ float4 v4[] __attribute__((aligned(16)));\n"
      "  __syncthreads();\n"
      "}\n";
  auto r = rewrite_cuda_source(src, "s.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.uses_sync);
  const std::string b = body(r.code);
  EXPECT_NE(b.find("static thread_local float* const file_scope_dyn = static_cast<float*>("
                   "::leap_emu::detail::dynamic_smem());"),
            std::string::npos)
      << b;
  EXPECT_NE(b.find("static thread_local float tile[16][17];"), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local int counter;"), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local unsigned char* const raw = static_cast<unsigned char*>("), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local float4* const v4 = static_cast<float4*>("), std::string::npos) << b;
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 8);
}

TEST(CpuEmuRewriter, NoinlineAndSyncDetection) {
  auto r = rewrite_cuda_source("__device__ __noinline__ int f(int v) { return __shfl_xor_sync(~0u, v, 1); }", "n.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.uses_sync);
  EXPECT_NE(r.code.find("__device__ __attribute__((noinline)) int f"), std::string::npos);
  EXPECT_NE(r.code.find("#define LEAP_EMU_TU_USES_SYNC 1"), std::string::npos);
}

TEST(CpuEmuRewriter, UnsupportedFeatures) {
  auto a = rewrite_cuda_source("__global__ void k(int* p) {\n  int x;\n  asm volatile(\"mov.u32 %0, 1;\" : \"=r\"(x));\n}\n", "a.cu");
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.error.find("inline PTX not supported by the CPU emulation"), std::string::npos) << a.error;
  EXPECT_NE(a.error.find("1 asm statement(s), the first with 'mov.u32 %0, 1' at line 3"), std::string::npos) << a.error;

  // half and bf16 are emulated (test_emu_half.cpp); fp8 is not.
  auto h = rewrite_cuda_source("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n__global__ void k(__half* p) {}\n", "h.cu");
  EXPECT_TRUE(h.ok) << h.error;
  auto f8 = rewrite_cuda_source("#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n__global__ void k(__nv_fp8_e4m3* p) {}\n", "f8.cu");
  EXPECT_FALSE(f8.ok);
  EXPECT_NE(f8.error.find("fp8 types at line 3"), std::string::npos) << f8.error;

  auto w = rewrite_cuda_source("#include <mma.h>\nusing namespace nvcuda;\n", "w.cu");
  EXPECT_FALSE(w.ok);
  EXPECT_NE(w.error.find("WMMA"), std::string::npos) << w.error;

  auto cg = rewrite_cuda_source("namespace cg = cooperative_groups;\n\n__global__ void k() { cg::this_grid().sync(); }\n", "cg.cu");
  EXPECT_FALSE(cg.ok);
  EXPECT_NE(cg.error.find("grid-wide cooperative groups (this_grid) at line 3"), std::string::npos) << cg.error;

  auto t = rewrite_cuda_source("\n\ntexture<float, 1> tex;\n", "t.cu");
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("textures at line 3"), std::string::npos) << t.error;

  // A variable named `half` is fine; only the CUDA types are rejected.
  auto ok = rewrite_cuda_source("int half = 3; const char* s = \"__half asm\";\n", "ok.cu");
  EXPECT_TRUE(ok.ok) << ok.error;
}

TEST(CpuEmuRewriter, MalformedLaunchIsAnError) {
  auto r = rewrite_cuda_source("void f() { k<<<1, 1>>>; }", "m.cu");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("line 1"), std::string::npos) << r.error;
}

// Every specifier order nvcc accepts for dynamic shared memory, attributes anywhere, one- and
// multi-word element types: each becomes a pointer to the launch's one dynamic buffer.
TEST(CpuEmuRewriter, ExternSharedInEverySpecifierOrder) {
  const char* src =
      "extern float __shared__ f1[];\n"
      "__shared__ extern float f2[];\n"
      "__global__ void k() {\n"
      "  extern __shared__ float a[];\n"
      "  extern float __shared__ b[];\n"
      "  __shared__ extern unsigned char c[];\n"
      "  extern __align__(16) __shared__ unsigned long long int d[];\n"
      "  alignas(16) extern __shared__ unsigned char e[];\n"
      "  __align__(8) extern __shared__ float2 f[];\n"
      "  extern __shared__ float __align__(16) g[];\n"
      "  extern __shared__ unsigned char h[] __attribute__((aligned(16)));\n"
      "  extern __shared__ float m[][33];\n"
      "  extern __shared__ ::ns::cell n[], o[];\n"
      "}\n";
  auto r = rewrite_cuda_source(src, "o.cu");
  ASSERT_TRUE(r.ok) << r.error;
  const std::string b = body(r.code);
  const std::string buf = "(::leap_emu::detail::dynamic_smem());";
  for (const std::string& want :
       {"static thread_local float* const f1 = static_cast<float*>" + buf,
        "static thread_local float* const f2 = static_cast<float*>" + buf,
        "static thread_local float* const a = static_cast<float*>" + buf,
        "static thread_local float* const b = static_cast<float*>" + buf,
        "static thread_local unsigned char* const c = static_cast<unsigned char*>" + buf,
        "static thread_local unsigned long long int* const d = static_cast<unsigned long long int*>" + buf,
        "static thread_local unsigned char* const e = static_cast<unsigned char*>" + buf,
        "static thread_local float2* const f = static_cast<float2*>" + buf,
        "static thread_local float* const g = static_cast<float*>" + buf,
        "static thread_local unsigned char* const h = static_cast<unsigned char*>" + buf,
        "static thread_local float (*const m)[33] = reinterpret_cast<float (*)[33]>" + buf,
        "static thread_local ::ns::cell* const n = static_cast<::ns::cell*>" + buf +
            " static thread_local ::ns::cell* const o = static_cast<::ns::cell*>" + buf})
    EXPECT_NE(b.find(want), std::string::npos) << want << "\n" << b;
  EXPECT_EQ(b.find("extern"), std::string::npos) << b;
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 14);
  EXPECT_EQ(r.volatile_pointers, 0);
}

// The CUDA samples' helper struct (generic template and a specialisation), a class template's
// member and a function template: each declaration stays local to its function.
TEST(CpuEmuRewriter, ExternSharedInTemplatesAndHelperStructs) {
  const char* src =
      "template <class T> struct SharedMemory {\n"
      "  __device__ operator T*() { extern __shared__ int mem[]; return (T*)mem; }\n"
      "};\n"
      "template <> struct SharedMemory<double> {\n"
      "  __device__ operator double*() { extern __shared__ double mem_d[]; return mem_d; }\n"
      "};\n"
      "template <class T> struct view { __device__ static T at(int i) { extern T __shared__ v[]; return v[i]; } };\n"
      "template <class T> __device__ T* tile() { extern __shared__ __align__(16) typename T::elem raw[]; return raw; }\n"
      "template <class T> __global__ void k(T* o) { T* s = SharedMemory<T>(); o[0] = s[0]; }\n";
  auto r = rewrite_cuda_source(src, "t.cu");
  ASSERT_TRUE(r.ok) << r.error;
  const std::string b = body(r.code);
  EXPECT_NE(b.find("operator T*() { static thread_local int* const mem = static_cast<int*>("), std::string::npos) << b;
  EXPECT_NE(b.find("operator double*() { static thread_local double* const mem_d = static_cast<double*>("),
            std::string::npos) << b;
  EXPECT_NE(b.find("static T at(int i) { static thread_local T* const v = static_cast<T*>("), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local typename T::elem* const raw = static_cast<typename T::elem*>("),
            std::string::npos) << b;
  EXPECT_EQ(std::count(b.begin(), b.end(), '\n'), 9);
}

// `volatile` dynamic arrays become lockstep pointers; declarations inside a macro are rewritten
// inside it; an unsupported form is an error only where g++ would compile it.
TEST(CpuEmuRewriter, ExternSharedVolatileMacrosAndErrors) {
  auto v = rewrite_cuda_source(
      "#define DYN(T, name) extern __shared__ T name[]\n"
      "__global__ void k() {\n  extern __shared__ volatile float vs[];\n  extern volatile __shared__ acc va[];\n"
      "  extern __shared__ volatile float4 v4[];\n  DYN(int, di);\n}\n",
      "v.cu");
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_TRUE(v.uses_sync);
  EXPECT_EQ(v.volatile_pointers, 2);
  EXPECT_NE(v.code.find("#define DYN(T, name) static thread_local T* const name = static_cast<T*>("
                        "::leap_emu::detail::dynamic_smem())\n"),
            std::string::npos) << v.code;
  EXPECT_NE(v.code.find("static thread_local const ::leap_emu::vptr<float> vs(static_cast<volatile float*>("),
            std::string::npos) << v.code;
  EXPECT_NE(v.code.find("static thread_local const ::leap_emu::vptr<acc> va(static_cast<volatile acc*>("),
            std::string::npos) << v.code;
  EXPECT_NE(v.code.find("static thread_local volatile float4* const v4 = static_cast<volatile float4*>("),
            std::string::npos) << v.code;

  auto bad = rewrite_cuda_source("__global__ void k() {\n\n  extern __shared__ float fixed[256];\n}\n", "b.cu");
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("unsupported form of an extern __shared__ declaration"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("at line 3"), std::string::npos) << bad.error;
  auto dead = rewrite_cuda_source("#if 0\nextern __shared__ float fixed[256];\n#endif\n", "d.cu");
  EXPECT_TRUE(dead.ok) << dead.error;
}

// Volatile shared arrays in a function, in any specifier order, with attributes and struct
// elements, keep their storage and become lockstep pointers; elsewhere they stay plain.
TEST(CpuEmuRewriter, VolatileSharedArraysInAnyOrder) {
  const char* src =
      "namespace n { __shared__ volatile int ns_scope[8]; }\n"
      "__global__ void k() {\n"
      "  static volatile __shared__ float a[32];\n"
      "  __shared__ float volatile b[32];\n"
      "  __shared__ __align__(16) volatile acc c[64];\n"
      "  __shared__ volatile float2 d[8];\n"
      "  static __shared__ int plain[4];\n"
      "}\n";
  auto r = rewrite_cuda_source(src, "a.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.volatile_pointers, 3);
  const std::string b = body(r.code);
  EXPECT_NE(b.find("namespace n { static thread_local volatile int ns_scope[8]; }"), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local volatile float leap_emu_volatile_a[32]; ::leap_emu::vptr<float> a("),
            std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local volatile float leap_emu_volatile_b[32]; ::leap_emu::vptr<float> b("),
            std::string::npos) << b;
  EXPECT_NE(b.find("__align__(16) static thread_local volatile acc leap_emu_volatile_c[64]; ::leap_emu::vptr<acc> c("),
            std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local volatile float2 d[8];"), std::string::npos) << b;
  EXPECT_NE(b.find("static thread_local int plain[4];"), std::string::npos) << b;
}

}  // namespace

// A file whose only warp operation is __activemask runs on fibers: the plain loop runs one lane
// at a time and would answer every live lane, also inside a branch only some lanes took.
TEST(CpuEmuRewriter, ActivemaskAloneSelectsTheFiberPath) {
  auto r = rewrite_cuda_source(
      "__global__ void k(unsigned* out) {\n"
      "  if (threadIdx.x % 2) out[threadIdx.x] = __popc(__activemask());\n"
      "}\n",
      "am.cu");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.code.find("#define LEAP_EMU_TU_USES_SYNC 1"), std::string::npos);
}
