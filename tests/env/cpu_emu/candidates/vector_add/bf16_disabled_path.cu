// expect: correct
// A bfloat16 path behind a macro that is not defined, and headers (cuda_bf16.h,
// cooperative_groups.h) included but never used: nothing here needs bf16 or cooperative groups.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#if defined(VECTOR_ADD_WITH_BF16)
#include <cuda_bf16.h>
typedef __nv_bfloat16 element;
__device__ inline element add(element a, element b) { return __hadd(a, b); }
#else
typedef float element;
__device__ inline element add(element a, element b) { return a + b; }
#endif

__global__ void add_kernel(const element* a, const element* b, element* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) c[i] = add(a[i], b[i]);
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_kernel<<<240, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
