// Pre-Volta warp-synchronous reduction tails over user accumulator structs in shared memory:
// after a __syncthreads tree down to 64 partials, the first warp finishes through
// `volatile acc*` with no __syncwarp, as textbook code written for lockstep warps does.
// This relies on implicit warp synchrony: since Volta the programming model no longer promises
// it, but the 32 lanes run the tail converged, so a GPU still gives the answer checked here.
//   1. sum + count: a free operator+ over `const volatile` operands, a volatile assignment and
//      a volatile member operator+=, through a local `volatile sum_count*`;
//   2. max + argmax (first index among equal maxima) through a volatile member function that
//      branches, on a `__shared__ volatile best[]` array;
//   3. a function template that copies `T mine = s[t]` from volatile memory (T(volatile T&)),
//      instantiated for the struct and for float.
// Inputs are small multiples of 1/4, so every total is exact in any order; the expected values
// come from plain host loops over the same inputs. Prints PASS when every block result matches.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>
#ifdef SV_EMU_FLAGS
#include <leap_emu/api.h>
#endif

constexpr unsigned threads = 256;

struct sum_count {
  float s;
  int n;
  sum_count() = default;
  __device__ sum_count(float s_, int n_) : s(s_), n(n_) {}
  __device__ sum_count(const volatile sum_count& o) : s(o.s), n(o.n) {}
  sum_count(const sum_count&) = default;
  sum_count& operator=(const sum_count&) = default;
  __device__ volatile sum_count& operator=(const sum_count& o) volatile {
    s = o.s;
    n = o.n;
    return *this;
  }
  __device__ volatile sum_count& operator+=(const volatile sum_count& o) volatile {
    s += o.s;
    n += o.n;
    return *this;
  }
};

__device__ sum_count operator+(const volatile sum_count& a, const volatile sum_count& b) {
  return sum_count(a.s + b.s, a.n + b.n);
}

struct best {
  float v;
  int i;
  __device__ void take(const volatile best& o) volatile {
    if (o.v > v || (o.v == v && o.i < i)) {
      v = o.v;
      i = o.i;
    }
  }
};

__device__ float value_at(const float* x, unsigned i, unsigned n) { return i < n ? x[i] : 0.0f; }

// 1. Sum of the inputs and count of the positive ones, per block of 2 * threads inputs.
__global__ void sum_count_tail(const float* x, unsigned n, float* sums, int* counts) {
  __shared__ sum_count sdata[threads];
  const unsigned t = threadIdx.x, i = blockIdx.x * threads * 2 + t;
  const float a = value_at(x, i, n), b = value_at(x, i + threads, n);
  sdata[t] = sum_count(a + b, (a > 0) + (b > 0));
  __syncthreads();
  for (unsigned s = threads / 2; s > 32; s >>= 1) {
    if (t < s) sdata[t] = sum_count(sdata[t].s + sdata[t + s].s, sdata[t].n + sdata[t + s].n);
    __syncthreads();
  }
  if (t < 32) {
    volatile sum_count* v = sdata;
    v[t] = v[t] + v[t + 32];
    v[t] = v[t] + v[t + 16];
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] = v[t] + v[t + 2];
    v[t] += v[t + 1];
  }
  if (t == 0) {
    sums[blockIdx.x] = sdata[0].s;
    counts[blockIdx.x] = sdata[0].n;
  }
}

// 2. Maximum and the first index holding it, per block of threads inputs.
__global__ void argmax_tail(const float* x, unsigned n, float* maxima, int* where) {
  __shared__ volatile best sb[threads];
  const unsigned t = threadIdx.x, i = blockIdx.x * threads + t;
  sb[t].v = i < n ? x[i] : -1e30f;
  sb[t].i = static_cast<int>(i);
  __syncthreads();
  for (unsigned s = threads / 2; s > 32; s >>= 1) {
    if (t < s) sb[t].take(sb[t + s]);
    __syncthreads();
  }
  if (t < 32) {
    sb[t].take(sb[t + 32]);
    sb[t].take(sb[t + 16]);
    sb[t].take(sb[t + 8]);
    sb[t].take(sb[t + 4]);
    sb[t].take(sb[t + 2]);
    sb[t].take(sb[t + 1]);
  }
  if (t == 0) {
    maxima[blockIdx.x] = sb[0].v;
    where[blockIdx.x] = sb[0].i;
  }
}

// 3. The tail as a template over the element type, copying elements out of volatile memory.
template <class T>
__device__ void copy_tail(volatile T* s, unsigned t) {
  for (unsigned off = 32; off > 0; off >>= 1) {
    T mine = s[t];
    T other = s[t + off];
    s[t] = mine + other;
  }
}

__global__ void template_tails(const float* x, unsigned n, float* struct_sums, int* struct_counts, float* float_sums) {
  __shared__ sum_count sc[threads];
  __shared__ float sf[threads];
  const unsigned t = threadIdx.x, i = blockIdx.x * threads + t;
  const float a = value_at(x, i, n);
  sc[t] = sum_count(a, a > 0);
  sf[t] = a;
  __syncthreads();
  for (unsigned s = threads / 2; s > 32; s >>= 1) {
    if (t < s) {
      sc[t] = sum_count(sc[t].s + sc[t + s].s, sc[t].n + sc[t + s].n);
      sf[t] += sf[t + s];
    }
    __syncthreads();
  }
  if (t < 32) {
    copy_tail<sum_count>(sc, t);
    copy_tail<float>(sf, t);
  }
  if (t == 0) {
    struct_sums[blockIdx.x] = sc[0].s;
    struct_counts[blockIdx.x] = sc[0].n;
    float_sums[blockIdx.x] = sf[0];
  }
}

int main() {
  const unsigned n = 50001;
  std::vector<float> x(n);
  for (unsigned i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(static_cast<int>((i * 37u) % 101u) - 50);
  float* dx = nullptr;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  const unsigned b1 = (n + 2 * threads - 1) / (2 * threads), b2 = (n + threads - 1) / threads;
  float *f1, *f2, *f3, *f4;
  int *i1, *i2, *i3;
  cudaMalloc(&f1, b1 * sizeof(float));
  cudaMalloc(&i1, b1 * sizeof(int));
  cudaMalloc(&f2, b2 * sizeof(float));
  cudaMalloc(&i2, b2 * sizeof(int));
  cudaMalloc(&f3, b2 * sizeof(float));
  cudaMalloc(&i3, b2 * sizeof(int));
  cudaMalloc(&f4, b2 * sizeof(float));
  sum_count_tail<<<b1, threads>>>(dx, n, f1, i1);
  argmax_tail<<<b2, threads>>>(dx, n, f2, i2);
  template_tails<<<b2, threads>>>(dx, n, f3, i3, f4);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    printf("FAIL launch: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::vector<float> sums(b1), maxima(b2), ssums(b2), fsums(b2);
  std::vector<int> counts(b1), where(b2), scounts(b2);
  cudaMemcpy(sums.data(), f1, b1 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(counts.data(), i1, b1 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(maxima.data(), f2, b2 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(where.data(), i2, b2 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(ssums.data(), f3, b2 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(scounts.data(), i3, b2 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(fsums.data(), f4, b2 * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (unsigned b = 0; b < b1; ++b) {
    float s = 0;
    int c = 0;
    for (unsigned i = b * 2 * threads; i < (b + 1) * 2 * threads && i < n; ++i) {
      s += x[i];
      c += x[i] > 0;
    }
    if ((sums[b] != s || counts[b] != c) && bad++ < 5)
      printf("FAIL sum_count block %u: got (%g, %d) want (%g, %d)\n", b, sums[b], counts[b], s, c);
  }
  for (unsigned b = 0; b < b2; ++b) {
    float m = -1e30f, s = 0;
    int at = -1, c = 0;
    for (unsigned i = b * threads; i < (b + 1) * threads && i < n; ++i) {
      if (x[i] > m) { m = x[i]; at = static_cast<int>(i); }
      s += x[i];
      c += x[i] > 0;
    }
    if ((maxima[b] != m || where[b] != at) && bad++ < 5)
      printf("FAIL argmax block %u: got (%g, %d) want (%g, %d)\n", b, maxima[b], where[b], m, at);
    if ((ssums[b] != s || scounts[b] != c || fsums[b] != s) && bad++ < 5)
      printf("FAIL template tails block %u: got (%g, %d) and %g want (%g, %d)\n", b, ssums[b], scounts[b], fsums[b], s, c);
  }
#ifdef SV_EMU_FLAGS
  printf("implicit_warp_sync %d\n", leap_emu_implicit_warp_sync());
#endif
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
