// expect: correct
// vector_add with float4 vectorised loads and stores over the first n/4*4 elements, a scalar tail
// for the rest, and grid-stride loops. Falls back to the scalar loop when a pointer is not 16-byte
// aligned (a harness may offset buffers, e.g. to place canaries).
#include <cuda_runtime.h>
#include <cstdint>

__global__ void add_vec4(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, int n, int use_vec4) {
  const int stride = blockDim.x * gridDim.x;
  const int start = blockIdx.x * blockDim.x + threadIdx.x;
  int tail_begin = 0;
  if (use_vec4) {
    const int n4 = n / 4;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (int i = start; i < n4; i += stride) {
      const float4 x = a4[i];
      const float4 y = b4[i];
      float4 r;
      r.x = x.x + y.x;
      r.y = x.y + y.y;
      r.z = x.z + y.z;
      r.w = x.w + y.w;
      c4[i] = r;
    }
    tail_begin = n4 * 4;
  }
  for (int i = tail_begin + start; i < n; i += stride) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  if (n <= 0) return;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(a) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(b) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(c) % 16 == 0);
  const int block = 256;
  int grid = (n / 4 + block - 1) / block;
  if (grid < 1) grid = 1;
  if (grid > 1024) grid = 1024;
  add_vec4<<<grid, block>>>(a, b, c, n, aligned ? 1 : 0);
  cudaDeviceSynchronize();
}
