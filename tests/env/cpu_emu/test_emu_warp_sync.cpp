// End-to-end tests of warp-synchronous code on the CPU emulation: the legacy volatile
// shared-memory tail (lanes run in lockstep at volatile accesses, leap_emu/volatile.h) and
// shuffles that read lanes outside their group (reported as undefined behaviour).
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"

namespace {

using leap::emu::testing::build_and_run;
using leap::emu::testing::program_result;

using leap::emu::testing::expect_ran_ok;

// A pre-Volta block reduction: tree steps with __syncthreads down to 64 partials, then the first
// warp finishes on volatile shared memory without __syncwarp (one helper takes a volatile
// parameter, the other a volatile local pointer). `TAIL` picks the helper.
std::string legacy_reduction(const char* tail) {
  return std::string("#define TAIL ") + tail + R"cu(
#include <leap_emu/api.h>
template <unsigned block_size>
__device__ void tail_param(volatile float* s, unsigned t) {
  if (block_size >= 64) s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  s[t] += s[t + 4];
  s[t] += s[t + 2];
  s[t] += s[t + 1];
}
__device__ void tail_local(float* shared, unsigned t) {
  volatile float* s = shared;
  for (int offset = 32; offset > 0; offset >>= 1) s[t] = s[t] + s[t + offset];
}
__global__ void reduce(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  const unsigned t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x * 2 + t;
  float v = 0;
  if (i < n) v += x[i];
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  sdata[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (t < s) sdata[t] += sdata[t + s];
    __syncthreads();
  }
  if (t < 32) TAIL;
  if (t == 0) out[blockIdx.x] = sdata[0];
}
int main() {
  const int n = 100000, threads = 256, blocks = (n + 2 * threads - 1) / (2 * threads);
  float *x, *part;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&part, blocks * sizeof(float));
  double want = 0;
  for (int i = 0; i < n; ++i) { x[i] = (float)(i % 7); want += x[i]; }
  reduce<<<blocks, threads>>>(x, part, n);
  cudaDeviceSynchronize();
  double got = 0;
  for (int b = 0; b < blocks; ++b) got += part[b];
  printf("implicit_warp_sync %d\n", leap_emu_implicit_warp_sync());
  if (got != want) { printf("FAIL sum %.1f want %.1f\n", got, want); return 1; }
  printf("PASS\n");
}
)cu";
}

TEST(CpuEmuWarpSync, LegacyVolatileTailWithVolatileParameter) {
  auto r = build_and_run("volatile_param", legacy_reduction("tail_param<256>(sdata, t)"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 1"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, LegacyVolatileTailWithVolatileLocalPointer) {
  auto r = build_and_run("volatile_local", legacy_reduction("tail_local(sdata, t)"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 1"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, VolatileTailWithSyncwarpIsNotFlagged) {
  // Volatile, but every write is followed by __syncwarp before the next read: correct since
  // Volta, so no implicit_warp_sync flag.
  auto r = build_and_run("volatile_syncwarp", legacy_reduction(
      "{ volatile float* vs = sdata;"
      " for (int o = 32; o > 0; o >>= 1) { float w = vs[t] + vs[t + o]; __syncwarp(); vs[t] = w; __syncwarp(); } }"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 0"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, ModernTailIsNotFlagged) {
  // The same reduction finished with __shfl_down_sync: no volatile, no flag.
  auto r = build_and_run("modern_tail", legacy_reduction(
      "{ float w = sdata[t] + sdata[t + 32];"
      " for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);"
      " if (t == 0) sdata[0] = w; }"));
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 0"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, LegacyTailOnAVolatileSharedArray) {
  // The array itself is declared volatile and the tail is written inline, with an int sum.
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void sum_ints(const int* x, int* out) {
  volatile __shared__ int s[128];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 128 + t];
  __syncthreads();
  if (t < 64) s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];
    s[t] += s[t + 4];  s[t] += s[t + 2];  s[t] += s[t + 1];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
int main() {
  int *x, *out;
  cudaMallocManaged(&x, 8 * 128 * sizeof(int)); cudaMallocManaged(&out, 8 * sizeof(int));
  for (int i = 0; i < 8 * 128; ++i) x[i] = i % 11;
  sum_ints<<<8, 128>>>(x, out);
  cudaDeviceSynchronize();
  for (int b = 0; b < 8; ++b) {
    int want = 0;
    for (int k = 0; k < 128; ++k) want += x[b * 128 + k];
    if (out[b] != want) { printf("FAIL block %d: %d want %d\n", b, out[b], want); return 1; }
  }
  printf("implicit_warp_sync %d\nPASS\n", leap_emu_implicit_warp_sync());
}
)cu";
  auto r = build_and_run("volatile_array", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("implicit_warp_sync 1"), std::string::npos) << r.output;
}

// The final warp reduction of a two-level block sum whose mask holds only the lanes that have
// a warp total (8 of 32 for 256 threads), while __shfl_down_sync reads lanes 16 and 8 above
// them: undefined on a GPU. The emulation must say so (never a silent wrong sum).
TEST(CpuEmuWarpSync, ShuffleFromLaneOutsideTheMaskIsReported) {
  const char* src = R"cu(
#include <leap_emu/api.h>
__device__ float warp_sum(unsigned mask, float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset);
  return v;
}
__global__ void block_sum(const float* x, float* out) {
  __shared__ float totals[8];
  const unsigned t = threadIdx.x, lane = t % 32;
  float v = warp_sum(0xffffffffu, x[blockIdx.x * blockDim.x + t]);
  if (lane == 0) totals[t / 32] = v;
  __syncthreads();
  const unsigned mask = __ballot_sync(0xffffffffu, t < 8);
  if (t < 8) {
    v = warp_sum(mask, totals[t]);
    if (t == 0) out[blockIdx.x] = v;
  }
}
int main() {
  float *x, *out;
  cudaMallocManaged(&x, 256 * sizeof(float));
  cudaMallocManaged(&out, sizeof(float));
  for (int i = 0; i < 256; ++i) x[i] = 1.0f;
  block_sum<<<1, 256>>>(x, out);
  cudaDeviceSynchronize();
  const char* ub = leap_emu_undefined_behaviour();
  printf("sum %.1f\n", *out);
  printf("ub: %s\n", ub ? ub : "none");
  if (ub) printf("PASS\n");
}
)cu";
  auto r = build_and_run("shfl_out_of_mask", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("undefined behaviour in kernel block_sum"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("read lane 16, which is not in the mask (mask 0x000000ff"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, ShuffleFromExitedLaneIsReported) {
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void k(int* out) {
  const int lane = threadIdx.x;
  if (lane >= 4) return;
  int v = __shfl_sync(0xffffffffu, lane * 10, lane + 4);
  out[lane] = v;
}
int main() {
  int* out;
  cudaMallocManaged(&out, 4 * sizeof(int));
  k<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  const char* ub = leap_emu_undefined_behaviour();
  printf("ub: %s\n", ub ? ub : "none");
  if (ub && !leap_emu_fatal_error()) printf("PASS\n");
}
)cu";
  auto r = build_and_run("shfl_exited", src);
  expect_ran_ok(r);
  EXPECT_NE(r.output.find("read lane 4, which has already exited"), std::string::npos) << r.output;
}

TEST(CpuEmuWarpSync, InRangeShufflesAreNotReported) {
  // shfl_down past the width returns the caller's own value by definition: not undefined.
  const char* src = R"cu(
#include <leap_emu/api.h>
__global__ void k(int* out) {
  int v = threadIdx.x;
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x == 0) out[0] = v;
}
int main() {
  int* out;
  cudaMallocManaged(&out, sizeof(int));
  k<<<1, 64>>>(out);
  cudaDeviceSynchronize();
  if (!leap_emu_undefined_behaviour() && out[0] == 496) printf("PASS\n");
  else printf("FAIL %d\n", out[0]);
}
)cu";
  expect_ran_ok(build_and_run("shfl_in_range", src));
}

}  // namespace
