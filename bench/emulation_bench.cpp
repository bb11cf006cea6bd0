// Cost of __syncthreads() in leap's CUDA-on-CPU emulation (env/cpu_emu: one Boost.Context fiber
// per CUDA thread; a block barrier switches through every fiber of the block). One block of
// 32, 256 or 1024 threads runs a loop of N steps of register arithmetic, with a __syncthreads()
// after each step or without; the kernels are written directly in the emulation's C++ dialect
// (the shim <cuda_runtime.h>, launched with leap_emu::launch_kernel as the rewriter would) and
// run on the calling thread (a one-block grid uses no helper workers). Reported: launch time
// with barriers, without (fibers, so the same fiber set-up), and on the plain-loop path; and,
// from both kernels timed alternately in one run (thread CPU time: the launch runs entirely on
// this thread, so other load on the machine does not inflate it), ns per barrier per thread
// = (t_barrier - t_no_barrier) / (N * block size).
#include "bench/emulation_features.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h> // the emulation's shim (env/cpu_emu/include), after every std header

namespace {

__global__ void steps_with_barrier(float* out, int steps) {
  float acc = static_cast<float>(threadIdx.x);
  for (int i = 0; i < steps; ++i) {
    acc = acc * 0.999f + 1.0f;
    __syncthreads();
  }
  out[threadIdx.x] = acc;
}

__global__ void steps_without_barrier(float* out, int steps) {
  float acc = static_cast<float>(threadIdx.x);
  for (int i = 0; i < steps; ++i) {
    acc = acc * 0.999f + 1.0f;
    LEAP_EMU_COMPILER_FENCE(); // keep the loop (the barrier version has the same fences)
  }
  out[threadIdx.x] = acc;
}

enum class variant { barrier, no_barrier_fibers, no_barrier_loop };

// One launch of a one-block grid; `fibers` = the TU-uses-sync flag the rewriter would set.
void launch(variant v, float* out, int block, int steps) {
  const auto cfg = leap_emu::make_launch_config(dim3(1), dim3(static_cast<unsigned>(block)));
  if (v == variant::barrier)
    leap_emu::launch_kernel("steps_with_barrier", 1, cfg, [&](auto&... a) { steps_with_barrier(a...); }, out,
                            steps);
  else
    leap_emu::launch_kernel("steps_without_barrier", v == variant::no_barrier_fibers ? 1 : 0, cfg,
                            [&](auto&... a) { steps_without_barrier(a...); }, out, steps);
}

bool emulation_failed(benchmark::State& state) {
  if (const char* e = leap_emu_fatal_error()) {
    state.SkipWithError(e);
    return true;
  }
  return false;
}

constexpr int k_steps = 64;

void bm_launch(benchmark::State& state, variant v) {
  const int block = static_cast<int>(state.range(0));
  std::vector<float> out(static_cast<std::size_t>(block));
  for (auto _ : state) {
    launch(v, out.data(), block, k_steps);
    benchmark::ClobberMemory();
  }
  if (emulation_failed(state)) return;
  state.SetItemsProcessed(state.iterations() * block); // CUDA threads run
  state.counters["steps"] = k_steps;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Both kernels alternately in one loop; the difference is the barriers' cost.
void bm_barrier_cost(benchmark::State& state) {
  const int block = static_cast<int>(state.range(0));
  std::vector<float> out(static_cast<std::size_t>(block));
  double with_s = 0, without_s = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    launch(variant::no_barrier_fibers, out.data(), block, k_steps);
    const double t1 = thread_cpu_seconds();
    launch(variant::barrier, out.data(), block, k_steps);
    const double t2 = thread_cpu_seconds();
    without_s += t1 - t0;
    with_s += t2 - t1;
    benchmark::ClobberMemory();
  }
  if (emulation_failed(state)) return;
  const double n = static_cast<double>(state.iterations());
  state.counters["us_launch_barrier"] = with_s / n * 1e6;
  state.counters["us_launch_no_barrier"] = without_s / n * 1e6;
  state.counters["ns_per_barrier_thread"] = (with_s - without_s) / n / (double(k_steps) * block) * 1e9;
  state.counters["ratio"] = without_s > 0 ? with_s / without_s : 0;
}

void blocks(benchmark::internal::Benchmark* b) {
  b->ArgName("block");
  for (int t : {32, 256, 1024}) b->Arg(t);
  b->Unit(benchmark::kMicrosecond);
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RegisterBenchmark("emu/barrier_cost", bm_barrier_cost)->Apply(blocks);
  benchmark::RegisterBenchmark("emu/launch_barrier", bm_launch, variant::barrier)->Apply(blocks);
  benchmark::RegisterBenchmark("emu/launch_no_barrier_fibers", bm_launch, variant::no_barrier_fibers)->Apply(blocks);
  benchmark::RegisterBenchmark("emu/launch_no_barrier_loop", bm_launch, variant::no_barrier_loop)->Apply(blocks);
  leap::bench::register_emulation_feature_benchmarks();
  leap::bench::register_emulation_shared_volatile_benchmarks();
  leap::bench::register_emulation_half_benchmarks();
  leap::bench::register_emulation_async_masks_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
