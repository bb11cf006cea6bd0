// expect: correct
// coalesced_threads() inside a data-dependent branch: only threads with a non-zero partial sum
// enter, the active group reduces itself with cg::reduce and its rank 0 adds the group total.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void partial_sums(const float* x, float* out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  if (v != 0.0f) {
    cg::coalesced_group active = cg::coalesced_threads();
    const float group_total = cg::reduce(active, v, cg::plus<float>());
    if (active.thread_rank() == 0) atomicAdd(out, group_total);
  }
}

extern "C" void solution(const float* x, float* out, int n) {
  cudaMemset(out, 0, sizeof(float));
  // More threads than elements for small n: the last warps have partly empty lanes.
  partial_sums<<<64, 128>>>(x, out, n);
  cudaDeviceSynchronize();
}
