// expect: rejected
// task: vector_add
// Pins its inputs in L2 with a persisting access window, so that timed calls after the first
// read a warm cache: refused by the static guards.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4 << 20);
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<float*>(a);
  attr.accessPolicyWindow.num_bytes = sizeof(float) * n;
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &attr);
  add_kernel<<<240, 256>>>(a, b, c, n);
}
