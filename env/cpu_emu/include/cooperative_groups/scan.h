// Shim <cooperative_groups/scan.h> of leap's CUDA-on-CPU emulation: cg::inclusive_scan and
// cg::exclusive_scan over a thread_block_tile or coalesced_group (default op: plus). Called
// from kernel code inside a launch.
#pragma once

#include "../cooperative_groups.h"
#include "reduce.h"

namespace cooperative_groups {

template <class Group, class T, class Op = plus<T>>
T inclusive_scan(const Group& g, T value, Op op = Op()) {
  static_assert(!details::is_multi_warp<Group>::value,
                "leap CPU emulation: scans over tiles larger than 32 threads are not supported");
  const unsigned n = g.size(), rank = g.thread_rank();
  for (unsigned step = 1; step < n; step <<= 1) {
    T other = g.shfl_up(value, step);
    if (rank >= step) value = op(other, value);
  }
  return value;
}

// Rank 0 gets T() (CUDA leaves it unspecified for operators other than plus).
template <class Group, class T, class Op = plus<T>>
T exclusive_scan(const Group& g, T value, Op op = Op()) {
  T inc = inclusive_scan(g, value, op);
  T prev = g.shfl_up(inc, 1);
  return g.thread_rank() == 0 ? T() : prev;
}

}  // namespace cooperative_groups
