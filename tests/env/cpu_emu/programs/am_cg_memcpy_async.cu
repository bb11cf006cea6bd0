// cooperative_groups::memcpy_async in a double-buffered loop: the whole block stages each chunk
// of the input into shared memory (bytes form, and the element-count form for a partial last
// chunk), cg::wait_prior<1> before using the current chunk while the next is in flight, cg::wait
// at the end; 32-thread tiles copy their own slices too. Every read of a staged chunk comes after
// the wait that covers it (wait and wait_prior also sync the group), so a GPU gives these values.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cstdio>

namespace cg = cooperative_groups;

constexpr int kThreads = 128;
constexpr int kChunk = 256;  // ints per chunk

__global__ void chunk_sums(const int* in, int n, int* out, int* tile_out) {
  __shared__ __align__(16) int buf[2][kChunk];
  __shared__ __align__(16) int slice[kThreads];
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);
  const int chunks = (n + kChunk - 1) / kChunk;
  auto fetch = [&](int c) {
    const int count = n - c * kChunk < kChunk ? n - c * kChunk : kChunk;
    if (count == kChunk) cg::memcpy_async(block, buf[c & 1], in + c * kChunk, sizeof(int) * kChunk);
    else cg::memcpy_async(block, buf[c & 1], size_t(kChunk), in + c * kChunk, size_t(count));
  };
  fetch(0);
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) {
      fetch(c + 1);
      cg::wait_prior<1>(block);
    } else {
      cg::wait(block);
    }
    const int count = n - c * kChunk < kChunk ? n - c * kChunk : kChunk;
    const int t = block.thread_rank();
    // out[c * kThreads + t] = sum of the two elements this thread mirrors
    int s = 0;
    for (int j = t; j < count; j += kThreads) s += buf[c & 1][count - 1 - j];
    out[c * kThreads + t] = s;
    block.sync();  // the buffer is refilled two iterations on
  }
  // Each 32-thread tile stages its own slice of the first 128 ints, reversed within the tile.
  cg::memcpy_async(tile, slice + tile.meta_group_rank() * 32, in + tile.meta_group_rank() * 32, 32 * sizeof(int));
  cg::wait(tile);
  tile_out[block.thread_rank()] = slice[tile.meta_group_rank() * 32 + 31 - tile.thread_rank()];
}

int main() {
  const int n = 5 * kChunk + 77;
  const int chunks = (n + kChunk - 1) / kChunk;
  int *in, *out, *tile_out;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&out, chunks * kThreads * sizeof(int));
  cudaMallocManaged(&tile_out, kThreads * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = (i * 29 + 7) % 1000;
  chunk_sums<<<1, kThreads>>>(in, n, out, tile_out);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: launch error\n");
    return 1;
  }
  int bad = 0;
  for (int c = 0; c < chunks; ++c) {
    const int count = n - c * kChunk < kChunk ? n - c * kChunk : kChunk;
    for (int t = 0; t < kThreads; ++t) {
      int want = 0;
      for (int j = t; j < kChunk; j += kThreads)
        if (j < count) want += in[c * kChunk + count - 1 - j];
      if (out[c * kThreads + t] != want && ++bad <= 5) printf("FAIL: chunk %d thread %d: %d want %d\n", c, t, out[c * kThreads + t], want);
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    const int want = in[(t / 32) * 32 + 31 - t % 32];
    if (tile_out[t] != want && ++bad <= 10) printf("FAIL: tile slice %d: %d want %d\n", t, tile_out[t], want);
  }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
