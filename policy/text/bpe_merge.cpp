// Two implementations of the same merge order: lowest (rank, position) first.
#include "policy/text/bpe_merge.hpp"

#include <climits>
#include <queue>

namespace leap::policy {

void bpe_merge(const merge_table& t, std::vector<int>& symbols) {
  if (symbols.size() <= 48)
    bpe_merge_scan(t, symbols);
  else
    bpe_merge_heap(t, symbols);
}

void bpe_merge_scan(const merge_table& t, std::vector<int>& s) {
  if (s.size() < 2) return;
  // rank[i], result[i]: the merge of (s[i], s[i+1]), INT_MAX if none.
  thread_local std::vector<int> rank, res;
  rank.resize(s.size() - 1);
  res.resize(s.size() - 1);
  auto look = [&](std::size_t i) {
    const merge_info* m = t.find(s[i], s[i + 1]);
    rank[i] = m ? m->rank : INT_MAX;
    res[i] = m ? m->result : -1;
  };
  for (std::size_t i = 0; i + 1 < s.size(); ++i) look(i);
  while (s.size() >= 2) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < rank.size(); ++i)
      if (rank[i] < rank[best]) best = i;
    if (rank[best] == INT_MAX) break;
    s[best] = res[best];
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(best));
    res.erase(res.begin() + static_cast<std::ptrdiff_t>(best));
    if (best > 0) look(best - 1);
    if (best < rank.size()) look(best);
  }
}

void bpe_merge_heap(const merge_table& t, std::vector<int>& s) {
  const int n = static_cast<int>(s.size());
  if (n < 2) return;
  struct node {
    int id, prev, next;
    bool alive;
  };
  std::vector<node> nodes(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) nodes[i] = {s[i], i - 1, i + 1 < n ? i + 1 : -1, true};
  struct cand {
    int rank, pos, result, right;
    bool operator>(const cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<cand, std::vector<cand>, std::greater<cand>> heap;
  auto push = [&](int i) {
    int j = nodes[i].next;
    if (j < 0) return;
    if (const merge_info* m = t.find(nodes[i].id, nodes[j].id))
      heap.push({m->rank, i, m->result, j});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    cand c = heap.top();
    heap.pop();
    node& l = nodes[c.pos];
    // Stale when either side was merged away or changed since the candidate was pushed.
    if (!l.alive || l.next != c.right || !nodes[c.right].alive) continue;
    const merge_info* m = t.find(l.id, nodes[c.right].id);
    if (!m || m->rank != c.rank || m->result != c.result) continue;
    node& r = nodes[c.right];
    l.id = c.result;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) nodes[r.next].prev = c.pos;
    if (l.prev >= 0) push(l.prev);
    push(c.pos);
  }
  s.clear();
  for (int i = 0; i >= 0; i = nodes[i].next) s.push_back(nodes[i].id);
}

} // namespace leap::policy
