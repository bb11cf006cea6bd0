// expect: wrong_answer
// reason: mismatch
// A dot product that converts to half2 and accumulates in half (__hfma2, half shuffles,
// atomicAdd on __half): it runs on the emulation, and its sum of 10^6 products loses far more
// than the task's tolerance (float accumulation keeps it).
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void dot(const float* a, const float* b, __half* out, int n) {
  half2 acc = __float2half2_rn(0.0f);
  for (int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x); i + 1 < n; i += 2 * gridDim.x * blockDim.x)
    acc = __hfma2(__floats2half2_rn(a[i], a[i + 1]), __floats2half2_rn(b[i], b[i + 1]), acc);
  __half s = __hadd(__low2half(acc), __high2half(acc));
  if (blockIdx.x == 0 && threadIdx.x == 0 && (n & 1)) s = __hfma(__float2half(a[n - 1]), __float2half(b[n - 1]), s);
  for (int off = 16; off > 0; off >>= 1) s = __hadd(s, __shfl_down_sync(0xffffffffu, s, off));
  if (threadIdx.x % 32 == 0) atomicAdd(out, s);
}
__global__ void widen(const __half* h, float* out) { *out = __half2float(*h); }

extern "C" void solution(const float* a, const float* b, float* out, int n) {
  __half* acc;
  cudaMalloc(&acc, sizeof(__half));
  cudaMemset(acc, 0, sizeof(__half));
  dot<<<120, 256>>>(a, b, acc, n);
  widen<<<1, 1>>>(acc, out);
  cudaDeviceSynchronize();
  cudaFree(acc);
}
