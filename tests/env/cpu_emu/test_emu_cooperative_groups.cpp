// End-to-end tests of cooperative groups on the CPU emulation (env/cpu_emu/include/
// cooperative_groups.h): block and tile groups, tile collectives, cg::reduce, coalesced_threads.
// Each program checks its results itself and prints PASS.
#include <gtest/gtest.h>

#include <string>

#include "emu_program.hpp"

namespace {

using leap::emu::testing::build_and_run;
using leap::emu::testing::program_result;

using leap::emu::testing::expect_ran_ok;

TEST(CpuEmuCooperativeGroups, BlockSyncAndTileShuffleReduction) {
  // Block sum: a shared-memory tree over the block with cg::sync, then the first warp finishes
  // with tile32.shfl_down; a second output takes tile-level totals with cg::reduce (plus and
  // greater) and the 16-wide tiles check shfl_xor, ballot, any/all and meta_group_rank.
  const char* src = R"cu(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const int* x, int* block_totals, int n) {
  extern __shared__ int partial[];
  cg::thread_block block = cg::this_thread_block();
  const unsigned t = block.thread_rank();
  const int i = blockIdx.x * block.size() + t;
  int v = i < n ? x[i] : 0;
  partial[t] = v;
  cg::sync(block);
  for (unsigned stride = block.size() / 2; stride >= 32; stride /= 2) {
    if (t < stride) partial[t] = v = v + partial[t + stride];
    block.sync();
  }
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  if (t < 32) {
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    if (warp.thread_rank() == 0) block_totals[blockIdx.x] = v;
  }
}

__global__ void tile_stats(const int* x, int* sums, int* maxima, int* checks) {
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);
  auto half = cg::tiled_partition<16>(block);
  const int v = x[block.thread_rank()];
  const int s = cg::reduce(tile, v, cg::plus<int>());
  const int m = cg::reduce(tile, v, cg::greater<int>());
  if (tile.thread_rank() == 0) {
    sums[tile.meta_group_rank()] = s;
    maxima[tile.meta_group_rank()] = m;
  }
  // 16-wide tiles: rank 0 of each half gets the xor-butterfly total; ballot bits are tile ranks.
  int h = v;
  for (int mask = 8; mask > 0; mask >>= 1) h += half.shfl_xor(h, mask);
  const unsigned odd = half.ballot(half.thread_rank() & 1);
  const bool any_big = half.any(v > 1000), all_pos = half.all(v >= 0);
  const int third = half.shfl(v, 3);  // every lane gets rank 3's value
  const bool third_ok = half.all(third == x[half.meta_group_rank() * 16 + 3]);
  half.sync();
  if (half.thread_rank() == 0)
    checks[half.meta_group_rank()] =
        h * 100 + (odd == 0xAAAAu ? 10 : 0) + (all_pos && !any_big ? 1 : 0) + (third_ok ? 1000000 : 0);
}

int main() {
  const int n = 1000, threads = 256, blocks = (n + threads - 1) / threads;
  int *x, *tot;
  cudaMallocManaged(&x, n * sizeof(int));
  cudaMallocManaged(&tot, blocks * sizeof(int));
  long long want = 0;
  for (int i = 0; i < n; ++i) { x[i] = (i * 37) % 101; want += x[i]; }
  block_sum<<<blocks, threads, threads * sizeof(int)>>>(x, tot, n);
  cudaDeviceSynchronize();
  long long got = 0;
  for (int b = 0; b < blocks; ++b) got += tot[b];
  if (got != want) { printf("FAIL block sum %lld want %lld\n", got, want); return 1; }

  int *sums, *maxima, *checks;
  cudaMallocManaged(&sums, 4 * sizeof(int));
  cudaMallocManaged(&maxima, 4 * sizeof(int));
  cudaMallocManaged(&checks, 8 * sizeof(int));
  tile_stats<<<1, 128>>>(x, sums, maxima, checks);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL launch\n"); return 1; }
  for (int w = 0; w < 4; ++w) {
    int s = 0, m = -1;
    for (int l = 0; l < 32; ++l) { s += x[w * 32 + l]; m = x[w * 32 + l] > m ? x[w * 32 + l] : m; }
    if (sums[w] != s || maxima[w] != m) { printf("FAIL tile %d: %d/%d want %d/%d\n", w, sums[w], maxima[w], s, m); return 1; }
  }
  for (int q = 0; q < 8; ++q) {
    int s = 0;
    for (int l = 0; l < 16; ++l) s += x[q * 16 + l];
    if (checks[q] != 1000000 + s * 100 + 11) { printf("FAIL half tile %d: %d want %d\n", q, checks[q], 1000000 + s * 100 + 11); return 1; }
  }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("cg_block_tile", src));
}

TEST(CpuEmuCooperativeGroups, CoalescedThreadsAggregateAtomicsInABranch) {
  // Stream compaction with warp-aggregated atomics: only the lanes holding a positive value
  // enter the branch; coalesced_threads() must contain exactly those (a group of all live lanes
  // would wait for lanes that never come and the launch would fail as stuck).
  const char* src = R"cu(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void keep_positive(const int* in, int* out, int* count, int* group_sizes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    int base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(count, active.size());
    base = active.shfl(base, 0);
    out[base + active.thread_rank()] = in[i];
    if (active.thread_rank() == 0) atomicAdd(group_sizes, active.size() * active.size());
  }
}

int main() {
  const int n = 512;
  int *in, *out, *count, *sq;
  cudaMallocManaged(&in, n * sizeof(int)); cudaMallocManaged(&out, n * sizeof(int));
  cudaMallocManaged(&count, sizeof(int)); cudaMallocManaged(&sq, sizeof(int));
  long long want_sum = 0; int want = 0, want_sq = 0;
  for (int w = 0; w < n / 32; ++w) {
    int k = 0;
    for (int l = 0; l < 32; ++l) {
      int i = w * 32 + l;
      in[i] = ((i * 7919) % 13) - 4;
      if (in[i] > 0) { ++want; ++k; want_sum += in[i]; }
    }
    want_sq += k * k;
  }
  *count = 0; *sq = 0;
  keep_positive<<<n / 128, 128>>>(in, out, count, sq, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL launch\n"); return 1; }
  long long sum = 0;
  for (int k = 0; k < *count; ++k) sum += out[k];
  if (*count != want || sum != want_sum) { printf("FAIL count %d want %d, sum %lld want %lld\n", *count, want, sum, want_sum); return 1; }
  // One group per warp, of exactly the lanes that took the branch.
  if (*sq != want_sq) { printf("FAIL group sizes %d want %d\n", *sq, want_sq); return 1; }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("cg_coalesced", src));
}

TEST(CpuEmuCooperativeGroups, ActivemaskInABranchHoldsOnlyTheLanesThatTookIt) {
  // Warp-aggregated increment with __activemask/__ffs/__popc inside a branch, then a block
  // barrier: a mask of all live lanes would make the shuffle wait for lanes that sit at the
  // barrier (a false deadlock).
  const char* src = R"cu(
__global__ void count_odd(const int* in, int* count, int* leaders) {
  const int v = in[threadIdx.x];
  if (v & 1) {
    const unsigned mask = __activemask();
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if ((int)(threadIdx.x % 32) == leader) { base = atomicAdd(count, __popc(mask)); atomicAdd(leaders, 1); }
    base = __shfl_sync(mask, base, leader);
  }
  __syncthreads();
}
int main() {
  int *in, *count, *leaders;
  cudaMallocManaged(&in, 128 * sizeof(int)); cudaMallocManaged(&count, sizeof(int)); cudaMallocManaged(&leaders, sizeof(int));
  int want = 0;
  for (int i = 0; i < 128; ++i) { in[i] = (i * 5) % 7; want += in[i] & 1; }
  *count = 0; *leaders = 0;
  count_odd<<<1, 128>>>(in, count, leaders);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL launch\n"); return 1; }
  if (*count != want || *leaders != 4) { printf("FAIL count %d want %d, leaders %d\n", *count, want, *leaders); return 1; }
  printf("PASS\n");
}
)cu";
  expect_ran_ok(build_and_run("activemask_branch", src));
}

TEST(CpuEmuCooperativeGroups, GridGroupsStayUnsupported) {
  auto r = build_and_run("cg_grid", R"cu(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* p) { cg::grid_group g = cg::this_grid(); g.sync(); }
int main() {}
)cu");
  EXPECT_FALSE(r.rewritten);
  EXPECT_NE(r.rewrite_error.find("grid-wide cooperative groups"), std::string::npos) << r.rewrite_error;
}

}  // namespace
