// Heap settings for a process that trains or samples the policy with LibTorch on the CPU.
// Call tune_allocator_for_tensors() once, early in main() (before other threads start); leap's
// main and the model benchmarks do, so the benchmarks measure what leap runs.
#pragma once

namespace leap {

// glibc malloc returns every freed block over its mmap threshold (128 KB to 32 MB, adapting) to
// the kernel, and LibTorch frees and re-allocates the same activation-sized blocks on every
// forward and backward, so each step paid for fresh zeroed pages (page faults, clear_page). This
// fixes the threshold at 32 MiB (blocks below it always on the heap) and keeps freed heap memory
// in the process (no trimming below 1 GiB): RSS stays at the peak working set of those blocks.
// bench_learner: a GRPO step of 32 quickstart sequences 1.4-1.7x faster (measured with the
// threshold at 1 GiB).
// Blocks of 32 MiB and more (a training pass's attention matrices, [B, H, T, T]) are mapped
// and unmapped as glibc does by default: kept on the heap, each new largest one grew the heap
// and the holes they left were split by small allocations, so the 30-minute soak's RSS rose in
// ~70-120 MiB steps for as long as it ran (docs/results.md, "Memory under a 30-minute soak").
// Returns false if glibc refused a setting (the defaults then stay; nothing else changes).
inline constexpr int mmap_threshold_bytes = 32 << 20;
bool tune_allocator_for_tensors();

} // namespace leap
