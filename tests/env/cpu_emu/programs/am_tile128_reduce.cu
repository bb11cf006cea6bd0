// Tiles larger than a warp: cg::tiled_partition<128> and <64> of a thread block made with
// block_tile_memory, their ranks, sizes and meta-group ranks, tile.sync() ordering shared-memory
// writes across the tile's warps, shfl (broadcast from a rank), any/all, cg::reduce (plus and
// greater), and 32-thread tiles partitioned from a 128-thread tile; also the thread_block
// members group_dim/dim_threads/num_threads/thread_index/group_index. Blocks of 256 threads,
// 3 blocks. A GPU gives the values checked here.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>

namespace cg = cooperative_groups;

constexpr int kBlock = 256;
constexpr int kOut = 12;  // values per thread

__global__ void tiles(const int* in, int* out) {
  __shared__ cg::block_tile_memory<kBlock> scratch;
  __shared__ int neighbour[kBlock];
  cg::thread_block block = cg::this_thread_block(scratch);
  cg::thread_block_tile<128> t128 = cg::tiled_partition<128>(block);
  auto t64 = cg::tiled_partition<64>(block);
  auto t32 = cg::tiled_partition<32>(t128);
  const unsigned r = block.thread_rank();
  const int v = in[blockIdx.x * kBlock + r];
  neighbour[r] = v;
  t128.sync();  // the tile's writes are visible to the whole tile
  const int next = neighbour[r - t128.thread_rank() + (t128.thread_rank() + 1) % t128.num_threads()];
  int* o = out + (blockIdx.x * kBlock + r) * kOut;
  o[0] = cg::reduce(t128, v, cg::plus<int>());
  o[1] = cg::reduce(t64, v, cg::greater<int>());
  o[2] = t128.shfl(v, 5);
  o[3] = t128.any(v == 77) + 2 * t128.all(v >= 0);
  o[4] = t128.thread_rank() + 1000 * t128.meta_group_rank() + 100000 * t128.meta_group_size();
  o[5] = t64.thread_rank() + 1000 * t64.meta_group_rank() + 100000 * t64.meta_group_size();
  o[6] = t32.thread_rank() + 1000 * t32.meta_group_rank() + 100000 * t32.meta_group_size();
  o[7] = static_cast<int>(t128.size() + t64.num_threads());
  o[8] = next;
  o[9] = static_cast<int>(block.group_dim().x + block.dim_threads().y * 1000 + block.num_threads() * 10);
  o[10] = static_cast<int>(block.thread_index().x + 1000 * block.group_index().x);
  o[11] = cg::reduce(t32, v, cg::plus<int>());
}

int main() {
  const int blocks = 3, n = blocks * kBlock;
  int *in, *out;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&out, n * kOut * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = (i * 53 + 11) % 200;
  tiles<<<blocks, kBlock>>>(in, out);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: launch error\n");
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const int r = i % kBlock, b = i / kBlock;
    const int b128 = i - r % 128, b64 = i - r % 64, b32 = i - r % 32;
    int sum128 = 0, max64 = 0, sum32 = 0, any77 = 0, allpos = 1;
    for (int k = 0; k < 128; ++k) {
      sum128 += in[b128 + k];
      any77 |= in[b128 + k] == 77;
      allpos &= in[b128 + k] >= 0;
    }
    for (int k = 0; k < 64; ++k) max64 = in[b64 + k] > max64 ? in[b64 + k] : max64;
    for (int k = 0; k < 32; ++k) sum32 += in[b32 + k];
    const int want[kOut] = {sum128,
                            max64,
                            in[b128 + 5],
                            any77 + 2 * allpos,
                            r % 128 + 1000 * (r / 128) + 100000 * 2,
                            r % 64 + 1000 * (r / 64) + 100000 * 4,
                            r % 32 + 1000 * ((r % 128) / 32) + 100000 * 4,
                            192,
                            in[b128 + (r % 128 + 1) % 128],
                            kBlock + 1000 + kBlock * 10,
                            r + 1000 * b,
                            sum32};
    for (int j = 0; j < kOut; ++j)
      if (out[i * kOut + j] != want[j] && ++bad <= 8)
        printf("FAIL: thread %d value %d = %d, want %d\n", i, j, out[i * kOut + j], want[j]);
  }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
