// The per-feature cost benchmarks of bench_emulation (emulation_features_bench.cpp): each pits a
// kernel that uses one emulation mechanism (volatile lockstep, cooperative groups,
// coalesced_threads, cp.async, the rewriter's #if evaluation) against the same work without it,
// alternately in one run. Called once from bench_emulation's main thread before running.
#pragma once

namespace leap::bench {

void register_emulation_feature_benchmarks();
// extern __shared__ forms and volatile class types (emulation_shared_volatile_bench.cpp).
void register_emulation_shared_volatile_benchmarks();
// half and bfloat16 arithmetic (emulation_half_bench.cpp).
void register_emulation_half_benchmarks();
// asynchronous cp.async, run-time shuffle masks, larger cooperative tiles (emulation_async_masks_bench.cpp).
void register_emulation_async_masks_benchmarks();

} // namespace leap::bench
