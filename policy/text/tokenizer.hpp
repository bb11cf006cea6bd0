// leap::policy::tokenizer: byte-level BPE (GPT-2 style) with special tokens, read and written in
// the Hugging Face tokenizer.json format, so our trained tokenizers and Llama-3 / Qwen2-family
// ones go through the same code. encode/decode are exact inverses on any byte string, except
// that a tokenizer with the NFC normalizer decodes to the NFC form of what it encoded.
//
// tokenizer.json support (anything else is a load error naming the field):
//   model: type "BPE"; vocab; merges as "a b" strings or [a, b] pairs; ignore_merges;
//          byte_fallback must be false, continuing_subword_prefix / end_of_word_suffix empty,
//          dropout null or 0; unk_token is ignored (a byte-level vocab has every byte).
//   normalizer: null, or NFC (applied by utf8proc to the text between added tokens; bytes that
//          are not valid UTF-8 pass through unchanged).
//   pre_tokenizer: ByteLevel (use_regex true = GPT-2 split, false = no split), or a Sequence of
//          Split {Regex: GPT-2 / Llama-3 / Qwen2 pattern, behavior Isolated, invert false} and
//          ByteLevel {use_regex false}; add_prefix_space must be false.
//   decoder: ByteLevel (or a Sequence holding only ByteLevel).
//   added_tokens: id, content, special; lstrip / rstrip / single_word must be false.
//   post_processor, truncation, padding: ignored (encode never adds BOS; prompts spell it).
// The split regexes are matched by hand (pretokenize.hpp) with full Unicode \p{L}/\p{N}/\s tables;
// checked equal to the Python `regex` module on the bundled sources and random Unicode text.
//
// Threads: a tokenizer is an immutable value plus an internal word cache guarded by mutexes;
// every const member may be called concurrently. Copies share the data and the cache.
#pragma once

#include "common/result.hpp"
#include "policy/text/pretokenize.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace leap::policy {

namespace detail {
struct tokenizer_model;
struct word_cache;
} // namespace detail

struct added_token {
  int id = -1;
  std::string content;
  bool special = true; // special tokens are matched only when encode(..., allow_special=true)
};

// A trained merge, as raw bytes of its two parts.
using byte_merge = std::pair<std::string, std::string>;

class tokenizer {
public:
  static result<tokenizer> load(const std::string& path);
  static result<tokenizer> from_json(std::string_view text);
  // Ids 0..255 are the bytes, then one id per new merged token in merge order, then `specials`.
  static result<tokenizer> from_merges(const std::vector<byte_merge>& merges,
                                       const std::vector<std::string>& specials,
                                       split_pattern pattern = split_pattern::llama3);

  std::string to_json() const;
  // Atomic: a temporary file renamed over `path`.
  result<void> save(const std::string& path) const;

  // Text -> ids. Added tokens in the text become their ids (special ones only when
  // allow_special); all other text is normalised (NFC if the normalizer says so),
  // pre-tokenized and BPE-merged. Never adds BOS/EOS.
  std::vector<int> encode(std::string_view text, bool allow_special = true) const;
  // Ids -> bytes; unknown ids decode to nothing.
  std::string decode(const std::vector<int>& ids) const;
  // The bytes of one token, for streaming (may be a partial UTF-8 character).
  std::string_view token_bytes(int id) const;

  // One past the largest id (model vocab and added tokens).
  int vocab_size() const;
  // Id of an added token by content, else of a vocab token by its raw bytes; -1 if absent.
  int token_id(std::string_view token) const;
  bool is_special(int id) const;
  const std::vector<added_token>& added_tokens() const;
  split_pattern pattern() const;
  std::size_t merge_count() const;

private:
  explicit tokenizer(std::shared_ptr<const detail::tokenizer_model> m);
  std::shared_ptr<const detail::tokenizer_model> m_;
  std::shared_ptr<detail::word_cache> cache_;
};

} // namespace leap::policy
