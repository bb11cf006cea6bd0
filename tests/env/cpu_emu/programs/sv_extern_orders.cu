// Dynamic shared memory declared in every specifier order nvcc accepts, at file scope, in a
// kernel, in a __device__ function, in a function template and in a member of a class
// template, with alignment attributes in several places and element types of one or several
// words. The CUDA programming guide says every `extern __shared__` array of a launch starts at
// the same address, so each view must read the floats the kernel wrote through the first one,
// and the arrays declared 16-byte aligned must be so. Expected values are computed on the host
// from the same formula the kernel writes (2 * t + block + 0.5). Prints PASS when all match.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

extern __shared__ float sv_file_scope_a[];
extern float __shared__ sv_file_scope_b[];

constexpr int threads = 128;
constexpr int views = 12;

__device__ float through_device_function(int i) {
  __shared__ extern float sv_device_view[];
  return sv_device_view[i];
}

template <class T>
__device__ T through_function_template(int i) {
  extern __shared__ __align__(16) unsigned char sv_raw_bytes[];
  return reinterpret_cast<const T*>(sv_raw_bytes)[i];
}

template <class T>
struct through_class_template {
  __device__ static T at(int i) {
    extern T __shared__ sv_class_view[];
    return sv_class_view[i];
  }
};

__global__ void views_of_one_buffer(float* out, int* aligned) {
  extern __shared__ float a[];
  const int t = threadIdx.x;
  a[t] = 2.0f * t + blockIdx.x + 0.5f;
  __syncthreads();
  extern float __shared__ b[];
  __shared__ extern float c[];
  alignas(16) extern __shared__ unsigned char d[];
  extern __align__(16) __shared__ unsigned long long int e[];
  extern __shared__ float m[][32];
  extern __shared__ float4 q[];
  extern __shared__ unsigned char f[] __align__(16);
  float* o = out + (blockIdx.x * views) * threads;
  o[0 * threads + t] = b[t];
  o[1 * threads + t] = c[t];
  float from_bytes;
  memcpy(&from_bytes, d + 4 * t, sizeof from_bytes);
  o[2 * threads + t] = from_bytes;
  const unsigned long long pair = e[t / 2];
  const unsigned bits = static_cast<unsigned>(t % 2 ? pair >> 32 : pair & 0xffffffffull);
  memcpy(&from_bytes, &bits, sizeof from_bytes);
  o[3 * threads + t] = from_bytes;
  o[4 * threads + t] = m[t / 32][t % 32];
  const float4 v4 = q[t / 4];
  o[5 * threads + t] = t % 4 == 0 ? v4.x : t % 4 == 1 ? v4.y : t % 4 == 2 ? v4.z : v4.w;
  o[6 * threads + t] = through_device_function(t);
  o[7 * threads + t] = through_function_template<float>(t);
  o[8 * threads + t] = through_class_template<float>::at(t);
  o[9 * threads + t] = sv_file_scope_a[t];
  o[10 * threads + t] = sv_file_scope_b[t];
  o[11 * threads + t] = static_cast<float>(through_function_template<unsigned char>(4 * t + 3) == f[4 * t + 3]);
  if (t == 0) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(a);
    aligned[blockIdx.x] = base % 16 == 0 && reinterpret_cast<uintptr_t>(d) == base &&
                          reinterpret_cast<uintptr_t>(e) == base && reinterpret_cast<uintptr_t>(q) == base &&
                          reinterpret_cast<uintptr_t>(f) == base && reinterpret_cast<uintptr_t>(m) == base &&
                          reinterpret_cast<uintptr_t>(sv_file_scope_b) == base;
  }
}

int main() {
  const int blocks = 3;
  float* out = nullptr;
  int* aligned = nullptr;
  cudaMalloc(&out, blocks * views * threads * sizeof(float));
  cudaMalloc(&aligned, blocks * sizeof(int));
  views_of_one_buffer<<<blocks, threads, threads * sizeof(float)>>>(out, aligned);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    printf("FAIL launch: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::vector<float> got(blocks * views * threads);
  std::vector<int> al(blocks);
  cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(al.data(), aligned, al.size() * sizeof(int), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    if (al[b] != 1) {
      printf("FAIL block %d: the dynamic arrays do not all start at one 16-byte aligned address\n", b);
      ++bad;
    }
    for (int v = 0; v < views; ++v)
      for (int t = 0; t < threads; ++t) {
        const float want = v == 11 ? 1.0f : 2.0f * t + b + 0.5f;
        const float g = got[(b * views + v) * threads + t];
        if (g != want && bad < 10) printf("FAIL block %d view %d thread %d: got %g want %g\n", b, v, t, g, want);
        bad += g != want;
      }
  }
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
