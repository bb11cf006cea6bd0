// The HTTP server's shared pieces (runtime/serve/http_server.hpp), for its two files:
// http_server.cpp (start, the acceptor, stop, the I/O threads) and http_session.cpp (one
// connection: TLS handshake, reading a request within the limits, the bearer token, the handler's
// answer, plain or streamed, keep-alive). Internal: only runtime/serve/http_*.cpp include it.
// Threads: a session runs on its strand of the server's I/O threads; a stream_state is written by
// the handler's producer from any thread (under its mutex); the server's counters are atomic.
#pragma once

#include "common/prometheus.hpp"
#include "runtime/serve/http_server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace leap::serve {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

// The shared part of a body_stream: what the producer wrote and the connection has not sent
// yet, whether it ended, and how to wake the connection (a weak reference: while it waits for the
// producer, the session is owned by the server's `streaming` set, so stop() can end it while
// the io_context still exists).
struct stream_state {
  std::mutex mtx;
  std::string pending;
  bool ended = false;
  bool closed = false;
  std::function<void()> wake;

  void write(std::string bytes) {
    std::function<void()> w;
    {
      std::lock_guard<std::mutex> lk(mtx);
      if (ended || closed || bytes.empty())
        return;
      pending += bytes;
      w = wake;
    }
    if (w)
      w();
  }
  void end() {
    std::function<void()> w;
    {
      std::lock_guard<std::mutex> lk(mtx);
      if (ended)
        return;
      ended = true;
      w = wake;
    }
    if (w)
      w();
  }
  // The connection's side: everything written so far, and whether that is all.
  std::pair<std::string, bool> take() {
    std::lock_guard<std::mutex> lk(mtx);
    std::pair<std::string, bool> t{std::move(pending), ended};
    pending.clear();
    return t;
  }
  void attach(std::function<void()> w) {
    {
      std::lock_guard<std::mutex> lk(mtx);
      if (closed)
        return;
      wake = w;
    }
    w(); // what was written before the header went out
  }
  void close() {
    std::lock_guard<std::mutex> lk(mtx);
    closed = true;
    wake = nullptr;
  }
};

// The producer's handle: ends the stream when the producer drops it.
class body_stream_handle final : public body_stream {
public:
  body_stream_handle() : st_(std::make_shared<stream_state>()) {}
  ~body_stream_handle() override { st_->end(); }
  void write(std::string bytes) override { st_->write(std::move(bytes)); }
  void end() override { st_->end(); }
  bool closed() const override {
    std::lock_guard<std::mutex> lk(st_->mtx);
    return st_->closed;
  }
  const std::shared_ptr<stream_state>& state() const { return st_; }

private:
  std::shared_ptr<stream_state> st_;
};

// What a connection touches when it closes, possibly while the io_context is being destroyed
// (after the server's other members): kept apart, shared by every session.
struct connection_count {
  std::atomic<int> open{0};
  std::shared_ptr<prom::registry> metrics;
  void changed(int by) {
    int now = open.fetch_add(by) + by;
    if (metrics)
      metrics->set("leap_http_connections", {}, now);
  }
};

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
  http_server_options opts;
  handler_fn handler;
  std::shared_ptr<connection_count> conns = std::make_shared<connection_count>();
  net::io_context ioc;
  std::optional<ssl::context> tls;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> draining{false};
  std::atomic<bool> stopped{false};
  std::uint16_t port = 0;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  // Sessions sending a streamed answer (they may wait on a producer with no operation pending).
  std::mutex streaming_mtx;
  std::set<std::shared_ptr<void>> streaming;
  void hold(std::shared_ptr<void> s) {
    std::lock_guard<std::mutex> lk(streaming_mtx);
    streaming.insert(std::move(s));
  }
  void release(const std::shared_ptr<void>& s) {
    std::shared_ptr<void> gone; // destroyed after the lock is released
    std::lock_guard<std::mutex> lk(streaming_mtx);
    auto it = streaming.find(s);
    if (it != streaming.end()) {
      gone = *it;
      streaming.erase(it);
    }
  }

  void count(const std::string& family, const prom::labels& l) {
    if (opts.metrics)
      opts.metrics->inc(family, l);
  }

  void accept();
};

// Serves one accepted connection (http_session.cpp): TLS when the server has a context, and only
// a 503 when `reject` (over serve.max_connections). Called on the connection's strand.
void start_session(http_server::impl* srv, bool reject, tcp::socket sock);

} // namespace leap::serve
