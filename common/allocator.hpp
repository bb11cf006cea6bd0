// Heap settings for a process that trains or samples the policy with LibTorch on the CPU.
// Call tune_allocator_for_tensors() once, early in main() (before other threads start); leap's
// main and the model benchmarks do, so the benchmarks measure what leap runs.
#pragma once

namespace leap {

// glibc malloc returns every freed block over its mmap threshold (128 KB to 32 MB, adapting) to
// the kernel, and LibTorch frees and re-allocates the same activation-sized blocks on every
// forward and backward, so each step paid for fresh zeroed pages (page faults, clear_page). This
// keeps blocks up to 1 GiB on the heap and freed memory in the process (RSS stays at the peak
// working set). bench_learner: a GRPO step of 32 quickstart sequences 1.4-1.7x faster.
// Returns false if glibc refused a setting (the defaults then stay; nothing else changes).
bool tune_allocator_for_tensors();

} // namespace leap
