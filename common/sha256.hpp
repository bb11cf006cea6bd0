// SHA-256 of byte strings, for content-addressed caches (compile artifacts, reference outputs).
// Pure and thread-safe; call from anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace leap {

class sha256 {
public:
  sha256();
  sha256& update(std::string_view data);
  // Adds a length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  sha256& field(std::string_view data);
  std::string hex_digest(); // finalizes; the object must not be updated afterwards

private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::uint64_t total_ = 0;
  std::size_t used_ = 0;
};

std::string sha256_hex(std::string_view data);

} // namespace leap
