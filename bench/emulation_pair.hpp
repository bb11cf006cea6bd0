// What the per-feature benchmarks of the CPU emulation share (bench/emulation_*_bench.cpp): the
// calling thread's CPU time, a one-block launch in the emulation's dialect (what the rewriter
// produces), and the alternating timing of a kernel that uses a feature against the same work
// without it. Include after the standard headers (it pulls in the emulation's shims); call from
// bench_emulation's main thread, where one-block launches run.
#pragma once

#include <benchmark/benchmark.h>

#include <time.h>

#include <cuda_runtime.h>

namespace leap::bench {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One block of `threads` threads with `smem` bytes of dynamic shared memory, on the fiber path
// (`fibers`: as for a file that uses barriers or warp operations) or the plain loop.
template <class K, class... A>
void launch_block(const char* name, bool fibers, unsigned threads, unsigned smem, K kernel, A... args) {
  const auto cfg = leap_emu::make_launch_config(dim3(1), dim3(threads), smem);
  leap_emu::launch_kernel(name, fibers ? 1 : 0, cfg, [&](auto&... a) { kernel(a...); }, args...);
}

// Times `a` (the feature) and `b` (the baseline) alternately, in thread CPU time. Counters:
// us_feature and us_baseline per launch, ratio = a / b, and, when `unit_counter` is set, the
// difference per launch divided by `per_launch_units`, in ns. False (the benchmark skipped with
// the emulation's message) when a launch failed.
template <class A, class B>
bool pair(benchmark::State& state, A a, B b, double per_launch_units = 0, const char* unit_counter = nullptr) {
  double ta = 0, tb = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    a();
    const double t1 = thread_cpu_seconds();
    b();
    const double t2 = thread_cpu_seconds();
    ta += t1 - t0;
    tb += t2 - t1;
    benchmark::ClobberMemory();
  }
  if (const char* e = leap_emu_fatal_error()) {
    state.SkipWithError(e);
    return false;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["us_feature"] = ta / n * 1e6;
  state.counters["us_baseline"] = tb / n * 1e6;
  state.counters["ratio"] = tb > 0 ? ta / tb : 0;
  if (unit_counter)
    state.counters[unit_counter] = (ta - tb) / n / per_launch_units * 1e9;
  return true;
}

} // namespace leap::bench
