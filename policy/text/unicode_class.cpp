// Code-point classes: an ASCII table plus a sorted table of non-letter ranges for the rest.
#include "policy/text/unicode_class.hpp"

#include <algorithm>
#include <iterator>

namespace leap::policy {
namespace detail {

#define L char_class::letter
#define N char_class::number
#define S char_class::space
#define O char_class::other
const char_class ascii_class[128] = {
    O, O, O, O, O, O, O, O, O, S, S, S, S, S, O, O, // 0x00 (\t \n \v \f \r)
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, // 0x10
    S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, // 0x20 space, punctuation
    N, N, N, N, N, N, N, N, N, N, O, O, O, O, O, O, // 0x30 digits
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, // 0x40
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, // 0x50
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, // 0x60
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, // 0x70
};
#undef L
#undef N
#undef S
#undef O

} // namespace detail

namespace {

struct range {
  char32_t lo, hi;
  char_class cls;
};

constexpr auto N = char_class::number;
constexpr auto S = char_class::space;
constexpr auto O = char_class::other;
constexpr auto L = char_class::letter;

// Sorted, non-overlapping; code points >= 0x80 not listed are letters.
constexpr range ranges[] = {
#include "policy/text/unicode_ranges.inc"
};

} // namespace

char_class classify(char32_t cp) {
  if (cp < 0x80) return detail::ascii_class[cp];
  auto it = std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                             [](char32_t c, const range& r) { return c < r.lo; });
  if (it == std::begin(ranges)) return L;
  --it;
  return cp <= it->hi ? it->cls : L;
}

namespace detail {

utf8_char char_at_slow(std::string_view s, std::size_t i) {
  auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t need;
  char32_t cp;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    need = 1, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    need = 2, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    need = 3, cp = b0 & 0x07, min = 0x10000;
  } else {
    return {char_class::other, 1};
  }
  if (i + need >= s.size()) return {char_class::other, 1};
  for (std::size_t k = 1; k <= need; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return {char_class::other, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {char_class::other, 1};
  return {classify(cp), static_cast<std::uint8_t>(need + 1)};
}

} // namespace detail
} // namespace leap::policy
