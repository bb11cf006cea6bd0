// Shim <cooperative_groups/reduce.h> of leap's CUDA-on-CPU emulation: cg::reduce over a
// thread_block_tile or coalesced_group with cg::plus/less/greater/bit_and/bit_or/bit_xor.
// Every thread of the group gets the result. Called from kernel code inside a launch.
#pragma once

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T>
struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T>
struct less { T operator()(const T& a, const T& b) const { return b < a ? b : a; } };  // the minimum
template <class T>
struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };  // the maximum
template <class T>
struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T>
struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T>
struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

// Tree reduction towards rank 0 with shfl_down (only partners inside the group are combined),
// then a broadcast from rank 0; over a tile larger than a warp, a fold in rank order.
template <class Group, class T, class Op>
T reduce(const Group& g, T value, Op op) {
  if constexpr (details::is_multi_warp<Group>::value) {
    return details::tile_fold<Group::size()>(value, op);
  } else {
    const unsigned n = g.size(), rank = g.thread_rank();
    unsigned step = 1;
    while (step < n) step <<= 1;
    for (step >>= 1; step > 0; step >>= 1) {
      T other = g.shfl_down(value, step);
      if (rank + step < n) value = op(value, other);
    }
    return g.shfl(value, 0);
  }
}

}  // namespace cooperative_groups
