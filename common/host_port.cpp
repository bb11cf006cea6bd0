#include "common/host_port.hpp"

namespace leap {

std::string host_port::text() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

result<host_port> parse_host_port(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return make_error("'" + text + "' is not HOST:PORT");
  host_port out;
  out.host = text.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  else if (out.host.find(':') != std::string::npos)
    return make_error("'" + text + "': write an IPv6 host in brackets, [::1]:PORT");
  unsigned long port = 0;
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9')
      return make_error("'" + text + "': the port is not a number");
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (port > 65535)
      return make_error("'" + text + "': the port is above 65535");
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

} // namespace leap
