// Warp reductions whose masks are computed at run time: over the lanes of a divergent branch
// (mask from __activemask(), any lane pattern, reduced by rank with __shfl_sync reading only
// lanes of the mask), a 16-lane reduction in a branch with __shfl_xor_sync and with
// __shfl_down_sync(..., 16), and the tail warp of a partial block (48 threads). Every lane reads
// only lanes inside its mask, so a GPU gives the values checked here. The masks themselves are
// checked only for what a GPU guarantees (own lane in it, only lanes that took the branch).
#include <cstdio>

__device__ int lane_of_rank(unsigned m, int rank) {
  for (int r = 0; r < rank; ++r) m &= m - 1;
  return __ffs(m) - 1;
}

__global__ void branch_sums(const int* in, int* sums, unsigned* masks, int* half_sums) {
  const int t = threadIdx.x, lane = t & 31;
  int v = in[t];
  sums[t] = -1;
  masks[t] = 0;
  if (v % 3 != 0) {
    const unsigned m = __activemask();
    const int rank = __popc(m & ((1u << lane) - 1)), n = __popc(m);
    for (int off = 1; off < n; off <<= 1) {
      const int from = rank + off;
      const int o = __shfl_sync(m, v, from < n ? lane_of_rank(m, from) : lane);
      if (from < n) v += o;
    }
    sums[t] = __shfl_sync(m, v, __ffs(m) - 1);
    masks[t] = m;
  }
  if (lane < 16) {
    const unsigned m = __activemask();
    int a = in[t], b = in[t];
    if (m == 0xffffu) {  // the whole lower half is here (the usual case): butterfly and down-tree
      for (int off = 8; off > 0; off >>= 1) a += __shfl_xor_sync(m, a, off);
      for (int off = 8; off > 0; off >>= 1) b += __shfl_down_sync(m, b, off, 16);
    } else {
      a = b = -2;  // not converged: reported below
    }
    if (lane == 0) {
      half_sums[2 * (t / 32)] = a;
      half_sums[2 * (t / 32) + 1] = b;
    }
  }
}

int main() {
  const int n = 48;
  int *in, *sums, *half_sums;
  unsigned* masks;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&sums, n * sizeof(int));
  cudaMallocManaged(&masks, n * sizeof(unsigned));
  cudaMallocManaged(&half_sums, 4 * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = (i * 7 + 1) % 40;
  branch_sums<<<1, n>>>(in, sums, masks, half_sums);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL: launch error\n");
    return 1;
  }
  int bad = 0;
  for (int t = 0; t < n; ++t) {
    const int base = t - t % 32;
    if (in[t] % 3 == 0) {
      if (sums[t] != -1 || masks[t] != 0) { printf("FAIL: lane %d outside the branch wrote\n", t); ++bad; }
      continue;
    }
    const unsigned m = masks[t];
    int want = 0;
    bool ok = (m >> (t % 32) & 1u) != 0;
    for (int l = 0; l < 32; ++l) {
      if (!(m >> l & 1u)) continue;
      if (base + l >= n || in[base + l] % 3 == 0 || masks[base + l] != m) ok = false;
      else want += in[base + l];
    }
    if (!ok || sums[t] != want) {
      printf("FAIL: thread %d mask %08x sum %d want %d\n", t, m, sums[t], want);
      ++bad;
    }
  }
  for (int w = 0; w < 2; ++w) {
    int want = 0;
    for (int l = 0; l < 16; ++l) want += in[32 * w + l];
    if (half_sums[2 * w] != want || half_sums[2 * w + 1] != want) {
      printf("FAIL: warp %d half sums %d %d want %d\n", w, half_sums[2 * w], half_sums[2 * w + 1], want);
      ++bad;
    }
  }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
