// Tests of the CPU emulation for dynamic shared memory declared in every form nvcc accepts
// (specifier orders, attributes, helper structs, templates) and for legacy warp-synchronous code
// through volatile pointers to user structs (lockstep at each element reached, flagged
// implicit_warp_sync). The whole programs live in programs/sv_*.cu and also run on a GPU.
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"

namespace {

using leap::emu::testing::build_and_run;
using leap::emu::testing::expect_ran_ok;
using leap::emu::testing::load_program;
using leap::emu::testing::program_result;

TEST(CpuEmuSharedVolatile, SharedMemoryHelperStructReductionsForFloatDoubleAndInt) {
  expect_ran_ok(build_and_run("sv_shared_memory_helper", load_program("sv_shared_memory_helper.cu")));
}

TEST(CpuEmuSharedVolatile, ExternSharedInEverySpecifierOrderAliasesOneAlignedBuffer) {
  expect_ran_ok(build_and_run("sv_extern_orders", load_program("sv_extern_orders.cu")));
}

TEST(CpuEmuSharedVolatile, StructAccumulatorWarpTailsRunInLockstepAndAreFlagged) {
  auto r = build_and_run("sv_volatile_struct_tail", "#define SV_EMU_FLAGS 1\n" + load_program("sv_volatile_struct_tail.cu"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 1"), std::string::npos) << r.output;
}

// The same struct tail with __syncwarp between the steps (the modern form of legacy code that
// keeps `volatile`): the answer is the same and nothing relies on implicit warp synchrony.
// `SYNC` is put between the steps; the reduction checks block totals against a host loop.
std::string struct_tail(const char* sync) {
  return std::string("#define SYNC ") + sync + R"cu(
#include <cstdio>
#include <leap_emu/api.h>
struct acc {
  float s;
  int n;
  __device__ void add(const volatile acc& o) volatile { s += o.s; n += o.n; }
};
__global__ void k(const float* x, float* sums, int* counts) {
  __shared__ acc sh[64];
  const unsigned t = threadIdx.x;
  sh[t].s = x[blockIdx.x * 64 + t];
  sh[t].n = 1;
  __syncthreads();
  if (t < 32) {
    volatile acc* v = sh;
    for (unsigned off = 32; off > 0; off >>= 1) {
      v[t].add(v[t + off]);
      SYNC;
    }
    if (t == 0) { sums[blockIdx.x] = v->s; counts[blockIdx.x] = (*v).n; }
  }
}
int main() {
  const int blocks = 40;
  float *x, *sums;
  int* counts;
  cudaMallocManaged(&x, blocks * 64 * sizeof(float));
  cudaMallocManaged(&sums, blocks * sizeof(float));
  cudaMallocManaged(&counts, blocks * sizeof(int));
  for (int i = 0; i < blocks * 64; ++i) x[i] = (float)(i % 11) - 3.0f;
  k<<<blocks, 64>>>(x, sums, counts);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    float want = 0;
    for (int i = b * 64; i < (b + 1) * 64; ++i) want += x[i];
    bad += sums[b] != want || counts[b] != 64;
  }
  printf("implicit_warp_sync %d\n", leap_emu_implicit_warp_sync());
  if (bad) { printf("FAIL %d blocks\n", bad); return 1; }
  printf("PASS\n");
}
)cu";
}

TEST(CpuEmuSharedVolatile, StructTailWithoutSyncwarpIsFlagged) {
  auto r = build_and_run("sv_struct_tail_legacy", struct_tail("(void)0"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 1"), std::string::npos) << r.output;
}

TEST(CpuEmuSharedVolatile, StructTailWithSyncwarpIsNotFlagged) {
  auto r = build_and_run("sv_struct_tail_syncwarp", struct_tail("__syncwarp()"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 0"), std::string::npos) << r.output;
}

// One member written per barrier interval, then reads, through volatile struct pointers: nothing
// reads what the warp wrote without a sync, so no flag; pointer arithmetic, `->`, `*` and the
// conversion to a pointer to const work. (A reach of any element right after a write with no
// sync between counts as a read: two member writes in a row would be flagged.)
TEST(CpuEmuSharedVolatile, StructWritesThenReadsAcrossABarrierAreNotFlagged) {
  auto r = build_and_run("sv_struct_no_flag", R"cu(
#include <cstdio>
#include <leap_emu/api.h>
struct pair2 { int a, b; };
__global__ void k(int* out) {
  __shared__ pair2 sh[128];
  const unsigned t = threadIdx.x;
  volatile pair2* v = sh;
  volatile pair2* w = v + 64;
  v[t].a = (int)t;
  __syncthreads();
  (v + t)->b = 2 * (int)t;
  __syncthreads();
  const volatile pair2* r = w - 64;
  out[t] = r[(t + 1) % 128].a + (*(r + t)).b;
}
int main() {
  int* out;
  cudaMallocManaged(&out, 128 * sizeof(int));
  k<<<1, 128>>>(out);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int t = 0; t < 128; ++t) bad += out[t] != (t + 1) % 128 + 2 * t;
  printf("implicit_warp_sync %d\n", leap_emu_implicit_warp_sync());
  if (bad) { printf("FAIL %d\n", bad); return 1; }
  printf("PASS\n");
}
)cu");
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 0"), std::string::npos) << r.output;
}

}  // namespace
