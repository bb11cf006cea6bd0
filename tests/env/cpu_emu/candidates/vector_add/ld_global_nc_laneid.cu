// expect: correct
// Read-only loads through inline PTX (ld.global.nc.v4.f32 for whole float4s, ld.global.nc.f32
// for the tail) and the lane index from mov %laneid, checked against threadIdx.
#include <cuda_runtime.h>

__device__ __forceinline__ float4 load_nc4(const float* p) {
  float4 v;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ float load_nc(const float* p) {
  float v;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned lane_index() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__global__ void add_nc(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float wrong_lane = lane_index() == threadIdx.x % 32 ? 0.0f : 1.0f;  // breaks the result if not
  if (4 * i + 3 < n) {
    const float4 x = load_nc4(a + 4 * i), y = load_nc4(b + 4 * i);
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x + wrong_lane, x.y + y.y, x.z + y.z, x.w + y.w);
  } else {
    for (int k = 4 * i; k < n; ++k) c[k] = load_nc(a + k) + load_nc(b + k) + wrong_lane;
  }
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  const int quads = (n + 3) / 4;
  add_nc<<<(quads + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
