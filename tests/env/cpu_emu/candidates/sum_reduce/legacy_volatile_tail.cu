// expect: correct
// flags: implicit_warp_sync
// The pre-Volta reduction: shared-memory tree with __syncthreads down to 64 values, then the
// first warp unrolls the rest on volatile shared memory without __syncwarp (a race since
// Volta that GPUs still answer correctly). Block totals are added with atomicAdd.
#include <cuda_runtime.h>

#define BLOCK 256

__device__ void warp_tail(volatile float* s, unsigned t) {
  s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  s[t] += s[t + 4];
  s[t] += s[t + 2];
  s[t] += s[t + 1];
}

__global__ void block_reduce(const float* x, float* out, int n) {
  __shared__ float s[BLOCK];
  const unsigned t = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * BLOCK * 2 + t; i < n; i += gridDim.x * BLOCK * 2) {
    v += x[i];
    if (i + BLOCK < n) v += x[i + BLOCK];
  }
  s[t] = v;
  __syncthreads();
  for (unsigned half = BLOCK / 2; half > 32; half >>= 1) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t < 32) warp_tail(s, t);
  if (t == 0) atomicAdd(out, s[0]);
}

extern "C" void solution(const float* x, float* out, int n) {
  cudaMemset(out, 0, sizeof(float));
  int blocks = (n + 2 * BLOCK - 1) / (2 * BLOCK);
  if (blocks > 256) blocks = 256;
  block_reduce<<<blocks, BLOCK>>>(x, out, n);
  cudaDeviceSynchronize();
}
