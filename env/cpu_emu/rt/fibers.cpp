// Fiber execution of one block: each CUDA thread is a Boost.Context fcontext fiber on a stack
// carved from one mmap region (guard page below each). The worker's scheduler runs every ready
// fiber until it exits or waits at a barrier, then releases complete block/warp barriers;
// when nothing can be released the block is stuck and the launch fails (no hang).
// Also the device-side entry points of __syncthreads and the warp collectives. Everything here
// runs on one worker OS thread; fibers never migrate between threads.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fiber_state.h"
#include "leap_emu/ptx.h"

namespace leap_emu::detail {

__thread worker_fibers* tl_w = nullptr;

namespace {

thread_local worker_fibers tl_worker;

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
