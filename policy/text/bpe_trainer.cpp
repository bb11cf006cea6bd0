// BPE training with incremental pair counts: each merge touches only the words that hold the
// merged pair (found through a pair -> words index) and re-queues only the pairs whose counts
// changed; a lazy max-heap skips stale entries.
#include "policy/text/bpe_trainer.hpp"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <string_view>
#include <unordered_map>

namespace leap::policy {
namespace {

std::uint64_t key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32)
         | static_cast<std::uint32_t>(b);
}
int key_a(std::uint64_t k) { return static_cast<int>(k >> 32); }
int key_b(std::uint64_t k) { return static_cast<int>(k & 0xFFFFFFFFu); }

struct entry {
  std::int64_t count;
  int a, b;
  // Max-heap order: higher count first, then lower (a, b).
  bool operator<(const entry& o) const {
    if (count != o.count) return count < o.count;
    if (a != o.a) return a > o.a;
    return b > o.b;
  }
};

// Calls f(piece) for the text between occurrences of the special tokens.
template <class F>
void for_each_plain(std::string_view text, const std::vector<std::string>& specials, F&& f) {
  std::vector<std::size_t> next(specials.size());
  for (std::size_t k = 0; k < specials.size(); ++k)
    next[k] = specials[k].empty() ? std::string_view::npos : text.find(specials[k]);
  std::size_t pos = 0;
  for (;;) {
    std::size_t best = std::string_view::npos, len = 0;
    for (std::size_t k = 0; k < specials.size(); ++k) {
      if (next[k] != std::string_view::npos && next[k] < pos) next[k] = text.find(specials[k], pos);
      if (next[k] < best || (next[k] == best && next[k] != std::string_view::npos
                             && specials[k].size() > len)) {
        best = next[k];
        len = specials[k].size();
      }
    }
    if (best == std::string_view::npos) break;
    f(text.substr(pos, best - pos));
    pos = best + len;
  }
  f(text.substr(pos));
}

} // namespace

result<std::vector<byte_merge>> bpe_trainer::train_merges(const std::vector<std::string>& corpus) const {
  const int fixed = 256 + static_cast<int>(opt_.special_tokens.size());
  if (opt_.vocab_size < fixed)
    return make_error("bpe_trainer: vocab_size " + std::to_string(opt_.vocab_size)
                      + " is below 256 bytes + " + std::to_string(opt_.special_tokens.size())
                      + " special tokens");
  if (opt_.min_frequency < 1) return make_error("bpe_trainer: min_frequency must be >= 1");
  const int target_new = opt_.vocab_size - fixed;

  // 1. Word frequencies (views into the corpus), in a fixed order.
  std::unordered_map<std::string_view, std::int64_t> counts;
  std::vector<std::string_view> pieces;
  for (const auto& text : corpus)
    for_each_plain(text, opt_.special_tokens, [&](std::string_view plain) {
      pieces.clear();
      split_words(plain, opt_.pattern, pieces);
      for (auto w : pieces)
        if (w.size() > 1) ++counts[w];
    });
  std::vector<std::pair<std::string_view, std::int64_t>> uniq(counts.begin(), counts.end());
  counts = {};
  std::sort(uniq.begin(), uniq.end());
  std::vector<std::vector<int>> words(uniq.size());
  std::vector<std::int64_t> freq(uniq.size());
  for (std::size_t w = 0; w < uniq.size(); ++w) {
    freq[w] = uniq[w].second;
    for (unsigned char c : uniq[w].first) words[w].push_back(c);
  }

  // 2. Pair counts and the pair -> words index.
  std::unordered_map<std::uint64_t, std::int64_t> pair_count;
  std::unordered_map<std::uint64_t, std::vector<int>> where;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (std::size_t i = 0; i + 1 < words[w].size(); ++i) {
      auto k = key(words[w][i], words[w][i + 1]);
      pair_count[k] += freq[w];
      auto& lst = where[k];
      if (lst.empty() || lst.back() != static_cast<int>(w)) lst.push_back(static_cast<int>(w));
    }
  std::priority_queue<entry> heap;
  for (const auto& [k, c] : pair_count) heap.push({c, key_a(k), key_b(k)});

  std::vector<std::string> tok(256);
  std::unordered_map<std::string, int> tok_id;
  for (int b = 0; b < 256; ++b) {
    tok[b] = std::string(1, static_cast<char>(b));
    tok_id.emplace(tok[b], b);
  }

  // 3. Merge loop.
  std::vector<byte_merge> merges;
  std::vector<int> stamp(words.size(), -1);
  std::unordered_map<std::uint64_t, std::int64_t> delta;
  std::vector<int> merged;
  int made = 0;
  for (int step = 0; made < target_new && !heap.empty(); ++step) {
    entry top = heap.top();
    heap.pop();
    const auto k = key(top.a, top.b);
    auto pc = pair_count.find(k);
    if (pc == pair_count.end() || pc->second != top.count) continue; // stale
    if (top.count < opt_.min_frequency) break;
    const int a = top.a, b = top.b;
    std::string bytes = tok[a] + tok[b];
    auto [it, fresh] = tok_id.emplace(bytes, static_cast<int>(tok.size()));
    if (fresh) {
      tok.push_back(bytes);
      ++made;
    }
    const int c = it->second;
    merges.emplace_back(tok[a], tok[b]);

    delta.clear();
    std::vector<int> affected = std::move(where[k]);
    where.erase(k);
    for (int w : affected) {
      if (stamp[w] == step) continue;
      stamp[w] = step;
      auto& s = words[w];
      merged.clear();
      bool hit = false;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          merged.push_back(c);
          ++i;
          hit = true;
        } else {
          merged.push_back(s[i]);
        }
      }
      if (!hit) continue;
      const std::int64_t f = freq[w];
      for (std::size_t i = 0; i + 1 < s.size(); ++i) delta[key(s[i], s[i + 1])] -= f;
      for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
        auto nk = key(merged[i], merged[i + 1]);
        delta[nk] += f;
        if (merged[i] == c || merged[i + 1] == c) {
          auto& lst = where[nk];
          if (lst.empty() || lst.back() != w) lst.push_back(w);
        }
      }
      s.swap(merged);
    }
    for (const auto& [dk, d] : delta) {
      if (d == 0) continue;
      auto& cnt = pair_count[dk];
      cnt += d;
      if (cnt <= 0) {
        pair_count.erase(dk);
      } else {
        heap.push({cnt, key_a(dk), key_b(dk)});
      }
    }
  }
  return merges;
}

result<tokenizer> bpe_trainer::train(const std::vector<std::string>& corpus) const {
  auto merges = train_merges(corpus);
  if (!merges) return merges.err();
  return tokenizer::from_merges(*merges, opt_.special_tokens, opt_.pattern);
}

} // namespace leap::policy
