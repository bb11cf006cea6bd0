// "HOST:PORT" addresses of cluster nodes and listeners: parsing (an IPv6 host in brackets) and
// whether a host is a loopback address (where plain TCP is allowed without cluster.insecure).
// Pure functions; any thread.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <string>

namespace leap {

struct host_port {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const; // HOST:PORT again
};

// An error names the text and what is wrong with it.
result<host_port> parse_host_port(const std::string& text);

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);

} // namespace leap
