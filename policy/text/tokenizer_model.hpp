// Internal to the tokenizer (tokenizer.cpp, tokenizer_json.cpp): the immutable model data and
// its construction checks. Not for other callers. Immutable once built; shared across threads.
#pragma once

#include "common/result.hpp"
#include "policy/text/bpe_merge.hpp"
#include "policy/text/tokenizer.hpp"

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace leap::policy::detail {

// Byte trie over the added tokens' contents, for leftmost-longest matching.
struct added_trie {
  struct node {
    std::vector<std::pair<unsigned char, int>> next; // child by byte
    int token = -1;                                  // index into added, or -1
  };
  std::vector<node> nodes{1};
  std::array<unsigned char, 256> first{}; // 1 where some token starts with that byte
  void insert(std::string_view s, int index);
  int child(int n, unsigned char b) const;
};

struct tokenizer_model {
  std::vector<std::string> id_bytes;             // raw bytes of every id ("" for gaps)
  std::vector<unsigned char> id_special;         // 1 for special added tokens
  std::unordered_map<std::string, int> vocab;    // model vocab: raw bytes -> id
  std::array<int, 256> byte_id{};                // id of each single byte
  merge_table merges;
  std::vector<std::pair<int, int>> merge_list;   // rank order
  std::vector<added_token> added;
  added_trie trie;
  split_pattern pattern = split_pattern::llama3;
  bool nfc = false;                              // normalizer NFC: applied between added tokens
  bool ignore_merges = false;

  // Fills id_bytes/id_special/byte_id/trie from vocab and added, and validates them.
  result<void> finish();
};

} // namespace leap::policy::detail
