// The BPE merge step on one pre-tokenized word: a rank table of merges and the loop that applies
// them (lowest rank first, leftmost on ties, exactly as Hugging Face tokenizers does). Used by the
// tokenizer; the trainer builds its table. A merge_table is immutable after construction, so
// concurrent bpe_merge calls on one table are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace leap::policy {

struct merge_info {
  int rank;   // position in the merge list: lower merges first
  int result; // id of the merged token
};

class merge_table {
public:
  void reserve(std::size_t n) { map_.reserve(n); }
  // Adds (a, b) -> result at `rank`; false (and no change) if the pair is already present.
  bool add(int a, int b, int rank, int result) {
    return map_.emplace(key(a, b), merge_info{rank, result}).second;
  }
  const merge_info* find(int a, int b) const {
    auto it = map_.find(key(a, b));
    return it == map_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return map_.size(); }

private:
  static std::uint64_t key(int a, int b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32)
           | static_cast<std::uint32_t>(b);
  }
  std::unordered_map<std::uint64_t, merge_info> map_;
};

// Merges `symbols` (token ids, initially one per byte) in place. Picks the quadratic scan for
// short words and the heap-based loop for long ones; both give identical results.
void bpe_merge(const merge_table& t, std::vector<int>& symbols);
void bpe_merge_scan(const merge_table& t, std::vector<int>& symbols);
void bpe_merge_heap(const merge_table& t, std::vector<int>& symbols);

} // namespace leap::policy
