// Tests of the CPU emulation's run-time warp masks, asynchronous copies and large tiles: the
// programs/am_*.cu whole programs (plain CUDA that a GPU passes too), and emulation-only checks
// of what a GPU leaves unspecified and the emulation makes deterministic: cp.async data is
// written only at the wait that covers its group (an early read sees the old contents), and
// shuffles from lanes outside a run-time mask are still reported.
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"

namespace {

using leap::emu::testing::build_and_run;
using leap::emu::testing::expect_ran_ok;
using leap::emu::testing::load_program;

TEST(CpuEmuAsyncMasks, ActivemaskReductionsInDivergentBranches) {
  auto r = build_and_run("am_activemask_reduce", load_program("am_activemask_reduce.cu"));
  expect_ran_ok(r);
  EXPECT_EQ(r.output.find("undefined behaviour"), std::string::npos) << r.output;
}

TEST(CpuEmuAsyncMasks, BallotCompactionAndMatchAnySegments) {
  auto r = build_and_run("am_ballot_compact", load_program("am_ballot_compact.cu"));
  expect_ran_ok(r);
  EXPECT_EQ(r.output.find("undefined behaviour"), std::string::npos) << r.output;
}

TEST(CpuEmuAsyncMasks, CpAsyncDoubleBufferedPipelines) {
  expect_ran_ok(build_and_run("am_cp_async_pipeline", load_program("am_cp_async_pipeline.cu")));
}

TEST(CpuEmuAsyncMasks, CooperativeGroupsMemcpyAsyncDoubleBuffered) {
  expect_ran_ok(build_and_run("am_cg_memcpy_async", load_program("am_cg_memcpy_async.cu")));
}

TEST(CpuEmuAsyncMasks, TilesOf128And64ThreadsWithBlockTileMemory) {
  expect_ran_ok(build_and_run("am_tile128_reduce", load_program("am_tile128_reduce.cu")));
}

TEST(CpuEmuAsyncMasks, LargeTileSyncSkipsExitedThreadsAndReportsShflFromThem) {
  // The second warp of each 64-thread tile returns early: the tile's sync waits only for the
  // threads left, and a shfl from an exited rank is undefined (reported, own value returned).
  const char* src = R"cu(
#include <cooperative_groups.h>
#include <leap_emu/api.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  __shared__ int s[128];
  auto tile = cg::tiled_partition<64>(cg::this_thread_block());
  const int t = threadIdx.x;
  if (tile.thread_rank() >= 32) return;
  s[t] = t * 3;
  tile.sync();
  out[t] = s[t ^ 1] + 1000 * tile.any(t == 70) + 10000 * tile.all(t < 96);
  out[128 + t] = tile.shfl(t, 40);
}
int main() {
  int* out;
  cudaMallocManaged(&out, 256 * sizeof(int));
  k<<<1, 128>>>(out);
  cudaDeviceSynchronize();
  for (int t = 0; t < 128; ++t) {
    if (t % 64 >= 32) continue;
    const int want = (t ^ 1) * 3 + (t >= 64 ? 1000 : 0) + 10000;  // any: thread 70 is in the second tile
    if (out[t] != want || out[128 + t] != t) { printf("FAIL %d: %d %d want %d\n", t, out[t], out[128 + t], want); return 1; }
  }
  const char* ub = leap_emu_undefined_behaviour();
  printf("ub: %s\n", ub ? ub : "none");
  if (ub) printf("PASS\n");
}
)cu";
  auto r = build_and_run("am_tile_exited", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("thread_block_tile<64>::shfl read rank 40, which has already exited"), std::string::npos)
      << r.output;
}

TEST(CpuEmuAsyncMasks, ActivemaskAfterABranchHoldsTheReconvergedWarp) {
  // The lanes that skip the branch reach the second __activemask first; they must not take it
  // without the lanes still in the branch (a GPU reconverges the warp after the if).
  const char* src = R"cu(
__global__ void k(unsigned* out) {
  const int lane = threadIdx.x;
  if (lane % 4 == 0) out[32 + lane / 4] = __activemask();
  out[lane] = __activemask();
  __syncwarp();
}
int main() {
  unsigned* out;
  cudaMallocManaged(&out, 40 * sizeof(unsigned));
  k<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  for (int l = 0; l < 32; ++l) if (out[l] != 0xffffffffu) { printf("FAIL lane %d %08x\n", l, out[l]); return 1; }
  for (int l = 0; l < 8; ++l) if (out[32 + l] != 0x11111111u) { printf("FAIL branch %08x\n", out[32 + l]); return 1; }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("am_activemask_after_branch", src));
}

TEST(CpuEmuAsyncMasks, ShuffleOutsideARunTimeMaskIsStillReported) {
  // shfl_down by 8 inside a 16-lane __activemask(), no width: lanes 8..15 read lanes 16..23.
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void k(int* out) {
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) {
    const unsigned m = __activemask();
    v += __shfl_down_sync(m, v, 8);
  }
  out[lane] = v;
}
int main() {
  int* out;
  cudaMallocManaged(&out, 32 * sizeof(int));
  k<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  const char* ub = leap_emu_undefined_behaviour();
  printf("lane0 %d ub: %s\n", out[0], ub ? ub : "none");
  if (ub && out[0] == 8) printf("PASS\n");
}
)cu";
  auto r = build_and_run("am_shfl_outside_runtime_mask", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("read lane 16, which is not in the mask (mask 0x0000ffff"), std::string::npos) << r.output;
}

// Every non-exited lane named in a mask must call the same *_sync with the same mask: lanes that
// wait together with different masks, or in different intrinsics, are reported.
TEST(CpuEmuAsyncMasks, LanesNamingDifferentMasksAreReported) {
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void k(int* out) {
  const int lane = threadIdx.x;
  const unsigned mask = lane < 16 ? 0xffffffffu : 0x0000ffffu | (1u << lane);
  out[lane] = __shfl_sync(mask, lane, 0);
}
int main() {
  int* out;
  cudaMallocManaged(&out, 32 * sizeof(int));
  k<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  const char* ub = leap_emu_undefined_behaviour();
  printf("ub: %s\n", ub ? ub : "none");
  if (ub) printf("PASS\n");
}
)cu";
  auto r = build_and_run("am_mask_mismatch", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("lane 0 called a __shfl*_sync with mask 0xffffffff, lane 16 (named in it) a __shfl*_sync "
                          "with mask 0x0001ffff"),
            std::string::npos)
      << r.output;

  const char* ops = R"cu(
#include <leap_emu/api.h>
__global__ void k(int* out) {
  const int lane = threadIdx.x;
  if (lane == 5) out[lane] = __shfl_sync(0xffffffffu, lane, 0);
  else out[lane] = __ballot_sync(0xffffffffu, lane > 3);
}
int main() {
  int* out;
  cudaMallocManaged(&out, 32 * sizeof(int));
  k<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  const char* ub = leap_emu_undefined_behaviour();
  printf("ub: %s\n", ub ? ub : "none");
  if (ub) printf("PASS\n");
}
)cu";
  auto o = build_and_run("am_op_mismatch", ops);
  expect_ran_ok(o);
  EXPECT_NE(o.output.find("lane 5 (named in it) a __shfl*_sync"), std::string::npos) << o.output;
}

// A read of a cp.async destination before the wait that covers it: a GPU may return old, new or
// partial data; the emulation returns the old contents, every time.
TEST(CpuEmuAsyncMasks, CpAsyncDestinationIsStaleUntilItsGroupIsWaitedOn) {
  const char* src = R"cu(
__global__ void k(const int4* in, int* out) {
  __shared__ __align__(16) int4 a[32], b[32];
  const int t = threadIdx.x;
  a[t] = make_int4(-1, -1, -1, -1);
  b[t] = make_int4(-2, -2, -2, -2);
  __syncthreads();
  const unsigned da = (unsigned)__cvta_generic_to_shared(&a[t]);
  const unsigned db = (unsigned)__cvta_generic_to_shared(&b[t]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(da), "l"(in + t));
  out[t * 8 + 0] = a[t].x;                          // issued, not committed: old
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, 8;\n" :: "r"(db), "l"(in + 32 + t));
  asm volatile("cp.async.commit_group;\n" ::);
  __syncthreads();                                  // a barrier is no wait
  out[t * 8 + 1] = a[t].y;
  asm volatile("cp.async.wait_group 1;\n" ::);      // the first group only
  out[t * 8 + 2] = a[t].z;
  out[t * 8 + 3] = b[t].x;
  asm volatile("cp.async.wait_group 0;\n" ::);
  out[t * 8 + 4] = b[t].y;
  out[t * 8 + 5] = b[t].z;                          // zero fill past src-size 8
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(da), "l"(&in[40 + t].w));
  asm volatile("cp.async.wait_all;\n" ::);          // commits the open copy, then waits
  out[t * 8 + 6] = a[t].x;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(db), "l"(&in[t].w));
  out[t * 8 + 7] = b[t].x;                          // left pending at exit
}
int main() {
  int4* in; int* out;
  cudaMallocManaged(&in, 80 * sizeof(int4)); cudaMallocManaged(&out, 256 * sizeof(int));
  for (int i = 0; i < 80; ++i) in[i] = make_int4(4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3);
  k<<<2, 32>>>(in, out);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL launch\n"); return 1; }
  for (int t = 0; t < 32; ++t) {
    const int* o = out + t * 8;
    const int want[8] = {-1, -1, 4 * t + 2, -2, 4 * (32 + t) + 1, 0, 4 * (40 + t) + 3, 4 * (32 + t)};
    for (int j = 0; j < 8; ++j)
      if (o[j] != want[j]) { printf("FAIL t %d slot %d: %d want %d\n", t, j, o[j], want[j]); return 1; }
  }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("am_cp_async_stale", src));
}

TEST(CpuEmuAsyncMasks, PipelineWaitPriorCompletesAllButTheNewestBatches) {
  const char* src = R"cu(
#include <cuda_pipeline.h>
__global__ void k(const float* in, float* out) {
  __shared__ __align__(16) float s[4][64];
  const int t = threadIdx.x;
  for (int b = 0; b < 4; ++b) s[b][t] = -1.0f;
  __syncthreads();
  for (int b = 0; b < 4; ++b) { __pipeline_memcpy_async(&s[b][t], &in[b * 64 + t], 4); __pipeline_commit(); }
  __pipeline_wait_prior(2);           // batches 0 and 1 done, 2 and 3 pending
  __syncthreads();
  for (int b = 0; b < 4; ++b) out[b * 64 + t] = s[b][t];
  __pipeline_wait_prior(0);
  __syncthreads();
  out[256 + t] = s[3][63 - t];
}
int main() {
  float *in, *out;
  cudaMallocManaged(&in, 256 * sizeof(float)); cudaMallocManaged(&out, 320 * sizeof(float));
  for (int i = 0; i < 256; ++i) in[i] = i;
  k<<<1, 64>>>(in, out);
  cudaDeviceSynchronize();
  for (int t = 0; t < 64; ++t) {
    for (int b = 0; b < 4; ++b) {
      const float want = b < 2 ? b * 64 + t : -1.0f;
      if (out[b * 64 + t] != want) { printf("FAIL b %d t %d: %f\n", b, t, out[b * 64 + t]); return 1; }
    }
    if (out[256 + t] != 3 * 64 + 63 - t) { printf("FAIL final %d\n", t); return 1; }
  }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("am_pipeline_wait_prior", src));
}

TEST(CpuEmuAsyncMasks, CooperativeGroupsMemcpyAsyncWithWaitPrior) {
  // Two batches (128 ints in 16-byte chunks, then 130 floats by element count from one float
  // in, so 4-byte chunks); wait_prior<1> lands only the first, wait both (and syncs).
  const char* src = R"cu(
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void k(const int* a, const float* b, int* out) {
  __shared__ __align__(16) int sa[128];
  __shared__ __align__(16) float sb[132];
  auto block = cg::this_thread_block();
  const int t = block.thread_rank();
  sa[t] = -1; sb[t] = -1.0f;
  if (t < 4) sb[128 + t] = -1.0f;
  block.sync();
  cg::memcpy_async(block, sa, a + 128 * blockIdx.x, sizeof(int) * 128);
  cg::memcpy_async(block, sb, size_t(131), b + 1, size_t(130));
  cg::wait_prior<1>(block);
  out[t] = sa[127 - t];
  out[128 + t] = (int)sb[t];  // this thread's own chunk of the second batch: still old
  cg::wait(block);
  out[256 + t] = (int)sb[t] + (t < 2 ? 1000 * (int)sb[128 + t] : 0);
  out[384 + t] = (int)sb[130];
}
int main() {
  int *a, *out; float* b;
  cudaMallocManaged(&a, 256 * sizeof(int)); cudaMallocManaged(&b, 140 * sizeof(float));
  cudaMallocManaged(&out, 512 * sizeof(int));
  for (int i = 0; i < 256; ++i) a[i] = 3 * i;
  for (int i = 0; i < 140; ++i) b[i] = i;
  k<<<1, 128>>>(a, b, out);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL launch\n"); return 1; }
  for (int t = 0; t < 128; ++t) {
    const int want[4] = {3 * (127 - t), -1, t + 1 + (t < 2 ? 1000 * (129 + t) : 0), -1};
    for (int j = 0; j < 4; ++j)
      if (out[j * 128 + t] != want[j]) { printf("FAIL t %d slot %d: %d want %d\n", t, j, out[j * 128 + t], want[j]); return 1; }
  }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("am_cg_memcpy_async", src));
}

TEST(CpuEmuAsyncMasks, CpAsyncOnThePlainLoopPath) {
  // No barrier in the translation unit: each thread runs alone, its copies still wait for it.
  const char* src = R"cu(
__global__ void k(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = 7;
  const unsigned d = (unsigned)__cvta_generic_to_shared(&s[t]);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(d), "l"(in + t));
  asm volatile("cp.async.commit_group;\n" ::);
  out[2 * t] = s[t];
  asm volatile("cp.async.wait_group 0;\n" ::);
  out[2 * t + 1] = s[t];
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(d), "l"(in));  // dropped at exit
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, 64 * sizeof(int)); cudaMallocManaged(&out, 128 * sizeof(int));
  for (int i = 0; i < 64; ++i) in[i] = 100 + i;
  k<<<3, 64>>>(in, out);
  cudaDeviceSynchronize();
  for (int t = 0; t < 64; ++t)
    if (out[2 * t] != 7 || out[2 * t + 1] != 100 + t) { printf("FAIL %d: %d %d\n", t, out[2 * t], out[2 * t + 1]); return 1; }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("am_cp_async_loop_path", src));
}

TEST(CpuEmuAsyncMasks, CpAsyncCgNeedsSixteenBytes) {
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void k(const int* in) {
  __shared__ int s[32];
  const unsigned d = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 4;\n" :: "r"(d), "l"(in + threadIdx.x));
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
}
int main() {
  int* in;
  cudaMallocManaged(&in, 32 * sizeof(int));
  k<<<1, 32>>>(in);
  cudaDeviceSynchronize();
  const char* f = leap_emu_fatal_error();
  printf("fatal: %s\n", f ? f : "none");
  if (f) printf("PASS\n");
}
)cu";
  auto r = build_and_run("am_cp_async_cg4", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("cp.async.cg with a copy size other than 16 bytes"), std::string::npos) << r.output;
}

}  // namespace
