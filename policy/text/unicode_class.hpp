// Character classes for the pre-tokenizer's hand-written split regex: \p{L} (letter), \p{N}
// (number), \s (white space), everything else (punctuation, symbols, marks, unassigned, invalid
// UTF-8). Full Unicode coverage from a generated range table (unicode_ranges.inc); a Unicode
// version newer than the table's may class a few new code points differently. Pure; callable
// from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace leap::policy {

enum class char_class : std::uint8_t { letter, number, space, other };

struct utf8_char {
  char_class cls;
  std::uint8_t len; // bytes, 1..4
};

// Class of one Unicode code point.
char_class classify(char32_t cp);

namespace detail {
extern const char_class ascii_class[128];
utf8_char char_at_slow(std::string_view s, std::size_t i);
} // namespace detail

// The character starting at byte offset i (< s.size()). An invalid or truncated UTF-8 sequence
// yields a 1-byte `other`, so every byte string splits into characters.
inline utf8_char char_at(std::string_view s, std::size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return {detail::ascii_class[b], 1};
  return detail::char_at_slow(s, i);
}

} // namespace leap::policy
