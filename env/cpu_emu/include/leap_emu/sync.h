// Device-side synchronisation of the emulation: __syncthreads (and _count/_and/_or), warp
// barriers, shuffles, votes, warp reductions/matches, fences. Callable only from kernel code
// running inside a launch (a worker thread); each call suspends the calling fiber until its
// block/warp partners arrive. On the plain-loop path they abort the launch with a fatal error.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace leap_emu::detail {

enum class warp_op : int {
  sync, shfl, ballot, reduce_add, reduce_min_s, reduce_max_s, reduce_min_u, reduce_max_u,
  reduce_and, reduce_or, reduce_xor, match_any, match_all,
  converge  // coalesced_threads(): value = call site; released last, with the lanes at that site
};

// Block barrier. mode 0: returns how many threads had a non-zero predicate; 1: whether all
// arrived (non-exited) threads had one; 2: whether any had one.
int block_barrier(int predicate, int mode);
// Warp collective: suspends until all live lanes of `mask` arrived, then returns this lane's
// result (shuffle: value of lane `src_lane`, or own value if src_lane < 0; ballot: mask bits).
std::uint64_t warp_collective(warp_op op, unsigned mask, std::uint64_t value, int src_lane,
                              int predicate, int* pred_out);
unsigned live_lane_mask();
// Collective of the `size` threads (a power of two, 64..1024) of the block's tile that holds
// this thread (linear thread indices base..base+size-1, base a multiple of size): suspends until
// every non-exited thread of the tile arrived, then returns this thread's result. sync: 0;
// shfl: the value of tile rank `arg`; any/all: whether any/every arrived thread's value is
// non-zero; fold: fn(obj, ...) applied to the values in rank order (the same for every thread).
enum class tile_op : int { sync, shfl, any, all, fold };
using tile_fold_fn = std::uint64_t (*)(const void* obj, std::uint64_t acc, std::uint64_t value);
std::uint64_t tile_collective(unsigned size, tile_op op, std::uint64_t value, unsigned arg,
                              const void* fold_obj = nullptr, tile_fold_fn fold = nullptr);
// The lanes of this warp that reach call site `site` together (cooperative_groups'
// coalesced_threads): waits until no lane of the block can run, then groups the lanes of the
// warp waiting at the same site (the lowest-numbered site first, so lanes past a branch wait for
// the lanes still in it).
unsigned converged_lanes(unsigned site);
// A volatile memory access is about to happen: on the fiber path the lane yields so that the
// warp's lanes take turns access by access, as in the lockstep of pre-Volta GPUs (legacy
// warp-synchronous code reads what the other lanes wrote one statement earlier). A read after
// a write of the same lane with no warp or block synchronisation in between marks the run as
// relying on implicit warp synchronisation (leap_emu_implicit_warp_sync).
void lockstep_point(bool write);
unsigned lane_id();
[[noreturn]] void device_trap(const char* what);

template <class T>
inline std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp shuffle of a type larger than 8 bytes");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
inline int shfl_src(int lane, int src, int width) {
  // src: absolute requested lane inside the width segment, or -1 when out of segment.
  int base = lane & ~(width - 1);
  return (src < base || src >= base + width) ? -1 : src;
}

}  // namespace leap_emu::detail

#define LEAP_EMU_COMPILER_FENCE() __asm__ __volatile__("" ::: "memory")

inline void __syncthreads() {
  LEAP_EMU_COMPILER_FENCE();
  ::leap_emu::detail::block_barrier(0, 0);
  LEAP_EMU_COMPILER_FENCE();
}
inline int __syncthreads_count(int p) {
  LEAP_EMU_COMPILER_FENCE();
  int r = ::leap_emu::detail::block_barrier(p != 0, 0);
  LEAP_EMU_COMPILER_FENCE();
  return r;
}
inline int __syncthreads_and(int p) {
  LEAP_EMU_COMPILER_FENCE();
  int r = ::leap_emu::detail::block_barrier(p != 0, 1);
  LEAP_EMU_COMPILER_FENCE();
  return r;
}
inline int __syncthreads_or(int p) {
  LEAP_EMU_COMPILER_FENCE();
  int r = ::leap_emu::detail::block_barrier(p != 0, 2);
  LEAP_EMU_COMPILER_FENCE();
  return r;
}

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  LEAP_EMU_COMPILER_FENCE();
  ::leap_emu::detail::warp_collective(::leap_emu::detail::warp_op::sync, mask, 0, -1, 0, nullptr);
  LEAP_EMU_COMPILER_FENCE();
}

template <class T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  using namespace ::leap_emu::detail;
  int lane = static_cast<int>(lane_id());
  int src = (lane & ~(width - 1)) + (src_lane & (width - 1));
  return from_bits<T>(warp_collective(warp_op::shfl, mask, to_bits(var), src, 0, nullptr));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  using namespace ::leap_emu::detail;
  int lane = static_cast<int>(lane_id());
  int src = shfl_src(lane, lane - static_cast<int>(delta), width);
  return from_bits<T>(warp_collective(warp_op::shfl, mask, to_bits(var), src, 0, nullptr));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  using namespace ::leap_emu::detail;
  int lane = static_cast<int>(lane_id());
  int src = shfl_src(lane, lane + static_cast<int>(delta), width);
  return from_bits<T>(warp_collective(warp_op::shfl, mask, to_bits(var), src, 0, nullptr));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  using namespace ::leap_emu::detail;
  int lane = static_cast<int>(lane_id());
  int src = shfl_src(lane, lane ^ lane_mask, width);
  return from_bits<T>(warp_collective(warp_op::shfl, mask, to_bits(var), src, 0, nullptr));
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  using namespace ::leap_emu::detail;
  return static_cast<unsigned>(warp_collective(warp_op::ballot, mask, 0, -1, predicate != 0, nullptr));
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  using namespace ::leap_emu::detail;
  int all = 0;
  warp_collective(warp_op::ballot, mask, 0, -1, predicate != 0, &all);
  return all;
}
// The lanes that execute this call together: on the fiber path those of the warp that reach
// the same source line (as coalesced_threads), so a mask taken inside a branch holds only the
// lanes that took it; elsewhere the warp's live lanes.
inline unsigned __activemask(unsigned site = __builtin_LINE()) { return ::leap_emu::detail::converged_lanes(site); }

#define LEAP_EMU_WARP_REDUCE(NAME, T, OP)                                                     \
  inline T NAME(unsigned mask, T value) {                                                     \
    using namespace ::leap_emu::detail;                                                       \
    return static_cast<T>(warp_collective(warp_op::OP, mask,                                  \
                                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(value)), -1, 0, nullptr)); \
  }
LEAP_EMU_WARP_REDUCE(__reduce_add_sync, unsigned, reduce_add)
LEAP_EMU_WARP_REDUCE(__reduce_add_sync, int, reduce_add)
LEAP_EMU_WARP_REDUCE(__reduce_min_sync, unsigned, reduce_min_u)
LEAP_EMU_WARP_REDUCE(__reduce_min_sync, int, reduce_min_s)
LEAP_EMU_WARP_REDUCE(__reduce_max_sync, unsigned, reduce_max_u)
LEAP_EMU_WARP_REDUCE(__reduce_max_sync, int, reduce_max_s)
LEAP_EMU_WARP_REDUCE(__reduce_and_sync, unsigned, reduce_and)
LEAP_EMU_WARP_REDUCE(__reduce_or_sync, unsigned, reduce_or)
LEAP_EMU_WARP_REDUCE(__reduce_xor_sync, unsigned, reduce_xor)
#undef LEAP_EMU_WARP_REDUCE

template <class T>
inline unsigned __match_any_sync(unsigned mask, T value) {
  using namespace ::leap_emu::detail;
  return static_cast<unsigned>(warp_collective(warp_op::match_any, mask, to_bits(value), -1, 0, nullptr));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  using namespace ::leap_emu::detail;
  return static_cast<unsigned>(warp_collective(warp_op::match_all, mask, to_bits(value), -1, 0, pred));
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __trap() { ::leap_emu::detail::device_trap("__trap() called"); }
inline void __brkpt() { ::leap_emu::detail::device_trap("__brkpt() called"); }
inline void __nanosleep(unsigned) {}
