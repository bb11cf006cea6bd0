// Fiber execution of one block: each CUDA thread is a Boost.Context fcontext fiber on a stack
// carved from one mmap region (guard page below each). The worker's scheduler runs every ready
// fiber until it exits or waits at a barrier, then releases complete block/warp barriers;
// when nothing can be released the block is stuck and the launch fails (no hang).
// Also the device-side entry points of __syncthreads and the warp collectives. Everything here
// runs on one worker OS thread; fibers never migrate between threads.
#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "leap_emu/ptx.h"
#include "leap_emu/rt_internal.h"
#include "leap_emu/sync.h"

namespace bctx = boost::context::detail;

namespace leap_emu::detail {
namespace {

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

thread_local worker_fibers tl_worker;
__thread worker_fibers* tl_w = nullptr;

std::size_t stack_bytes() {
  static const std::size_t kb = static_cast<std::size_t>(env_int("LEAP_EMU_STACK_KB", 128, 16, 1 << 20));
  return kb * 1024;
}

// Every jump passes the address where the receiver stores the jumper's suspended context.
void save_jumper(bctx::transfer_t t) { *static_cast<bctx::fcontext_t*>(t.data) = t.fctx; }

// Next ready fiber after `from` in this pass, or nullptr.
fiber* next_ready(worker_fibers* w, fiber* from) {
  fiber* end = w->fibers.data() + w->count;
  for (fiber* f = from + 1; f < end; ++f)
    if (f->state == fstate::ready) return f;
  return nullptr;
}

// Leaves the current fiber (already marked waiting or exited): switches straight to the next
// ready fiber of the pass, or back to the scheduler at the end of the pass. `slot` receives
// this fiber's context.
void switch_away(worker_fibers* w, bctx::fcontext_t* slot) {
  fiber* next = w->trapped ? nullptr : next_ready(w, w->current);
  bctx::transfer_t t;
  if (next) {
    w->current = next;
    tl_thread_idx = next->tid;
    t = bctx::jump_fcontext(next->ctx, slot);
  } else {
    t = bctx::jump_fcontext(w->sched, slot);
  }
  save_jumper(t);
}

void yield_to_scheduler(worker_fibers* w) { switch_away(w, &w->current->ctx); }

void fiber_main(bctx::transfer_t t) {
  save_jumper(t);
  worker_fibers* w = tl_w;
  w->desc->run_thread(w->desc->closure);
  w->current->state = fstate::exited;
  --w->live;
  bctx::fcontext_t dead = nullptr;
  switch_away(w, &dead);
  std::abort();  // an exited fiber is never resumed
}

const char* op_name(warp_op op) {
  switch (op) {
    case warp_op::sync: return "__syncwarp";
    case warp_op::shfl: return "a __shfl*_sync";
    case warp_op::ballot: return "a vote (__ballot/__any/__all_sync)";
    case warp_op::match_any:
    case warp_op::match_all: return "a __match_*_sync";
    case warp_op::converge: return "coalesced_threads()";
    default: return "a __reduce_*_sync";
  }
}

std::uint64_t reduce(warp_op op, const fiber* lanes, unsigned group) {
  std::uint32_t acc = 0;
  bool first = true;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    const auto v = static_cast<std::uint32_t>(lanes[l].value);
    if (first) { acc = v; first = false; continue; }
    switch (op) {
      case warp_op::reduce_add: acc += v; break;
      case warp_op::reduce_min_s: acc = static_cast<std::int32_t>(v) < static_cast<std::int32_t>(acc) ? v : acc; break;
      case warp_op::reduce_max_s: acc = static_cast<std::int32_t>(v) > static_cast<std::int32_t>(acc) ? v : acc; break;
      case warp_op::reduce_min_u: acc = v < acc ? v : acc; break;
      case warp_op::reduce_max_u: acc = v > acc ? v : acc; break;
      case warp_op::reduce_and: acc &= v; break;
      case warp_op::reduce_or: acc |= v; break;
      case warp_op::reduce_xor: acc ^= v; break;
      default: break;
    }
  }
  return acc;
}

// A shuffle that reads a lane outside its group: undefined on a GPU (PTX: the value is
// unspecified). Noted once per process with a reason, never silent; the lane gets its own value.
void note_undefined_shuffle(const fiber& f, unsigned group, unsigned live, unsigned count) {
  const char* why = f.src >= static_cast<int>(count) ? "does not exist (the block ends before it)"
                    : !(f.mask >> f.src & 1u)         ? "is not in the mask"
                    : !(live >> f.src & 1u)           ? "has already exited"
                                                      : "is not taking part";
  char buf[160];
  std::snprintf(buf, sizeof buf, "lane %d, which %s (mask 0x%08x, lanes taking part 0x%08x)", f.src, why, f.mask,
                group);
  record_undefined(std::string("emulation: undefined behaviour in kernel ") + tl_w->desc->kernel_name +
                   ", block " + dim_string(tl_block_idx) + ", thread " + dim_string(f.tid) +
                   ": a __shfl*_sync read " + buf +
                   "; a GPU returns an unspecified value there, the emulation returned the reading lane's own value");
}

// The guide's rule for every *_sync: each non-exited lane named in the mask executes the same
// intrinsic with the same mask. A group whose lanes name different sets of lanes (or wait in
// different intrinsics) is undefined on a GPU (a deadlock or garbage): noted, then released.
void check_same_mask(const fiber* lanes, unsigned group, unsigned live) {
  const unsigned first = static_cast<unsigned>(__builtin_ctz(group));
  for (unsigned l = first; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    const unsigned named = (lanes[l].mask | (1u << l)) & live;
    if (named == group && lanes[l].op == lanes[first].op) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "lane %u called %s with mask 0x%08x, lane %u (named in it) %s with mask 0x%08x",
                  first, op_name(lanes[first].op), lanes[first].mask, l, op_name(lanes[l].op), lanes[l].mask);
    record_undefined(std::string("emulation: undefined behaviour in kernel ") + tl_w->desc->kernel_name + ", block " +
                     dim_string(tl_block_idx) + ": " + buf +
                     "; every non-exited lane named in the mask of a *_sync must call the same one with the same mask");
    return;
  }
}

// Completes the warp collective of the lanes in `group` (all waiting) of the warp at `lanes`.
void release_group(fiber* lanes, unsigned group, unsigned live, unsigned count) {
  check_same_mask(lanes, group, live);
  unsigned ballot = 0;
  for (unsigned l = 0; l < 32; ++l)
    if ((group >> l & 1u) && lanes[l].pred) ballot |= 1u << l;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    fiber& f = lanes[l];
    switch (f.op) {
      case warp_op::sync: break;
      case warp_op::shfl:
        if (f.src >= 0 && f.src < 32 && (group >> f.src & 1u)) {
          f.wresult = lanes[f.src].value;
        } else {
          f.wresult = f.value;
          if (f.src >= 0 && f.src < 32) note_undefined_shuffle(f, group, live, count);
        }
        break;
      case warp_op::ballot:
        f.wresult = ballot;
        f.pred_out = ballot == group;
        break;
      case warp_op::match_any:
      case warp_op::match_all: {
        unsigned same = 0;
        for (unsigned k = 0; k < 32; ++k)
          if ((group >> k & 1u) && lanes[k].value == f.value) same |= 1u << k;
        if (f.op == warp_op::match_any) {
          f.wresult = same;
        } else {
          f.pred_out = same == group;
          f.wresult = same == group ? group : 0u;
        }
        break;
      }
      default: f.wresult = reduce(f.op, lanes, group); break;
    }
    f.state = fstate::ready;
  }
}

bool release_warps(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t base = 0; base < n; base += 32) {
    fiber* lanes = &w.fibers[base];
    const std::size_t count = n - base < 32 ? n - base : 32;
    unsigned waiting = 0, live = 0;
    for (std::size_t l = 0; l < count; ++l) {
      if (lanes[l].state == fstate::at_warp && lanes[l].op != warp_op::converge) waiting |= 1u << l;
      if (lanes[l].state != fstate::exited) live |= 1u << l;
    }
    for (unsigned l = 0; l < count && waiting; ++l) {
      if (!(waiting >> l & 1u)) continue;
      const unsigned group = (lanes[l].mask | (1u << l)) & live;
      if (group & ~waiting) continue;  // a partner has not arrived (or waits elsewhere)
      release_group(lanes, group, live, static_cast<unsigned>(count));
      waiting &= ~group;
      released = true;
    }
  }
  return released;
}

// Lanes waiting in coalesced_threads() / __activemask(): those of a warp at the same call site
// form the group. Runs only when nothing else can be released, so every lane that can get there
// has. When lanes of a warp wait at several sites, only the group at the first site in the
// source (the lowest line) goes on: the others may be where the warp reconverges after a branch
// (`if (c) { m = __activemask(); ... } m2 = __activemask();`), which on a GPU the lanes of the
// branch reach too before m2 is taken.
bool release_converged(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t base = 0; base < n; base += 32) {
    fiber* lanes = &w.fibers[base];
    const std::size_t count = n - base < 32 ? n - base : 32;
    unsigned group = 0;
    std::uint64_t site = ~std::uint64_t(0);
    for (std::size_t l = 0; l < count; ++l) {
      if (lanes[l].state != fstate::at_warp || lanes[l].op != warp_op::converge) continue;
      if (lanes[l].value < site) {
        site = lanes[l].value;
        group = 0;
      }
      if (lanes[l].value == site) group |= 1u << l;
    }
    for (std::size_t l = 0; l < count; ++l)
      if (group >> l & 1u) {
        lanes[l].wresult = group;
        lanes[l].state = fstate::ready;
      }
    released |= group != 0;
  }
  return released;
}

// Tiles larger than a warp (tile_collective): a tile goes on when every non-exited thread of it
// waits there with the same tile size.
bool release_tiles(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t i = 0; i < n; ++i) {
    const fiber& lead = w.fibers[i];  // the first waiter of its tile
    if (lead.state != fstate::at_tile) continue;
    const std::size_t base = i - i % lead.tile, end = base + lead.tile < n ? base + lead.tile : n;
    bool all = true;
    for (std::size_t k = base; k < end && all; ++k) {
      const fiber& f = w.fibers[k];
      all = f.state == fstate::exited || (f.state == fstate::at_tile && f.tile == lead.tile && f.top == lead.top);
    }
    const std::size_t last = end - 1;
    if (!all) {
      i = last;
      continue;
    }
    std::uint64_t any = 0, every = 1, acc = 0;
    bool have = false;
    for (std::size_t k = base; k < end; ++k) {
      const fiber& f = w.fibers[k];
      if (f.state == fstate::exited) continue;
      any |= f.value != 0;
      every &= f.value != 0;
      if (lead.top == tile_op::fold) acc = have ? lead.fold(lead.fold_obj, acc, f.value) : f.value;
      have = true;
    }
    for (std::size_t k = base; k < end; ++k) {
      fiber& f = w.fibers[k];
      if (f.state == fstate::exited) continue;
      switch (f.top) {
        case tile_op::sync: f.wresult = 0; break;
        case tile_op::shfl: {
          const std::size_t src = base + static_cast<std::size_t>(f.src) % f.tile;
          if (src < end && w.fibers[src].state != fstate::exited) {
            f.wresult = w.fibers[src].value;
          } else {
            f.wresult = f.value;
            record_undefined(std::string("emulation: undefined behaviour in kernel ") + w.desc->kernel_name +
                             ", block " + dim_string(tl_block_idx) + ", thread " + dim_string(f.tid) + ": a thread_block_tile<" +
                             std::to_string(f.tile) + ">::shfl read rank " + std::to_string(src - base) +
                             (src < end ? ", which has already exited" : ", which does not exist (the block ends before it)") +
                             "; the emulation returned the reading thread's own value");
          }
          break;
        }
        case tile_op::any: f.wresult = any; break;
        case tile_op::all: f.wresult = every; break;
        case tile_op::fold: f.wresult = acc; break;
      }
      f.state = fstate::ready;
    }
    released = true;
    i = last;
  }
  return released;
}

bool release_block(worker_fibers& w, std::size_t n, std::size_t live) {
  std::size_t waiting = 0;
  int count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const fiber& f = w.fibers[i];
    if (f.state == fstate::at_block) {
      ++waiting;
      count += f.pred != 0;
    }
  }
  if (waiting != live) return false;
  for (std::size_t i = 0; i < n; ++i) {
    fiber& f = w.fibers[i];
    if (f.state != fstate::at_block) continue;
    f.result = f.mode == 0 ? count : (f.mode == 1 ? count == static_cast<int>(live) : count > 0);
    f.state = fstate::ready;
  }
  return true;
}

void report_stuck(const worker_fibers& w, std::size_t n) {
  std::size_t at_block = 0, at_warp = 0, at_tile = 0, exited = 0;
  const fiber* first_warp = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const fiber& f = w.fibers[i];
    if (f.state == fstate::at_block) ++at_block;
    if (f.state == fstate::exited) ++exited;
    if (f.state == fstate::at_tile) ++at_tile;
    if (f.state == fstate::at_warp) {
      ++at_warp;
      if (!first_warp) first_warp = &f;
    }
  }
  std::string msg = std::string("emulation: launch of kernel ") + w.desc->kernel_name +
                    ": threads stuck at barrier (block " + dim_string(tl_block_idx) + ": " +
                    std::to_string(at_block) + " of " + std::to_string(n) + " threads waiting at __syncthreads, ";
  if (at_warp) {
    char mask[16];
    std::snprintf(mask, sizeof mask, "0x%08x", first_warp->mask);
    msg += std::to_string(at_warp) + " waiting at warp operations (thread " + dim_string(first_warp->tid) +
           " at " + op_name(first_warp->op) + " with mask " + mask + "), ";
  }
  if (at_tile) msg += std::to_string(at_tile) + " waiting in collectives of tiles larger than a warp, ";
  msg += std::to_string(exited) + " exited)";
  record_fatal(cudaErrorLaunchFailure, msg, true);
}

[[noreturn]] void loop_path_violation(const char* what) {
  record_fatal(cudaErrorLaunchFailure,
               std::string("emulation: launch of kernel ") + (tl_desc ? tl_desc->kernel_name : "?") + ": " + what +
                   " reached on the plain-loop path (the source rewriter saw no barrier or warp operation in "
                   "this translation unit); the launch was aborted",
               true);
  throw launch_abort{};
}

fiber* current_fiber(const char* what) {
  if (tl_mode == exec_mode::fibers) return tl_w->current;
  if (tl_mode == exec_mode::loop) loop_path_violation(what);
  record_fatal(cudaErrorLaunchFailure, std::string("emulation: ") + what + " called outside of a kernel", true);
  return nullptr;
}

}  // namespace

bool run_block_fibers(const launch_desc& d) {
  worker_fibers& w = tl_worker;
  tl_w = &w;
  w.desc = &d;
  w.trapped = false;
  w.yielded = false;
  const unsigned bx = d.cfg.block.x, by = d.cfg.block.y;
  const std::size_t n = std::size_t(bx) * by * d.cfg.block.z;
  w.stacks.ensure(n, stack_bytes());
  ptx::reset_async_copies(n);
  if (w.fibers.size() < n) w.fibers.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    fiber& f = w.fibers[i];
    f = fiber{};
    f.ctx = bctx::make_fcontext(w.stacks.top(i), w.stacks.usable(i), &fiber_main);
    f.tid = uint3{static_cast<unsigned>(i % bx), static_cast<unsigned>((i / bx) % by),
                  static_cast<unsigned>(i / (std::size_t(bx) * by))};
    f.lane = static_cast<unsigned>(i % 32);
  }
  w.count = n;
  w.live = n;
  for (;;) {
    // One pass: the chain of ready fibers runs in order, each switching to the next.
    fiber* first = nullptr;
    for (std::size_t i = 0; i < n && !first; ++i)
      if (w.fibers[i].state == fstate::ready) first = &w.fibers[i];
    if (first) {
      w.current = first;
      tl_thread_idx = first->tid;
      save_jumper(bctx::jump_fcontext(first->ctx, &w.sched));
      if (w.trapped) return false;
      if (w.yielded) {  // a lane yielded at a volatile access: run the next round first
        w.yielded = false;
        continue;
      }
    }
    if (w.live == 0) return true;
    if (release_warps(w, n)) continue;
    if (release_tiles(w, n)) continue;
    if (release_block(w, n, w.live)) continue;
    if (release_converged(w, n)) continue;
    report_stuck(w, n);
    return false;
  }
}

int block_barrier(int predicate, int mode) {
  fiber* f = current_fiber("__syncthreads()");
  if (!f) return 0;
  f->state = fstate::at_block;
  f->volatile_write = false;
  f->pred = predicate;
  f->mode = mode;
  yield_to_scheduler(tl_w);
  return f->result;
}

std::uint64_t warp_collective(warp_op op, unsigned mask, std::uint64_t value, int src_lane, int predicate,
                              int* pred_out) {
  fiber* f = current_fiber(op == warp_op::sync ? "__syncwarp()" : "a warp shuffle/vote");
  if (!f) return value;
  f->state = fstate::at_warp;
  f->volatile_write = false;
  f->op = op;
  f->mask = mask;
  f->value = value;
  f->src = src_lane;
  f->pred = predicate;
  yield_to_scheduler(tl_w);
  if (pred_out) *pred_out = f->pred_out;
  return f->wresult;
}

std::uint64_t tile_collective(unsigned size, tile_op op, std::uint64_t value, unsigned arg, const void* fold_obj,
                              tile_fold_fn fold) {
  fiber* f = current_fiber("a collective of a thread_block_tile larger than 32");
  if (!f) return value;
  f->state = fstate::at_tile;
  f->volatile_write = false;
  f->tile = size;
  f->top = op;
  f->value = value;
  f->src = static_cast<int>(arg);
  f->fold_obj = fold_obj;
  f->fold = fold;
  yield_to_scheduler(tl_w);
  return f->wresult;
}

unsigned converged_lanes(unsigned site) {
  if (tl_mode != exec_mode::fibers) return live_lane_mask();
  return static_cast<unsigned>(warp_collective(warp_op::converge, 0xffffffffu, site, -1, 0, nullptr));
}

void lockstep_point(bool write) {
  if (tl_mode != exec_mode::fibers) return;
  worker_fibers* w = tl_w;
  fiber* f = w->current;
  const std::size_t self = static_cast<std::size_t>(f - w->fibers.data());
  const std::size_t base = self - self % 32;
  bool partner = false;  // another live lane in this warp
  for (std::size_t l = base; l < base + 32 && l < w->count && !partner; ++l)
    partner = l != self && w->fibers[l].state != fstate::exited;
  if (!partner) return;
  if (write) f->volatile_write = true;
  else if (f->volatile_write) record_implicit_warp_sync();
  w->yielded = true;
  yield_to_scheduler(w);  // stays ready: resumes in the next pass
}

unsigned lane_id() {
  if (tl_mode == exec_mode::fibers) return tl_w->current->lane;
  const dim3 b = tl_block_dim;
  const uint3 t = tl_thread_idx;
  return (t.x + t.y * b.x + t.z * b.x * b.y) % 32;
}

unsigned live_lane_mask() {
  const dim3 b = tl_block_dim;
  const std::size_t n = std::size_t(b.x) * b.y * b.z;
  if (tl_mode == exec_mode::fibers) {
    const std::size_t self = static_cast<std::size_t>(tl_w->current - tl_w->fibers.data());
    const std::size_t base = self - self % 32;
    unsigned m = 0;
    for (std::size_t l = 0; l < 32 && base + l < n; ++l)
      if (tl_w->fibers[base + l].state != fstate::exited) m |= 1u << l;
    return m;
  }
  const uint3 t = tl_thread_idx;
  const std::size_t self = t.x + t.y * b.x + t.z * std::size_t(b.x) * b.y;
  const std::size_t lanes = n - (self - self % 32);
  return lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u;
}

void device_trap(const char* what) {
  record_fatal(cudaErrorLaunchFailure,
               std::string("emulation: launch of kernel ") + (tl_desc ? tl_desc->kernel_name : "?") + ": " + what,
               true);
  if (tl_mode == exec_mode::fibers) {
    tl_w->trapped = true;
    tl_w->current->state = fstate::exited;
    for (;;) yield_to_scheduler(tl_w);  // switch_away goes straight to the scheduler when trapped
  }
  if (tl_mode == exec_mode::loop) throw launch_abort{};
  std::abort();
}

}  // namespace leap_emu::detail
