#include "common/random_id.hpp"

#include <cstdint>
#include <cstdio>
#include <random>

namespace leap {

std::string random_id() {
  std::random_device rd;
  std::uint64_t hi = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  std::uint64_t lo = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

} // namespace leap
