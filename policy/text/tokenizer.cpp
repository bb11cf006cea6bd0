// Byte-level BPE encode/decode, the word cache, and construction from trained merges.
#include "policy/text/tokenizer.hpp"

#include "common/fs.hpp"
#include "policy/text/tokenizer_model.hpp"
#include "policy/text/unicode_normalize.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace leap::policy {
namespace detail {

// Pre-token word -> ids, sharded so concurrent encoders rarely share a lock. Each shard is an
// open-addressing table over two arenas (key bytes, ids), so a lookup hashes once and never
// allocates. Bounded: a shard that outgrows its budget is cleared (the cache only accelerates).
struct word_cache {
  static constexpr std::size_t shard_count = 16;
  static constexpr std::size_t max_entries = 1 << 14; // per shard
  struct slot {
    std::uint64_t hash = 0; // 0 = empty
    std::uint32_t key_off = 0, key_len = 0, ids_off = 0, ids_len = 0;
  };
  struct shard {
    std::mutex mu;
    std::vector<slot> slots = std::vector<slot>(1024);
    std::string keys;
    std::vector<int> ids;
    std::size_t count = 0;

    // Appends the cached ids of `w` to `out`; false if absent.
    bool get(std::uint64_t h, std::string_view w, std::vector<int>& out) const {
      const std::size_t mask = slots.size() - 1;
      for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const slot& s = slots[i];
        if (s.hash == 0) return false;
        if (s.hash == h && s.key_len == w.size()
            && std::memcmp(keys.data() + s.key_off, w.data(), w.size()) == 0) {
          out.insert(out.end(), ids.begin() + s.ids_off, ids.begin() + s.ids_off + s.ids_len);
          return true;
        }
      }
    }
    void put(std::uint64_t h, std::string_view w, const std::vector<int>& v) {
      if (count >= max_entries) {
        std::fill(slots.begin(), slots.end(), slot{});
        keys.clear();
        ids.clear();
        count = 0;
      }
      if (2 * (count + 1) > slots.size()) grow();
      const std::size_t mask = slots.size() - 1;
      std::size_t i = h & mask;
      for (; slots[i].hash != 0; i = (i + 1) & mask)
        if (slots[i].hash == h && slots[i].key_len == w.size()
            && std::memcmp(keys.data() + slots[i].key_off, w.data(), w.size()) == 0)
          return; // another thread got there first
      slots[i] = {h, static_cast<std::uint32_t>(keys.size()), static_cast<std::uint32_t>(w.size()),
                  static_cast<std::uint32_t>(ids.size()), static_cast<std::uint32_t>(v.size())};
      keys.append(w);
      ids.insert(ids.end(), v.begin(), v.end());
      ++count;
    }
    void grow() {
      std::vector<slot> old(slots.size() * 2);
      old.swap(slots);
      const std::size_t mask = slots.size() - 1;
      for (const slot& s : old) {
        if (s.hash == 0) continue;
        std::size_t i = s.hash & mask;
        while (slots[i].hash != 0) i = (i + 1) & mask;
        slots[i] = s;
      }
    }
  };
  std::array<shard, shard_count> shards;

  // FNV-1a, never 0.
  static std::uint64_t hash(std::string_view w) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : w) h = (h ^ c) * 1099511628211ull;
    return h | 1;
  }
};

void added_trie::insert(std::string_view s, int index) {
  int n = 0;
  for (unsigned char b : s) {
    int c = child(n, b);
    if (c < 0) {
      c = static_cast<int>(nodes.size());
      nodes.emplace_back();
      nodes[n].next.emplace_back(b, c);
    }
    n = c;
  }
  nodes[n].token = index;
  if (!s.empty()) first[static_cast<unsigned char>(s[0])] = 1;
}

int added_trie::child(int n, unsigned char b) const {
  for (const auto& [byte, c] : nodes[n].next)
    if (byte == b) return c;
  return -1;
}

result<void> tokenizer_model::finish() {
  int max_id = -1;
  for (const auto& [bytes, id] : vocab) {
    if (id < 0) return make_error("model.vocab: negative id for a token");
    max_id = std::max(max_id, id);
  }
  for (const auto& t : added) {
    if (t.id < 0) return make_error("added_tokens: negative id for '" + t.content + "'");
    if (t.content.empty()) return make_error("added_tokens: empty content for id " + std::to_string(t.id));
    max_id = std::max(max_id, t.id);
  }
  const std::size_t tokens = vocab.size() + added.size();
  if (static_cast<std::size_t>(max_id) >= 2 * tokens + 1024)
    return make_error("token ids are sparse: the largest is " + std::to_string(max_id) + " for "
                      + std::to_string(tokens) + " tokens (a damaged file?)");
  id_bytes.assign(static_cast<std::size_t>(max_id + 1), std::string());
  id_special.assign(static_cast<std::size_t>(max_id + 1), 0);
  std::vector<unsigned char> used(static_cast<std::size_t>(max_id + 1), 0);
  for (const auto& [bytes, id] : vocab) {
    if (used[id]) return make_error("model.vocab: id " + std::to_string(id) + " is used twice");
    used[id] = 1;
    id_bytes[id] = bytes;
  }
  for (std::size_t i = 0; i < added.size(); ++i) {
    const auto& t = added[i];
    if (used[t.id] == 2) return make_error("added_tokens: id " + std::to_string(t.id) + " is used twice");
    if (used[t.id] == 1 && id_bytes[t.id] != t.content)
      return make_error("added_tokens: id " + std::to_string(t.id) + " ('" + t.content
                        + "') is already a different vocab token");
    used[t.id] = 2;
    id_bytes[t.id] = t.content;
    id_special[t.id] = t.special ? 1 : 0;
    trie.insert(t.content, static_cast<int>(i));
  }
  for (int b = 0; b < 256; ++b) {
    auto it = vocab.find(std::string(1, static_cast<char>(b)));
    if (it == vocab.end())
      return make_error("model.vocab has no token for byte " + std::to_string(b)
                        + ": not a complete byte-level BPE vocabulary");
    byte_id[b] = it->second;
  }
  return {};
}

} // namespace detail

namespace {

void encode_word(const detail::tokenizer_model& m, detail::word_cache& cache, std::string_view w,
                 std::vector<int>& out) {
  if (w.size() == 1) {
    out.push_back(m.byte_id[static_cast<unsigned char>(w[0])]);
    return;
  }
  const std::uint64_t h = detail::word_cache::hash(w);
  auto& sh = cache.shards[(h >> 59) % detail::word_cache::shard_count];
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    if (sh.get(h, w, out)) return;
  }
  std::vector<int> ids;
  if (m.ignore_merges) {
    auto it = m.vocab.find(std::string(w));
    if (it != m.vocab.end()) ids.push_back(it->second);
  }
  if (ids.empty()) {
    ids.reserve(w.size());
    for (unsigned char b : w) ids.push_back(m.byte_id[b]);
    bpe_merge(m.merges, ids);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(sh.mu);
  sh.put(h, w, ids);
}

void encode_plain(const detail::tokenizer_model& m, detail::word_cache& cache,
                  std::string_view text, std::vector<int>& out) {
  if (text.empty()) return;
  thread_local std::vector<std::string_view> words;
  words.clear();
  split_words(text, m.pattern, words);
  for (auto w : words) encode_word(m, cache, w, out);
}

// Text between added tokens: normalised (NFC when the tokenizer says so), then split and merged.
// Added tokens are matched in the text as given, before normalisation, as Hugging Face does for
// tokens with normalized=false (the only kind tokenizer.json files use for special tokens).
void encode_section(const detail::tokenizer_model& m, detail::word_cache& cache,
                    std::string_view text, std::vector<int>& out) {
  if (!m.nfc) return encode_plain(m, cache, text, out);
  const std::string normalized = to_nfc(text);
  encode_plain(m, cache, normalized, out);
}

} // namespace

tokenizer::tokenizer(std::shared_ptr<const detail::tokenizer_model> m)
    : m_(std::move(m)), cache_(std::make_shared<detail::word_cache>()) {}

result<tokenizer> tokenizer::from_merges(const std::vector<byte_merge>& merges,
                                         const std::vector<std::string>& specials,
                                         split_pattern pattern) {
  auto m = std::make_shared<detail::tokenizer_model>();
  m->pattern = pattern;
  for (int b = 0; b < 256; ++b) m->vocab.emplace(std::string(1, static_cast<char>(b)), b);
  int next_id = 256;
  m->merges.reserve(merges.size());
  for (std::size_t r = 0; r < merges.size(); ++r) {
    auto a = m->vocab.find(merges[r].first);
    auto b = m->vocab.find(merges[r].second);
    if (a == m->vocab.end() || b == m->vocab.end())
      return make_error("merge " + std::to_string(r) + " uses a token that no earlier merge made");
    int ia = a->second, ib = b->second;
    auto [c, fresh] = m->vocab.emplace(merges[r].first + merges[r].second, next_id);
    if (fresh) ++next_id;
    if (m->merges.add(ia, ib, static_cast<int>(m->merge_list.size()), c->second))
      m->merge_list.emplace_back(ia, ib);
  }
  for (const auto& s : specials) {
    if (m->vocab.count(s)) return make_error("special token '" + s + "' is also a BPE token");
    for (const auto& t : m->added)
      if (t.content == s) return make_error("special token '" + s + "' is listed twice");
    m->added.push_back({next_id++, s, true});
  }
  if (auto r = m->finish(); !r) return r.err();
  return tokenizer(std::move(m));
}

std::vector<int> tokenizer::encode(std::string_view text, bool allow_special) const {
  const auto& m = *m_;
  std::vector<int> out;
  out.reserve(text.size() / 3 + 4);
  const auto& nodes = m.trie.nodes;
  std::size_t start = 0, i = 0;
  if (m.added.empty()) i = text.size();
  while (i < text.size()) {
    if (!m.trie.first[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    // Longest eligible added token starting at i.
    int n = m.trie.child(0, static_cast<unsigned char>(text[i]));
    int best = -1;
    std::size_t best_len = 0;
    for (std::size_t k = i; n >= 0;) {
      int t = nodes[n].token;
      if (t >= 0 && (allow_special || !m.added[t].special)) {
        best = t;
        best_len = k + 1 - i;
      }
      if (++k >= text.size()) break;
      n = m.trie.child(n, static_cast<unsigned char>(text[k]));
    }
    if (best < 0) {
      ++i;
      continue;
    }
    encode_section(m, *cache_, text.substr(start, i - start), out);
    out.push_back(m.added[best].id);
    i += best_len;
    start = i;
  }
  encode_section(m, *cache_, text.substr(start), out);
  return out;
}

std::string tokenizer::decode(const std::vector<int>& ids) const {
  std::string out;
  for (int id : ids) out += token_bytes(id);
  return out;
}

std::string_view tokenizer::token_bytes(int id) const {
  if (id < 0 || id >= static_cast<int>(m_->id_bytes.size())) return {};
  return m_->id_bytes[id];
}

int tokenizer::vocab_size() const { return static_cast<int>(m_->id_bytes.size()); }

int tokenizer::token_id(std::string_view token) const {
  for (const auto& t : m_->added)
    if (t.content == token) return t.id;
  auto it = m_->vocab.find(std::string(token));
  return it == m_->vocab.end() ? -1 : it->second;
}

bool tokenizer::is_special(int id) const {
  return id >= 0 && id < static_cast<int>(m_->id_special.size()) && m_->id_special[id];
}

const std::vector<added_token>& tokenizer::added_tokens() const { return m_->added; }
split_pattern tokenizer::pattern() const { return m_->pattern; }
std::size_t tokenizer::merge_count() const { return m_->merge_list.size(); }

result<void> tokenizer::save(const std::string& path) const {
  return write_file_atomic(path, to_json());
}

} // namespace leap::policy
