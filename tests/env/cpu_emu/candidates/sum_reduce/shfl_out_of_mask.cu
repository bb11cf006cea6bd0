// expect: wrong_answer
// reason: undefined_behaviour
// flags: undefined_behaviour
// feedback: read lane 16, which is not in the mask
// Two-level warp reduction whose second step shuffles with a mask of only the lanes that hold a
// warp total (8 of 32) while __shfl_down_sync reads lanes 16 and 8 above them: undefined on a
// GPU (where it tends to pass). The emulation cannot match an unspecified value, so it must say
// why the answer differs instead of a bare mismatch.
#include <cuda_runtime.h>

__device__ float warp_sum(unsigned mask, float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset);
  return v;
}

__global__ void sum_kernel(const float* x, float* out, int n) {
  __shared__ float warp_totals[8];
  const unsigned t = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = warp_sum(0xffffffffu, v);
  if (t % 32 == 0) warp_totals[t / 32] = v;
  __syncthreads();
  const unsigned mask = __ballot_sync(0xffffffffu, t < 8);
  if (t < 8) {
    v = warp_sum(mask, warp_totals[t]);
    if (t == 0) atomicAdd(out, v);
  }
}

extern "C" void solution(const float* x, float* out, int n) {
  cudaMemset(out, 0, sizeof(float));
  sum_kernel<<<128, 256>>>(x, out, n);
  cudaDeviceSynchronize();
}
