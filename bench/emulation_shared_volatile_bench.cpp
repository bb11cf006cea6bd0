// Cost of the emulation's dynamic-shared-memory forms and of lockstep through volatile pointers
// to classes. Each benchmark times two things alternately in one loop (thread CPU time;
// one-block grids run on the calling thread) and reports both and their ratio (feature/baseline):
//   struct_tail:    a 256-thread block reduction of a {sum, count} struct finished by the legacy
//                   volatile tail through vptr<acc> (one lockstep point per element reached) vs
//                   the same reduction of a float finished by the arithmetic volatile tail
//   struct_access:  one element reached through vptr<acc> (lockstep point + write detection) vs
//                   one arithmetic access through vptr<float>, ns per access per thread
//   rewrite_extern: the rewriter on a 480-line source with 320 extern __shared__ declarations in
//                   every specifier order vs the same source with plain __shared__ arrays
// Kernels are written in the emulation's dialect (what the rewriter produces).
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <string>
#include <vector>

#include "env/cpu_emu/rewriter.hpp"

#include <cuda_runtime.h>  // the emulation's shims (env/cpu_emu/include), after std headers

#include "bench/emulation_pair.hpp"

namespace {

using leap::bench::pair;
using leap::bench::thread_cpu_seconds;

constexpr int k_block = 256;
constexpr int k_rounds = 16;    // reductions per launch
constexpr int k_accesses = 64;  // volatile accesses per thread per launch (struct_access)


template <class K, class... A>
void launch1(const char* name, K kernel, A... args) {
  leap::bench::launch_block(name, true, k_block, 0, kernel, args...);
}

struct acc {
  float s;
  int n;
  acc() = default;
  acc(float s_, int n_) : s(s_), n(n_) {}
  acc(const volatile acc& o) : s(o.s), n(o.n) {}
  acc(const acc&) = default;
  acc& operator=(const acc&) = default;
  void operator=(const acc& o) volatile {
    s = o.s;
    n = o.n;
  }
};
acc operator+(const volatile acc& a, const volatile acc& b) { return acc(a.s + b.s, a.n + b.n); }

// --- struct tail vs float tail -------------------------------------------------------------------
void reduce_struct_tail(const float* x, float* out) {
  static thread_local acc s[k_block];
  const unsigned t = threadIdx.x;
  float total = 0;
  for (int r = 0; r < k_rounds; ++r) {
    s[t] = acc(x[t], 1);
    __syncthreads();
    for (unsigned h = k_block / 2; h > 32; h >>= 1) {
      if (t < h) s[t] = acc(s[t].s + s[t + h].s, s[t].n + s[t + h].n);
      __syncthreads();
    }
    if (t < 32) {
      leap_emu::vptr<acc> v(s);
      for (unsigned o = 32; o > 0; o >>= 1) v[t] = v[t] + v[t + o];
    }
    __syncthreads();
    total += s[0].s;
    __syncthreads();
  }
  if (t == 0) out[0] = total;
}

void reduce_float_tail(const float* x, float* out) {
  static thread_local float s[k_block];
  const unsigned t = threadIdx.x;
  float total = 0;
  for (int r = 0; r < k_rounds; ++r) {
    s[t] = x[t];
    __syncthreads();
    for (unsigned h = k_block / 2; h > 32; h >>= 1) {
      if (t < h) s[t] += s[t + h];
      __syncthreads();
    }
    if (t < 32) {
      leap_emu::vptr<float> v(s);
      for (unsigned o = 32; o > 0; o >>= 1) v[t] = v[t] + v[t + o];
    }
    __syncthreads();
    total += s[0];
    __syncthreads();
  }
  if (t == 0) out[0] = total;
}

// --- one element reached: class vptr vs arithmetic vptr ------------------------------------------
void access_struct(float* out) {
  static thread_local acc s[k_block];
  leap_emu::vptr<acc> v(s);
  const unsigned t = threadIdx.x;
  v[t].s = 1.0f;
  for (int k = 0; k < k_accesses / 2; ++k) v[t].s = v[t].s * 0.5f;  // two reaches per step
  out[t] = s[t].s;
}
void access_float(float* out) {
  static thread_local float s[k_block];
  leap_emu::vptr<float> v(s);
  const unsigned t = threadIdx.x;
  v[t] = 1.0f;
  for (int k = 0; k < k_accesses / 2; ++k) v[t] = v[t] * 0.5f;  // a read and a write per step
  out[t] = s[t];
}


void bm_struct_tail(benchmark::State& state) {
  std::vector<float> x(k_block, 1.0f), out(k_block, 0.0f);
  pair(state, [&] { launch1("reduce_struct_tail", reduce_struct_tail, x.data(), out.data()); },
       [&] { launch1("reduce_float_tail", reduce_float_tail, x.data(), out.data()); }, 1, nullptr);
}

void bm_struct_access(benchmark::State& state) {
  std::vector<float> out(k_block, 0.0f);
  pair(state, [&] { launch1("access_struct", access_struct, out.data()); },
       [&] { launch1("access_float", access_float, out.data()); }, double(k_block) * (k_accesses + 1),
       "ns_per_access_thread");
}

// 40 kernels, each declaring its dynamic shared memory in 8 forms (or, as the baseline, 8 plain
// __shared__ arrays on the same lines).
std::string extern_forms_source(bool dynamic) {
  static const char* forms[] = {
      "extern __shared__ float a[];",
      "extern float __shared__ b[];",
      "__shared__ extern float c[];",
      "extern __shared__ __align__(16) unsigned char d[];",
      "alignas(16) extern __shared__ unsigned long long int e[];",
      "extern __align__(8) __shared__ float2 f[];",
      "extern __shared__ float g[][33];",
      "extern __shared__ unsigned char h[] __attribute__((aligned(16)));",
  };
  static const char* plain[] = {
      "__shared__ float a[64];", "__shared__ float b[64];", "__shared__ float c[64];",
      "__shared__ __align__(16) unsigned char d[64];", "__shared__ unsigned long long int e[64];",
      "__shared__ float2 f[64];", "__shared__ float g[2][33];", "__shared__ unsigned char h[64];",
  };
  std::string s;
  for (int k = 0; k < 40; ++k) {
    s += "__global__ void k" + std::to_string(k) + "(float* out) {\n";
    for (int f = 0; f < 8; ++f) s += std::string("  ") + (dynamic ? forms[f] : plain[f]) + "\n";
    s += "  out[threadIdx.x] = a[threadIdx.x] + b[0] + c[1] + d[2] + e[3] + f[4].x + g[1][2] + h[5];\n}\n";
  }
  return s;
}

void bm_rewrite_extern(benchmark::State& state) {
  const std::string with = extern_forms_source(true), without = extern_forms_source(false);
  double ta = 0, tb = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    auto a = leap::emu::rewrite_cuda_source(with, "with.cu");
    const double t1 = thread_cpu_seconds();
    auto b = leap::emu::rewrite_cuda_source(without, "without.cu");
    const double t2 = thread_cpu_seconds();
    if (!a.ok || !b.ok) {
      state.SkipWithError((a.error + b.error).c_str());
      return;
    }
    benchmark::DoNotOptimize(a.code.size() + b.code.size());
    ta += t1 - t0;
    tb += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["us_feature"] = ta / n * 1e6;
  state.counters["us_baseline"] = tb / n * 1e6;
  state.counters["ratio"] = tb > 0 ? ta / tb : 0;
}

}  // namespace

namespace leap::bench {

void register_emulation_shared_volatile_benchmarks() {
  benchmark::RegisterBenchmark("emu/shared_volatile/struct_tail", bm_struct_tail)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/shared_volatile/struct_access", bm_struct_access)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("emu/shared_volatile/rewrite_extern", bm_rewrite_extern)->Unit(benchmark::kMicrosecond);
}

}  // namespace leap::bench
