// Block reductions for float and double through a templated helper struct that hands out the
// dynamic shared memory (the CUDA samples' pattern): the generic template converts one
// `extern __shared__ int` array, the double specialisation declares its own `double` array, and
// one templated kernel takes `T* sdata = SharedMemory<T>();`. Every value is a small multiple of
// 1/4, so each block total is exact in any summation order; the expected totals come from a
// plain host loop over the same inputs. Prints PASS when every block total matches.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

template <class T>
struct SharedMemory {
  __device__ inline operator T*() {
    extern __shared__ int sv_dynamic_ints[];
    return reinterpret_cast<T*>(sv_dynamic_ints);
  }
  __device__ inline operator const T*() const {
    extern __shared__ int sv_dynamic_ints[];
    return reinterpret_cast<const T*>(sv_dynamic_ints);
  }
};

template <>
struct SharedMemory<double> {
  __device__ inline operator double*() {
    extern __shared__ double sv_dynamic_doubles[];
    return sv_dynamic_doubles;
  }
  __device__ inline operator const double*() const {
    extern __shared__ double sv_dynamic_doubles[];
    return sv_dynamic_doubles;
  }
};

// One total per block of 2 * blockDim.x inputs; blockDim.x is a power of two.
template <class T>
__global__ void block_sums(const T* in, T* out, unsigned n) {
  T* sdata = SharedMemory<T>();
  const unsigned t = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x * 2 + t;
  T v = 0;
  if (i < n) v += in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  sdata[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sdata[t] += sdata[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sdata[0];
}

// The block totals a reduction must give, summed on the host; returns the number of mismatches.
template <class T>
int run(const char* name, unsigned n, unsigned threads) {
  const unsigned blocks = (n + 2 * threads - 1) / (2 * threads);
  std::vector<T> host(n);
  for (unsigned i = 0; i < n; ++i) host[i] = static_cast<T>(static_cast<int>(i % 29) - 14) * static_cast<T>(0.25);
  T *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(T));
  cudaMalloc(&out, blocks * sizeof(T));
  cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  block_sums<T><<<blocks, threads, threads * sizeof(T)>>>(in, out, n);
  cudaError_t err = cudaDeviceSynchronize();
  std::vector<T> got(blocks);
  cudaMemcpy(got.data(), out, blocks * sizeof(T), cudaMemcpyDeviceToHost);
  int bad = err != cudaSuccess;
  if (bad) printf("FAIL %s: %s\n", name, cudaGetErrorString(err));
  for (unsigned b = 0; b < blocks && !bad; ++b) {
    T want = 0;
    for (unsigned i = b * 2 * threads; i < (b + 1) * 2 * threads && i < n; ++i) want += host[i];
    if (got[b] != want) {
      printf("FAIL %s block %u: got %.3f want %.3f\n", name, b, static_cast<double>(got[b]), static_cast<double>(want));
      ++bad;
    }
  }
  cudaFree(in);
  cudaFree(out);
  return bad;
}

int main() {
  int bad = run<float>("float", 100003, 256);
  bad += run<double>("double", 70001, 128);
  bad += run<int>("int", 5000, 64);
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
