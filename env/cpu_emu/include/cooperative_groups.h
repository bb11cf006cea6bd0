// Shim <cooperative_groups.h> of leap's CUDA-on-CPU emulation: block- and warp-level
// cooperative groups on top of the emulation's barriers and warp collectives (leap_emu/sync.h).
// thread_block (with or without block_tile_memory), thread_block_tile<N> from tiled_partition<N>
// (N = 1..32, a power of two: warp collectives on the tile's lanes; N = 64..1024: tiles of
// several warps with sync, shfl, any, all and cg::reduce, run as a barrier of the tile's threads),
// coalesced_threads(), the generic thread_group, cg::sync, and (with
// <cooperative_groups/reduce.h>, scan.h and memcpy_async.h, included here too) reduce,
// inclusive_scan/exclusive_scan and memcpy_async/wait/wait_prior. Grid-wide groups (this_grid,
// grid.sync) are not supported; the rewriter rejects them by name. Called from kernel code
// running inside a launch (a worker thread).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda_runtime.h"

namespace cooperative_groups {
namespace details {

inline unsigned linear_tid() {
  return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
}
inline unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
inline unsigned lane() { return linear_tid() & 31u; }
constexpr unsigned low_bits(unsigned n) { return n >= 32 ? 0xffffffffu : (1u << n) - 1u; }
// Lanes of the n-lane tile that holds this lane, as a warp mask.
inline unsigned tile_mask(unsigned n) { return low_bits(n) << (lane() & ~(n - 1u) & 31u); }
// Compresses the bits of `v` selected by `mask` into the low bits (rank order).
inline unsigned compact(unsigned v, unsigned mask) {
  unsigned out = 0, bit = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (mask >> l & 1u) out |= (v >> l & 1u) << bit++;
  return out;
}
// Lane of the `rank`-th set bit of `mask` (32 when there is none).
inline int lane_of_rank(unsigned mask, unsigned rank) {
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l & 1u) && rank-- == 0) return static_cast<int>(l);
  return 32;
}

}  // namespace details

class thread_group;

class thread_block {
 public:
  static void sync() { __syncthreads(); }
  static unsigned thread_rank() { return details::linear_tid(); }
  static unsigned size() { return details::block_threads(); }
  static unsigned num_threads() { return details::block_threads(); }
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }
  // Split barrier: arrive does nothing, wait is the whole barrier (the same ordering).
  struct arrival_token {};
  arrival_token barrier_arrive() const { return {}; }
  void barrier_wait(arrival_token&&) const { __syncthreads(); }
  operator thread_group() const;
};

inline thread_block this_thread_block() { return thread_block(); }

// The scratch memory CUDA's tiles larger than a warp use on GPUs without reserved shared memory;
// the emulation needs none (declared __shared__ by the kernel, as on a GPU).
template <unsigned MaxBlockSize = 1024>
struct alignas(16) block_tile_memory {
  unsigned char reserved[16];
};
template <unsigned MaxBlockSize>
thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) {
  return thread_block();
}

// A tile of N consecutive threads of the block (N <= 32, a power of two): warp collectives
// restricted to the tile's lanes. Parent = the group it was partitioned from.
template <unsigned N, class Parent = void>
class thread_block_tile;

namespace details {

// What every tile of N threads has, whatever its size: its rank among the block's tiles of N,
// their number, and this thread's rank in it.
template <unsigned N>
class tile_meta {
 public:
  tile_meta() : meta_rank_(linear_tid() / N), meta_size_((block_threads() + N - 1) / N) {}
  tile_meta(unsigned meta_rank, unsigned meta_size) : meta_rank_(meta_rank), meta_size_(meta_size) {}
  static unsigned thread_rank() { return linear_tid() & (N - 1u); }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }

 private:
  unsigned meta_rank_, meta_size_;
};

template <unsigned N, bool MultiWarp = (N > 32)>
class tile_base;

// A tile of N <= 32 threads: the lanes of part of a warp.
template <unsigned N>
class tile_base<N, false> : public tile_meta<N> {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "thread_block_tile size must be a power of two");

 public:
  using tile_meta<N>::tile_meta;
  static constexpr bool multi_warp = false;

  static unsigned mask() { return details::tile_mask(N); }
  static void sync() { __syncwarp(mask()); }
  template <class T>
  static T shfl(T v, int src_rank) { return __shfl_sync(mask(), v, src_rank, static_cast<int>(N)); }
  template <class T>
  static T shfl_down(T v, unsigned delta) { return __shfl_down_sync(mask(), v, delta, static_cast<int>(N)); }
  template <class T>
  static T shfl_up(T v, unsigned delta) { return __shfl_up_sync(mask(), v, delta, static_cast<int>(N)); }
  template <class T>
  static T shfl_xor(T v, unsigned lane_mask) {
    return __shfl_xor_sync(mask(), v, static_cast<int>(lane_mask), static_cast<int>(N));
  }
  static int any(int p) { return __any_sync(mask(), p); }
  static int all(int p) { return __all_sync(mask(), p); }
  static unsigned ballot(int p) { return (__ballot_sync(mask(), p) >> base()) & details::low_bits(N); }
  template <class T>
  static unsigned match_any(T v) { return (__match_any_sync(mask(), v) >> base()) & details::low_bits(N); }
  template <class T>
  static unsigned match_all(T v, int& pred) {
    return (__match_all_sync(mask(), v, &pred) >> base()) & details::low_bits(N);
  }

 private:
  static unsigned base() { return details::lane() & ~(N - 1u) & 31u; }
};

// A tile of N = 64..1024 threads (whole warps): its collectives wait for all of the tile's
// threads (leap_emu::detail::tile_collective). As in CUDA: sync, ranks, shfl, any, all (values
// of at most 8 bytes); no shfl_up/down/xor, ballot or match.
template <unsigned N>
class tile_base<N, true> : public tile_meta<N> {
  static_assert(N <= 1024 && (N & (N - 1)) == 0, "thread_block_tile size must be a power of two up to 1024");
  using op = ::leap_emu::detail::tile_op;

 public:
  using tile_meta<N>::tile_meta;
  static constexpr bool multi_warp = true;

  static void sync() { ::leap_emu::detail::tile_collective(N, op::sync, 0, 0); }
  template <class T>
  static T shfl(T v, unsigned src_rank) {
    using namespace ::leap_emu::detail;
    return from_bits<T>(tile_collective(N, op::shfl, to_bits(v), src_rank));
  }
  static int any(int p) { return ::leap_emu::detail::tile_collective(N, op::any, p != 0, 0) != 0; }
  static int all(int p) { return ::leap_emu::detail::tile_collective(N, op::all, p != 0, 0) != 0; }
};

// cg::reduce over a tile larger than a warp: the values folded in rank order.
template <unsigned N, class T, class Op>
T tile_fold(T value, const Op& op) {
  using namespace ::leap_emu::detail;
  auto fold = [](const void* o, std::uint64_t acc, std::uint64_t v) -> std::uint64_t {
    return to_bits<T>((*static_cast<const Op*>(o))(from_bits<T>(acc), from_bits<T>(v)));
  };
  return from_bits<T>(tile_collective(N, tile_op::fold, to_bits(value), 0, &op, fold));
}

template <class G, class = void>
struct is_multi_warp : std::false_type {};
template <class G>
struct is_multi_warp<G, std::void_t<decltype(G::multi_warp)>> : std::bool_constant<G::multi_warp> {};

}  // namespace details

template <unsigned N>
class thread_block_tile<N, void> : public details::tile_base<N> {
 public:
  using details::tile_base<N>::tile_base;
  thread_block_tile() = default;
  operator thread_group() const;
};

template <unsigned N, class Parent>
class thread_block_tile : public thread_block_tile<N, void> {
 public:
  using thread_block_tile<N, void>::thread_block_tile;
};

template <unsigned N>
thread_block_tile<N, thread_block> tiled_partition(const thread_block&) {
  return thread_block_tile<N, thread_block>();
}
template <unsigned N, unsigned M, class P>
thread_block_tile<N, thread_block_tile<M, P>> tiled_partition(const thread_block_tile<M, P>&) {
  static_assert(N <= M, "tiled_partition: the tile must not be larger than its parent");
  return thread_block_tile<N, thread_block_tile<M, P>>((details::linear_tid() % M) / N, M / N);
}

// The lanes of a warp that called coalesced_threads() together (same call site).
class coalesced_group {
 public:
  explicit coalesced_group(unsigned mask) : mask_(mask) {}
  unsigned mask() const { return mask_; }
  void sync() const { __syncwarp(mask_); }
  unsigned thread_rank() const { return __builtin_popcount(mask_ & details::low_bits(details::lane())); }
  unsigned size() const { return __builtin_popcount(mask_); }
  unsigned num_threads() const { return size(); }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  template <class T>
  T shfl(T v, unsigned src_rank) const {
    return __shfl_sync(mask_, v, details::lane_of_rank(mask_, src_rank % size()));
  }
  template <class T>
  T shfl_down(T v, unsigned delta) const {
    const unsigned r = thread_rank() + delta;
    return __shfl_sync(mask_, v, r < size() ? details::lane_of_rank(mask_, r) : static_cast<int>(details::lane()));
  }
  template <class T>
  T shfl_up(T v, unsigned delta) const {
    const unsigned r = thread_rank();
    return __shfl_sync(mask_, v, r >= delta ? details::lane_of_rank(mask_, r - delta) : static_cast<int>(details::lane()));
  }
  int any(int p) const { return __any_sync(mask_, p); }
  int all(int p) const { return __all_sync(mask_, p); }
  unsigned ballot(int p) const { return details::compact(__ballot_sync(mask_, p), mask_); }
  operator thread_group() const;

 private:
  unsigned mask_;
};

inline coalesced_group coalesced_threads(unsigned site = __builtin_LINE()) {
  return coalesced_group(::leap_emu::detail::converged_lanes(site));
}

// Any of the groups above, by value (sync, thread_rank, size).
class thread_group {
 public:
  enum class kind { block, tile, coalesced };
  thread_group(kind k, unsigned tile_size, unsigned mask) : k_(k), n_(tile_size), mask_(mask) {}
  void sync() const {
    if (k_ == kind::block) __syncthreads();
    else if (k_ == kind::tile && n_ > 32) ::leap_emu::detail::tile_collective(n_, ::leap_emu::detail::tile_op::sync, 0, 0);
    else __syncwarp(mask_);
  }
  unsigned thread_rank() const {
    if (k_ == kind::block) return details::linear_tid();
    if (k_ == kind::tile) return details::linear_tid() % n_;
    return __builtin_popcount(mask_ & details::low_bits(details::lane()));
  }
  unsigned size() const {
    if (k_ == kind::block) return details::block_threads();
    if (k_ == kind::tile) return n_;
    return __builtin_popcount(mask_);
  }
  unsigned num_threads() const { return size(); }

 private:
  kind k_;
  unsigned n_;
  unsigned mask_;
};

inline thread_block::operator thread_group() const { return thread_group(thread_group::kind::block, 0, 0); }
template <unsigned N>
thread_block_tile<N, void>::operator thread_group() const {
  if constexpr (N > 32) return thread_group(thread_group::kind::tile, N, 0);
  else return thread_group(thread_group::kind::tile, N, this->mask());
}
inline coalesced_group::operator thread_group() const {
  return thread_group(thread_group::kind::coalesced, 0, mask_);
}

// Dynamic partition of a block into tiles of `n` threads (n <= 32, a power of two).
inline thread_group tiled_partition(const thread_group& parent, unsigned n) {
  if (n == 0 || n > 32 || (n & (n - 1)) != 0)
    ::leap_emu::detail::device_trap("tiled_partition(group, n): the emulation supports n = 1..32, powers of two");
  (void)parent;
  return thread_group(thread_group::kind::tile, n, details::tile_mask(n));
}

template <class Group>
inline void sync(const Group& g) {
  g.sync();
}

}  // namespace cooperative_groups

#include "cooperative_groups/memcpy_async.h"
#include "cooperative_groups/reduce.h"
#include "cooperative_groups/scan.h"
