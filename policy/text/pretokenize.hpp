// The pre-tokenizer: splits text into words before BPE, by a hand-written matcher for the three
// split regexes that byte-level BPE tokenizers use (GPT-2, Llama-3, Qwen2). No std::regex: this
// runs on every encode. Pure; callable from any thread.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace leap::policy {

enum class split_pattern {
  none,   // the whole text is one word (ByteLevel with use_regex=false and no Split)
  gpt2,   // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  llama3, // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  qwen2,  // as llama3 with \p{N} (one digit per word)
};

// The regex text as tokenizer.json spells it ("" for none).
const std::string& split_regex(split_pattern p);
// Recognises one of the regexes above; any other is an error that quotes it.
result<split_pattern> split_pattern_from_regex(std::string_view regex);
const char* to_string(split_pattern p);

// Appends the words of `text` to `out` (views into `text`; they concatenate back to `text`).
// Works on arbitrary bytes: invalid UTF-8 bytes count as punctuation.
void split_words(std::string_view text, split_pattern p, std::vector<std::string_view>& out);

} // namespace leap::policy
