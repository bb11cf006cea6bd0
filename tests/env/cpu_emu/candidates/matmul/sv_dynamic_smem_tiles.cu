// expect: correct
// Tiled GEMM whose two tiles are carved from dynamic shared memory: a templated helper struct
// hands out the buffer (`extern __shared__ __align__(16) unsigned char` inside a static member
// function of a class template) for A's tile, and a second view declared
// `extern float __shared__` in the kernel template holds B's tile after it. Both views alias the
// same buffer, as on a GPU. Edges are guarded and zero-filled.
#include <cuda_runtime.h>

template <class T>
struct dynamic_tiles {
  __device__ static T* base() {
    extern __shared__ __align__(16) unsigned char sv_tile_bytes[];
    return reinterpret_cast<T*>(sv_tile_bytes);
  }
};

template <int TILE>
__global__ void gemm_dynamic(const float* A, const float* B, float* C, int M, int N, int K) {
  float* as = dynamic_tiles<float>::base();
  extern float __shared__ sv_tiles[];
  float* bs = sv_tiles + TILE * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    as[ty * TILE + tx] = row < M && k0 + tx < K ? A[row * K + k0 + tx] : 0.0f;
    bs[ty * TILE + tx] = k0 + ty < K && col < N ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty * TILE + k] * bs[k * TILE + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

extern "C" void solution(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int tile = 16;
  dim3 block(tile, tile);
  dim3 grid((N + tile - 1) / tile, (M + tile - 1) / tile);
  gemm_dynamic<tile><<<grid, block, 2 * tile * tile * sizeof(float)>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}
