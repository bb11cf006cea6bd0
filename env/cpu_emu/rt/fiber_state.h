// Internal to the fiber runtime (rt/fibers.cpp, rt/collectives.cpp): the state of one worker's
// fibers, one per CUDA thread of the block it runs, and the release of the warp, converged-lane
// and tile collectives they wait at. Everything here is touched by that worker's OS thread only.
#pragma once

#include <boost/context/detail/fcontext.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "leap_emu/rt_internal.h"
#include "leap_emu/sync.h"

namespace leap_emu::detail {

namespace bctx = boost::context::detail;

enum class fstate : unsigned char { ready, at_block, at_warp, at_tile, exited };

struct fiber {
  bctx::fcontext_t ctx = nullptr;
  fstate state = fstate::ready;
  uint3 tid{};
  unsigned lane = 0;
  int pred = 0;  // predicate of the barrier / vote
  int mode = 0;  // __syncthreads variant
  int result = 0;
  warp_op op = warp_op::sync;
  unsigned mask = 0;
  std::uint64_t value = 0;
  int src = -1;
  std::uint64_t wresult = 0;
  int pred_out = 0;
  bool volatile_write = false;  // wrote through a lockstep pointer since its last sync
  // tile_collective: the tile's size, the operation and its fold
  unsigned tile = 0;
  tile_op top = tile_op::sync;
  const void* fold_obj = nullptr;
  tile_fold_fn fold = nullptr;
};

// Fiber stacks: one anonymous mapping, `count` slots of [guard page | stack].
class stack_region {
 public:
  stack_region() = default;
  stack_region(const stack_region&) = delete;
  stack_region& operator=(const stack_region&) = delete;
  ~stack_region() { release(); }

  void ensure(std::size_t count, std::size_t stack_bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t slot = (stack_bytes + page - 1) / page * page + page;
    if (count <= count_ && slot == slot_) return;
    release();
    void* p = mmap(nullptr, count * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "emulation: cannot map %zu fiber stacks of %zu bytes\n", count, slot);
      std::abort();
    }
    base_ = static_cast<char*>(p);
    for (std::size_t i = 0; i < count; ++i) mprotect(base_ + i * slot, page, PROT_NONE);
    count_ = count;
    slot_ = slot;
    page_ = page;
    install_fault_handler(base_, base_ + count * slot, slot, page);
  }
  // Stack tops are staggered by 64-byte "colours" so the hot top-of-stack lines of the fibers
  // do not all map to the same cache sets (they would at a page-aligned stride).
  static std::size_t colour(std::size_t i) { return (i % 64) * 64; }
  void* top(std::size_t i) const { return base_ + (i + 1) * slot_ - colour(i); }
  std::size_t usable(std::size_t i) const { return slot_ - page_ - colour(i); }

 private:
  void release() {
    if (base_) munmap(base_, count_ * slot_);
    base_ = nullptr;
    count_ = 0;
  }
  char* base_ = nullptr;
  std::size_t count_ = 0, slot_ = 0, page_ = 0;
};

struct worker_fibers {
  stack_region stacks;
  std::vector<fiber> fibers;
  bctx::fcontext_t sched = nullptr;
  const launch_desc* desc = nullptr;
  fiber* current = nullptr;
  std::size_t count = 0;  // threads of the current block
  std::size_t live = 0;   // of which not exited
  bool trapped = false;
  bool yielded = false;   // a fiber stayed ready (lockstep_point) in the current pass
};

// The worker thread's fibers (set while it runs a block).
extern __thread worker_fibers* tl_w;

// The name of a warp collective, for messages ("__shfl_sync", ...).
const char* op_name(warp_op op);

// Releases the warp collectives (shuffles, votes, matches, reductions, __syncwarp) whose lanes
// have all arrived; true when any was released (rt/collectives.cpp).
bool release_warps(worker_fibers& w, std::size_t n);
// Releases the lanes waiting in __activemask / coalesced_threads at the lowest call site.
bool release_converged(worker_fibers& w, std::size_t n);
// Releases the thread_block_tile collectives of tiles whose threads have all arrived.
bool release_tiles(worker_fibers& w, std::size_t n);

}  // namespace leap_emu::detail
