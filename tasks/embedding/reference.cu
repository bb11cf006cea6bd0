// Reference for task embedding (out[i, :] = table[ids[i], :]): naive and correct, one thread per
// output element.
// Used by leap as ground truth for candidates; compiled by nvcc and by the CPU emulation.
#include <cuda_runtime.h>

__global__ void embedding_kernel(const int* ids, const float* table, float* out, int n_ids,
                                 int vocab, int dim) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n_ids * dim) return;
  const int i = idx / dim;
  const int c = idx % dim;
  const int id = ids[i];
  if (id < 0 || id >= vocab) return;
  out[idx] = table[(long long)id * dim + c];
}

extern "C" void solution(const int* ids, const float* table, float* out, int n_ids, int vocab,
                         int dim) {
  if (n_ids <= 0 || dim <= 0) return;
  const int total = n_ids * dim;
  const int block = 256;
  const int grid = (total + block - 1) / block;
  embedding_kernel<<<grid, block>>>(ids, table, out, n_ids, vocab, dim);
  cudaDeviceSynchronize();
}
