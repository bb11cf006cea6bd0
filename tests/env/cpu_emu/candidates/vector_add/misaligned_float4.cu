// expect: runtime_error
// reason: misaligned_address
// feedback: misaligned address in kernel add4
// float4 loads from a + 1: every 16-byte access is 4 bytes off its alignment, which a GPU
// reports as "misaligned address"; the emulation must say the same.
#include <cuda_runtime.h>

__global__ void add4(const float* a, const float* b, float* c, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 x = reinterpret_cast<const float4*>(a + 1)[i];
    float4 y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add4<<<(n / 4 + 255) / 256, 256>>>(a, b, c, n / 4 - 1);
  cudaDeviceSynchronize();
}
