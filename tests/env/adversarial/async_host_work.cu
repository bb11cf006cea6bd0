// expect: rejected
// task: vector_add
// Starts the work with std::async and returns before it finishes: refused by the static guards.
#include <cuda_runtime.h>
#include <future>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

static std::future<void> pending;
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  pending = std::async(std::launch::async, [=] {
    add_kernel<<<240, 256>>>(a, b, c, n);
    cudaDeviceSynchronize();
  });
}
