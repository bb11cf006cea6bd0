// The GPT-2 bytes_to_unicode table: printable Latin-1 bytes map to themselves, the other 68
// bytes to U+0100.. in byte order.
#include "policy/text/byte_level.hpp"

#include <array>

namespace leap::policy {
namespace {

constexpr int inverse_size = 324; // highest mapped code point is U+0143

struct tables {
  std::array<std::string, 256> symbol;
  std::array<int, inverse_size> inverse{};
  tables() {
    inverse.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      int cp = printable ? b : next++;
      inverse[cp] = b;
      std::string& s = symbol[b];
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
  }
};

const tables& table() {
  static const tables t;
  return t;
}

} // namespace

const std::string& byte_symbol(unsigned char b) { return table().symbol[b]; }

std::string bytes_to_symbols(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += table().symbol[b];
  return out;
}

result<std::string> symbols_to_bytes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    auto b0 = static_cast<unsigned char>(s[i]);
    int cp = -1;
    if (b0 < 0x80) {
      cp = b0;
      i += 1;
    } else if ((b0 & 0xE0) == 0xC0 && i + 1 < s.size()
               && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
      cp = ((b0 & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
      i += 2;
      if (cp < 0x80) cp = -1; // overlong
    }
    if (cp < 0 || cp >= inverse_size || table().inverse[cp] < 0)
      return make_error("token '" + std::string(s)
                        + "' holds a character outside the byte-level alphabet (not a byte-level BPE vocabulary)");
    out.push_back(static_cast<char>(table().inverse[cp]));
  }
  return out;
}

} // namespace leap::policy
