// Warp-level stream compaction with __ballot_sync(0xffffffff, pred) and the lanes below this
// one (%lanemask_lt, and the same mask computed in C++), and a segmented sum per key with
// __match_any_sync groups reduced by __shfl_sync inside each group, in blocks of 84 threads (the
// third warp of each has 20 lanes) whose threads past n return first. A GPU gives the values
// checked here.
#include <cstdio>

__global__ void compact(const int* in, int* out, int* counts, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  const int warp = t / 32;
  const int v = t < n ? in[t] : 0;
  const bool keep = t < n && v % 4 == 1;
  const unsigned kept = __ballot_sync(0xffffffffu, keep);
  unsigned below;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(below));
  if (below != (1u << lane) - 1) counts[warp] = -100;
  if (keep) out[warp * 32 + __popc(kept & below)] = v;
  if (lane == 0) counts[warp] = __popc(kept);
}

__global__ void sum_by_key(const int* keys, const int* vals, int* bins, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  if (t >= n) return;
  const int key = keys[t];
  int v = vals[t];
  const unsigned peers = __match_any_sync(__activemask(), key);
  const int rank = __popc(peers & ((1u << lane) - 1)), size = __popc(peers);
  for (int off = 1; off < size; off <<= 1) {
    int src = lane;
    if (rank + off < size) {
      unsigned m = peers;
      for (int r = 0; r < rank + off; ++r) m &= m - 1;
      src = __ffs(m) - 1;
    }
    const int o = __shfl_sync(peers, v, src);
    if (rank + off < size) v += o;
  }
  if (rank == 0) atomicAdd(&bins[key], v);
}

int main() {
  const int n = 164;  // 2 blocks of 96: the second has 68 threads in range
  int *in, *out, *counts, *keys, *bins;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&out, 192 * sizeof(int));
  cudaMallocManaged(&counts, 6 * sizeof(int));
  cudaMallocManaged(&keys, n * sizeof(int));
  cudaMallocManaged(&bins, 8 * sizeof(int));
  int want_bins[8] = {0};
  for (int i = 0; i < n; ++i) {
    in[i] = (i * 13 + 5) % 97;
    keys[i] = (i * i + 3 * i) % 8;
    want_bins[keys[i]] += in[i];
  }
  for (int i = 0; i < 8; ++i) bins[i] = 0;
  for (int i = 0; i < 192; ++i) out[i] = -1;
  compact<<<2, 96>>>(in, out, counts, n);
  sum_by_key<<<2, 84>>>(keys, in, bins, n);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: launch error\n");
    return 1;
  }
  int bad = 0;
  for (int w = 0; w < 6; ++w) {
    int c = 0;
    for (int l = 0; l < 32; ++l) {
      const int i = w * 32 + l;
      if (i < n && in[i] % 4 == 1) {
        if (out[w * 32 + c] != in[i]) { printf("FAIL: warp %d slot %d = %d want %d\n", w, c, out[w * 32 + c], in[i]); ++bad; }
        ++c;
      }
    }
    if (counts[w] != c) { printf("FAIL: warp %d kept %d want %d\n", w, counts[w], c); ++bad; }
    if (w * 32 + c < 192 && out[w * 32 + c] != -1 && c < 32) { printf("FAIL: warp %d wrote past its count\n", w); ++bad; }
  }
  for (int k = 0; k < 8; ++k)
    if (bins[k] != want_bins[k]) { printf("FAIL: key %d sum %d want %d\n", k, bins[k], want_bins[k]); ++bad; }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
