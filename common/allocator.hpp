// Heap settings and figures for a process that trains or samples the policy with LibTorch on the
// CPU. Call tune_allocator_for_tensors() once, early in main() (before other threads start); leap's
// main and the model benchmarks do. heap_figures_now() may be called from any thread at any time.
//
// Which allocator serves malloc is decided at link time: `leap-torch` links tcmalloc
// (libtcmalloc_minimal, when installed: runtime/CMakeLists.txt), everything else uses glibc's
// malloc. The functions here find out at run time and act on the one in use: glibc's mallopt and
// malloc_trim are no-ops for memory tcmalloc holds, and tcmalloc's MallocExtension does not exist
// without it (looked up with dlsym, so no header or link dependency on gperftools).
#pragma once

#include "common/result.hpp"

#include <cstdint>

namespace leap {

enum class heap_allocator : std::uint8_t { glibc, tcmalloc, other };
const char* to_string(heap_allocator a);

// The allocator that serves this process's malloc.
heap_allocator active_heap_allocator();

// Sets glibc's malloc up for LibTorch's many large, short-lived tensors; does nothing under
// tcmalloc (what `leap-torch` runs, where mallopt is a no-op). glibc returns every freed block over
// its mmap threshold (128 KB to 32 MB, adapting) to the kernel, and LibTorch frees and re-allocates
// the same activation-sized blocks on every forward and backward, so each step paid for fresh
// zeroed pages (page faults, clear_page). This fixes the threshold at 32 MiB (blocks below it
// always on the heap) and keeps freed heap memory in the process (no trimming below 1 GiB).
// bench_learner (glibc): a GRPO step of 32 quickstart sequences 1.4-1.7x faster (measured with
// the threshold at 1 GiB). Blocks of 32 MiB and more are mapped and unmapped as glibc does by
// default.
// tcmalloc keeps freed spans and returns them to the kernel slowly; TCMALLOC_AGGRESSIVE_DECOMMIT=true
// in the environment returns them at once: a lower and steadier resident memory for long training
// runs, at a measured cost in sampling throughput (docs/results.md, "Memory under a 30-minute
// soak"). leap leaves that choice to the user.
// Returns false if glibc refused a setting (its defaults then stay; nothing else changes).
inline constexpr int mmap_threshold_bytes = 32 << 20;
bool tune_allocator_for_tensors();

// What the heap holds: bytes in live allocations, bytes the allocator has taken from the kernel
// and keeps resident, and of those the free bytes it keeps for reuse. tcmalloc: its
// generic.current_allocated_bytes, generic.heap_size minus tcmalloc.pageheap_unmapped_bytes, and
// tcmalloc.pageheap_free_bytes; glibc: mallinfo2's uordblks + hblkhd, arena + hblkhd, and fordblks.
struct heap_figures {
  heap_allocator allocator = heap_allocator::other;
  std::uint64_t in_use_bytes = 0;
  std::uint64_t resident_bytes = 0;
  std::uint64_t free_bytes = 0;
};
// An error when the allocator in use offers no figures (neither glibc nor tcmalloc).
result<heap_figures> heap_figures_now();

// This process's resident set (RSS) in bytes, from /proc/self/statm; an error where there is none.
result<std::uint64_t> process_resident_bytes();


} // namespace leap
