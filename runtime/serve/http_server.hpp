// The HTTP/1.1 server of `leap serve`: Boost.Beast over Asio, plain TCP or TLS (Asio's OpenSSL
// stream), keep-alive, and the limits that keep a hostile client from hurting anyone else: a
// connection cap (503 beyond it), a header and a body limit (431, 413), a deadline for a whole
// request to arrive (slow clients are cut off), an idle timeout between requests, a bearer token
// (401; compared in constant time). Everything it says itself is a JSON error body. What a
// request means is the handler's business (runtime/serve/service_bridge.hpp).
//
// Threads: start() binds and runs `threads` I/O threads; the handler is called on one of them
// and must not block; it answers through `respond`, once, from any thread. The other members
// are called from the owning (main) thread.
#pragma once

#include "common/passkey.hpp"
#include "common/host_port.hpp"
#include "common/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace leap::prom {
class registry;
}

namespace leap::serve {

struct http_request {
  std::string method;
  std::string target;
  std::string body;
};

// The body of a response sent as it is produced (HTTP/1.1 chunked transfer encoding): server-
// sent events of a streamed completion. The handler makes one (make_body_stream), answers with
// it in http_response::stream, and writes to it from any thread, before or after answering;
// each write goes out as it comes (the connection's writes never wait on the producer). end()
// finishes the response; a stream dropped without end() is ended by its destructor. When the
// client goes away, closed() turns true and later writes are dropped: the producer may stop.
// Thread-safe.
class body_stream {
public:
  virtual ~body_stream() = default;
  virtual void write(std::string bytes) = 0;
  virtual void end() = 0;
  virtual bool closed() const = 0;
};
std::shared_ptr<body_stream> make_body_stream();

struct http_response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  int retry_after = 0;     // seconds; sent as Retry-After when > 0
  std::string allow;       // 405: the methods the path takes
  std::string route = "unknown"; // the metrics label of what answered
  // Set: the body is this stream's bytes (sent chunked), `body` is unused. The request counts
  // as answered (metrics, in-flight) when the stream ends.
  std::shared_ptr<body_stream> stream;
};

using respond_fn = std::function<void(http_response)>;
using handler_fn = std::function<void(http_request, respond_fn)>;

struct http_server_options {
  host_port listen;
  int threads = 2;
  int max_connections = 256;
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;
  std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  std::string token;             // empty: no Authorization needed
  std::string tls_cert, tls_key; // both set: HTTPS
  std::shared_ptr<prom::registry> metrics; // requests, latency, connections (may be null)
};

// Declares the families the server records (leap_http_requests_total, ...).
void declare_http_metrics(prom::registry& m);

class http_server {
public:
  // Binds, loads the TLS files, and starts serving; an error names the address or the file.
  static result<std::unique_ptr<http_server>> start(http_server_options opts, handler_fn handler);
  ~http_server(); // stop()

  std::uint16_t port() const;
  bool tls() const;
  // No new connections; requests on open ones are answered 503 (draining); running ones finish.
  void stop_accepting();
  // Requests read and not yet answered.
  std::size_t in_flight() const;
  // Closes every connection and joins the I/O threads.
  void stop();

  struct impl;

  http_server(passkey<http_server>, std::shared_ptr<impl> i); // start() only

private:
  // Shared with every answer still on its way (an answer that comes after stop() finds the
  // I/O threads gone and is dropped with its connection).
  std::shared_ptr<impl> impl_;
};

} // namespace leap::serve
