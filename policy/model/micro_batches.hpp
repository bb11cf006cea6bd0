// How a GRPO mini batch is cut into micro batches (one forward/backward each): at most
// `max_sequences` sequences, and at most a memory budget for the attention matrices the pass
// holds at its peak. Header-only and torch-free; policy/policy_rl.cpp calls it on the learner's
// thread, tests call it anywhere (a pure function of its arguments).
//
// Why a budget: a training forward keeps each layer's attention probabilities [B, H, T, T]
// (float) for the backward, and the backward of the last layer briefly holds two more of that
// size, so a micro batch's peak grows with B * T^2. A fixed count of 8 sequences let that peak
// follow the longest sequences the run had seen so far: the 30-minute soak's tiny policy
// (1 layer, 2 heads, T up to ~1600) reached 474 MiB of live heap in one step (heaptrack), and the
// process's resident memory climbed in ~120 MiB steps each time a longer batch set a new high
// (glibc keeps freed heap: common/allocator.hpp). With the budget the peak is bounded whatever
// the lengths, and micro batches of the longest sequences fill it early in a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace leap::policy {

// Attention bytes a training pass may hold at its peak: 256 MiB. One sequence always forms a
// micro batch of its own, even when it alone exceeds the budget (it cannot be split).
inline constexpr std::int64_t micro_batch_attention_budget = std::int64_t{256} << 20;

// Bytes of attention held per (sequence, query, key) position: one float per head for every
// layer's saved probabilities plus two transient copies in the backward.
inline std::int64_t attention_bytes_per_position(std::int64_t n_layers, std::int64_t n_heads) {
  return (n_layers + 2) * n_heads * static_cast<std::int64_t>(sizeof(float));
}

// A micro batch: sequences [first, last) of the sorted mini batch.
struct micro_batch_span {
  std::size_t first = 0, last = 0;
};

// Cuts sequences of `lengths` (tokens, longest first, as the learner sorts them) into
// consecutive micro batches, greedily: each takes the next sequence, then more while it holds
// fewer than `max_sequences` (at least 1) and B * T_first^2 * bytes_per_position stays within
// `budget` (T_first, the first and longest, is what the batch is padded to).
inline std::vector<micro_batch_span> plan_micro_batches(const std::vector<std::int64_t>& lengths,
                                                        std::size_t max_sequences,
                                                        std::int64_t bytes_per_position,
                                                        std::int64_t budget) {
  std::vector<micro_batch_span> out;
  const std::size_t cap = max_sequences > 0 ? max_sequences : 1;
  std::size_t first = 0;
  while (first < lengths.size()) {
    const std::int64_t t = lengths[first];
    // Computed in long double: T^2 * bytes can pass 2^63 only for absurd lengths, but must not wrap.
    const long double per_sequence = static_cast<long double>(t) * static_cast<long double>(t)
                                     * static_cast<long double>(bytes_per_position);
    std::size_t last = first + 1;
    while (last < lengths.size() && last - first < cap
           && static_cast<long double>(last - first + 1) * per_sequence
                <= static_cast<long double>(budget))
      ++last;
    out.push_back({first, last});
    first = last;
  }
  return out;
}

} // namespace leap::policy
