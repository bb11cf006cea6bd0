// expect: correct
// flags: implicit_warp_sync
// A pre-Volta block reduction over a user accumulator struct (sum and count): __syncthreads tree
// down to 64 partials, then the first warp finishes through `volatile acc*` with the struct's
// volatile operators and no __syncwarp (relies on implicit warp synchrony, as textbook code
// did). Block totals are added with atomicAdd.
#include <cuda_runtime.h>

#define BLOCK 256

struct acc {
  float s;
  int n;
  acc() = default;
  __device__ acc(float s_, int n_) : s(s_), n(n_) {}
  __device__ acc(const volatile acc& o) : s(o.s), n(o.n) {}
  acc(const acc&) = default;
  acc& operator=(const acc&) = default;
  __device__ void operator=(const acc& o) volatile {
    s = o.s;
    n = o.n;
  }
  __device__ acc& operator+=(const acc& o) {
    s += o.s;
    n += o.n;
    return *this;
  }
};

__device__ acc operator+(const volatile acc& a, const volatile acc& b) { return acc(a.s + b.s, a.n + b.n); }

__global__ void block_reduce(const float* x, float* out, int n) {
  __shared__ acc s[BLOCK];
  const unsigned t = threadIdx.x;
  acc mine(0.0f, 0);
  for (int i = blockIdx.x * BLOCK + t; i < n; i += gridDim.x * BLOCK) mine += acc(x[i], 1);
  s[t] = mine;
  __syncthreads();
  for (unsigned half = BLOCK / 2; half > 32; half >>= 1) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t < 32) {
    volatile acc* v = s;
    for (unsigned off = 32; off > 0; off >>= 1) v[t] = v[t] + v[t + off];
  }
  if (t == 0 && s[0].n > 0) atomicAdd(out, s[0].s);
}

extern "C" void solution(const float* x, float* out, int n) {
  cudaMemset(out, 0, sizeof(float));
  int blocks = (n + BLOCK - 1) / BLOCK;
  if (blocks > 256) blocks = 256;
  block_reduce<<<blocks, BLOCK>>>(x, out, n);
  cudaDeviceSynchronize();
}
