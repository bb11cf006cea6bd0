// Leftmost-first matching of the split regexes, alternative by alternative, with the regex
// crate's greedy/backtracking semantics worked out by hand for each alternative.
#include "policy/text/pretokenize.hpp"

#include "policy/text/unicode_class.hpp"

namespace leap::policy {
namespace {

const std::string gpt2_regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const std::string llama3_regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string qwen2_regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string empty_regex;

bool is_nl(char c) { return c == '\r' || c == '\n'; }

char_class cls_at(std::string_view s, std::size_t i) { return char_at(s, i).cls; }

// Length of 's 't 're 've 'm 'll 'd at i (s[i] == '\''), 0 if none.
std::size_t contraction(std::string_view s, std::size_t i, bool fold) {
  auto low = [&](std::size_t k) -> char {
    if (k >= s.size()) return 0;
    char c = s[k];
    return fold && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  char a = low(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  // (?i) folds U+017F LATIN SMALL LETTER LONG S to 's'.
  if (fold && s.substr(i + 1, 2) == "\xC5\xBF") return 3;
  char b = low(i + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// End of the run of characters of class `c` starting at i (at most `max` characters).
std::size_t run_end(std::string_view s, std::size_t i, char_class c, std::size_t max = -1) {
  std::size_t count = 0;
  while (i < s.size() && count < max) {
    auto ch = char_at(s, i);
    if (ch.cls != c) break;
    i += ch.len;
    ++count;
  }
  return i;
}

// \s+(?!\S) then \s+, for a white-space run starting at i.
std::size_t space_tail(std::string_view s, std::size_t i) {
  std::size_t last = i, j = i;
  while (j < s.size()) {
    auto ch = char_at(s, j);
    if (ch.cls != char_class::space) break;
    last = j;
    j += ch.len;
  }
  if (j == s.size()) return j;  // run reaches the end: take all of it
  if (last > i) return last;    // leave the last space for the next word
  return j;                     // a single space before a non-space
}

std::size_t match_llama(std::string_view s, std::size_t i, std::size_t max_digits) {
  const std::size_t n = s.size();
  if (s[i] == '\'') {
    if (std::size_t l = contraction(s, i, true)) return i + l;
  }
  auto c = char_at(s, i);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.cls == char_class::letter) return run_end(s, i, char_class::letter);
  if (c.cls != char_class::number && !is_nl(s[i]) && i + c.len < n
      && cls_at(s, i + c.len) == char_class::letter)
    return run_end(s, i + c.len, char_class::letter);
  // \p{N}{1,3} or \p{N}
  if (c.cls == char_class::number) return run_end(s, i, char_class::number, max_digits);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  std::size_t j = i;
  if (s[j] == ' ' && j + 1 < n && cls_at(s, j + 1) == char_class::other) ++j;
  if (cls_at(s, j) == char_class::other) {
    j = run_end(s, j, char_class::other);
    while (j < n && is_nl(s[j])) ++j;
    return j;
  }
  // Here c is white space. \s*[\r\n]+ : up to the last newline of the run.
  std::size_t last_nl = n, k = i;
  while (k < n) {
    auto ch = char_at(s, k);
    if (ch.cls != char_class::space) break;
    if (is_nl(s[k])) last_nl = k;
    k += ch.len;
  }
  if (last_nl != n) return last_nl + 1;
  return space_tail(s, i);
}

std::size_t match_gpt2(std::string_view s, std::size_t i) {
  const std::size_t n = s.size();
  if (s[i] == '\'') {
    if (std::size_t l = contraction(s, i, false)) return i + l;
  }
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
  std::size_t j = i;
  if (s[i] == ' ' && i + 1 < n && cls_at(s, i + 1) != char_class::space) ++j;
  auto c = cls_at(s, j);
  if (c != char_class::space) return run_end(s, j, c);
  return space_tail(s, i);
}

} // namespace

const std::string& split_regex(split_pattern p) {
  switch (p) {
  case split_pattern::gpt2: return gpt2_regex;
  case split_pattern::llama3: return llama3_regex;
  case split_pattern::qwen2: return qwen2_regex;
  case split_pattern::none: break;
  }
  return empty_regex;
}

result<split_pattern> split_pattern_from_regex(std::string_view regex) {
  for (auto p : {split_pattern::gpt2, split_pattern::llama3, split_pattern::qwen2})
    if (regex == split_regex(p)) return p;
  return make_error("pre_tokenizer Split regex is not supported: " + std::string(regex)
                    + " (supported: the GPT-2, Llama-3 and Qwen2 byte-level split regexes)");
}

const char* to_string(split_pattern p) {
  switch (p) {
  case split_pattern::none: return "none";
  case split_pattern::gpt2: return "gpt2";
  case split_pattern::llama3: return "llama3";
  case split_pattern::qwen2: return "qwen2";
  }
  return "?";
}

void split_words(std::string_view s, split_pattern p, std::vector<std::string_view>& out) {
  if (s.empty()) return;
  if (p == split_pattern::none) {
    out.push_back(s);
    return;
  }
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t e = p == split_pattern::gpt2     ? match_gpt2(s, i)
                    : p == split_pattern::llama3 ? match_llama(s, i, 3)
                                                 : match_llama(s, i, 1);
    out.push_back(s.substr(i, e - i));
    i = e;
  }
}

} // namespace leap::policy
