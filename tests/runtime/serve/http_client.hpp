// A raw HTTP/1.1 client over a loopback TCP socket for the `leap serve` tests: it sends any
// bytes (well-formed requests, or broken, huge, truncated and slow ones) and reads one answer
// (headers, then a Content-Length or a chunked body) with a deadline. Test code only; one thread
// per connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace leap::test {

struct http_reply {
  int status = 0;        // 0: no answer (closed, or the deadline passed)
  std::string head;      // status line and headers
  std::string body;
  int chunks = 0;        // a chunked body's data chunks (0: Content-Length)
  // A header's value ("" when absent); the name is matched case-insensitively.
  std::string header(const std::string& name) const {
    auto lower = [](std::string s) {
      for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    auto h = lower(head);
    auto at = h.find("\r\n" + lower(name) + ":");
    if (at == std::string::npos)
      return {};
    auto start = at + name.size() + 3;
    auto end = head.find("\r\n", start);
    auto v = head.substr(start, end - start);
    return v.substr(v.find_first_not_of(' '));
  }
};

class http_connection {
public:
  explicit http_connection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~http_connection() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  bool connected() const { return fd_ >= 0; }

  bool send(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One answer, or status 0 when the server closes first or `limit` passes.
  http_reply read_reply(std::chrono::milliseconds limit = std::chrono::seconds(120)) {
    http_reply r;
    auto end = std::chrono::steady_clock::now() + limit;
    while (true) {
      auto at = buf_.find("\r\n\r\n");
      if (at != std::string::npos) {
        r.head = buf_.substr(0, at + 2);
        if (r.header("Transfer-Encoding") == "chunked") {
          if (auto used = chunked_body(at + 4, r)) {
            buf_.erase(0, used);
            r.status = std::atoi(r.head.substr(9, 3).c_str());
            return r;
          }
          if (!fill(end))
            return http_reply{};
          continue;
        }
        auto len = std::atoll(r.header("Content-Length").c_str());
        if (buf_.size() >= at + 4 + static_cast<std::size_t>(len)) {
          r.body = buf_.substr(at + 4, static_cast<std::size_t>(len));
          buf_.erase(0, at + 4 + static_cast<std::size_t>(len));
          r.status = std::atoi(r.head.substr(9, 3).c_str());
          return r;
        }
      }
      if (!fill(end))
        return http_reply{};
    }
  }

  // Reads until the bytes received so far (not yet taken by read_reply) contain `needle`; false
  // when the server closes first or `limit` passes. Nothing is consumed.
  bool wait_for(const std::string& needle, std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (buf_.find(needle) == std::string::npos)
      if (!fill(end))
        return false;
    return true;
  }

  // True when the server closes the connection before `limit` (reading and dropping bytes).
  bool closed_by_server(std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (fill(end)) {
    }
    return eof_;
  }

private:
  // A whole chunked body starting at buf_[from]: its data into r.body, the chunks counted; the
  // bytes it took up to the end of the last chunk, or 0 when it has not all arrived.
  std::size_t chunked_body(std::size_t from, http_reply& r) {
    std::string body;
    int chunks = 0;
    std::size_t at = from;
    while (true) {
      auto eol = buf_.find("\r\n", at);
      if (eol == std::string::npos)
        return 0;
      auto size = std::strtoull(buf_.substr(at, eol - at).c_str(), nullptr, 16);
      if (size == 0) {
        auto trailer_end = buf_.find("\r\n", eol + 2); // no trailers: an empty line
        if (trailer_end == std::string::npos)
          return 0;
        r.body = std::move(body);
        r.chunks = chunks;
        return trailer_end + 2;
      }
      if (buf_.size() < eol + 2 + size + 2)
        return 0;
      body += buf_.substr(eol + 2, size);
      ++chunks;
      at = eol + 2 + size + 2;
    }
  }

  bool fill(std::chrono::steady_clock::time_point end) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  end - std::chrono::steady_clock::now())
                  .count();
    if (left <= 0 || fd_ < 0)
      return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0)
      return false;
    char tmp[65536];
    auto n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

// A request's bytes; `headers` are extra lines, each ending in "\r\n".
inline std::string http_request_text(const std::string& method, const std::string& path,
                                     const std::string& body = {}, const std::string& headers = {}) {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers
         + (body.empty() && method == "GET" ? std::string()
                                            : "Content-Length: " + std::to_string(body.size()) + "\r\n")
         + "\r\n" + body;
}

// One request on its own connection.
inline http_reply http_call(int port, const std::string& method, const std::string& path,
                            const std::string& body = {}, const std::string& headers = {}) {
  http_connection c(port);
  if (!c.connected() || !c.send(http_request_text(method, path, body, headers)))
    return {};
  return c.read_reply();
}

} // namespace leap::test
