// queue_order: where a job goes in a pool's queue. Lower priority values go first; jobs of equal
// priority keep their arrival order. A retry is put in front by its pool (push_front); a later
// job goes behind it unless it has a lower priority value than the retry. Used by the
// supervised pools (actors/supervised_pool.hpp) and the cluster dispatcher (actors/cluster.cpp),
// each from its own actor: plain functions on a container the caller owns, no locking.
#pragma once

#include <cstdint>
#include <iterator>
#include <utility>

namespace leap::actors {

// Inserts `v` after the last element whose priority is <= priority_of(v), scanning from the
// back, so an append (the common case: priorities arrive in order) costs O(1).
template <class Queue, class PriorityOf>
void insert_by_priority(Queue& q, typename Queue::value_type v, PriorityOf priority_of) {
  const std::uint64_t p = priority_of(v);
  auto it = q.end();
  while (it != q.begin() && priority_of(*std::prev(it)) > p)
    --it;
  q.insert(it, std::move(v));
}

} // namespace leap::actors
