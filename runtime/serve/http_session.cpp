#include "runtime/serve/http_server_impl.hpp"

#include "runtime/serve/api.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace leap::serve {

namespace beast = boost::beast;
namespace http = beast::http;
using clock_type = std::chrono::steady_clock;

namespace {

// Equal strings in time independent of where they differ.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<std::size_t>(1, b.size())]);
  return diff == 0;
}

template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
public:
  template <class... Args>
  session(http_server::impl* srv, bool reject, tcp::socket&& sock, Args&&... args)
      : srv_(srv), conns_(srv->conns), reject_(reject),
        stream_(std::move(sock), std::forward<Args>(args)...) {
    conns_->changed(+1);
  }
  ~session() {
    if (st_)
      st_->close(); // ended with the server (stop()) while its producer was still at work
    conns_->changed(-1);
  }

  void run() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }

private:
  auto& lowest() { return beast::get_lowest_layer(stream_); }

  void begin() {
    if constexpr (std::is_same<Stream, beast::tcp_stream>::value) {
      after_handshake();
    } else {
      lowest().expires_after(srv_->opts.read_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) {
                                  self->srv_->count("leap_http_closed_total", {{"reason", "tls"}});
                                  return; // not a TLS client, or too slow: nothing to answer
                                }
                                self->after_handshake();
                              });
    }
  }

  void after_handshake() {
    if (reject_) {
      srv_->count("leap_http_closed_total", {{"reason", "over_limit"}});
      return write(plain_error(503, "too many open connections (serve.max_connections = "
                                      + std::to_string(srv_->opts.max_connections)
                                      + "); try again"),
                   false);
    }
    wait_request();
  }

  static http_response plain_error(int status, const std::string& message) {
    http_response r;
    r.status = status;
    r.body = error_body(status, message);
    return r;
  }

  // The first byte of the next request: within the read timeout on a new connection, within
  // the idle timeout on a kept-alive one.
  void wait_request() {
    lowest().expires_after(first_ ? srv_->opts.read_timeout : srv_->opts.idle_timeout);
    if (buf_.size() > 0)
      return read_request();
    stream_.async_read_some(buf_.prepare(4096), [self = this->shared_from_this()](
                                                  beast::error_code ec, std::size_t n) {
      if (ec) {
        if (ec == beast::error::timeout)
          self->srv_->count("leap_http_closed_total", {{"reason", "timeout"}});
        return self->close();
      }
      self->buf_.commit(n);
      self->read_request();
    });
  }

  // The whole request (headers and body) within the read timeout.
  void read_request() {
    lowest().expires_after(srv_->opts.read_timeout);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(srv_->opts.max_header_bytes));
    parser_->body_limit(srv_->opts.max_body_bytes);
    http::async_read(stream_, buf_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == net::error::eof)
      return close();
    if (ec == beast::error::timeout) {
      srv_->count("leap_http_closed_total", {{"reason", "timeout"}});
      return close(); // the deadline closed the socket: nothing can be written
    }
    if (ec == http::error::body_limit)
      return write(plain_error(413, "the body is larger than serve.max_body_kb = "
                                      + std::to_string(srv_->opts.max_body_bytes / 1024) + " KiB"),
                   false);
    if (ec == http::error::header_limit)
      return write(plain_error(431, "the headers are larger than serve.max_header_kb = "
                                      + std::to_string(srv_->opts.max_header_bytes / 1024) + " KiB"),
                   false);
    if (ec) {
      srv_->count("leap_http_closed_total", {{"reason", "malformed"}});
      if (ec == net::error::connection_reset || ec == net::error::operation_aborted)
        return close();
      return write(plain_error(400, "malformed HTTP request: " + ec.message()), false);
    }
    auto req = parser_->release();
    started_ = clock_type::now();
    keep_alive_ = req.keep_alive();
    std::string target(req.target());
    std::string method(req.method_string());
    const auto path = target.substr(0, target.find('?'));
    const bool health = method == "GET" && (path == "/health" || path == "/openenv/health");
    if (!health && !srv_->opts.token.empty()) { // liveness probes carry no token
      auto auth = std::string(req[http::field::authorization]);
      const std::string prefix = "Bearer ";
      bool ok = auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0
                && same_secret(auth.substr(prefix.size()), srv_->opts.token);
      if (!ok) {
        auto r = plain_error(401, auth.empty() ? "this server needs a bearer token "
                                                 "(Authorization: Bearer TOKEN)"
                                               : "the bearer token is not this server's");
        return write(std::move(r), keep_alive_);
      }
    }
    if (srv_->draining.load()) {
      auto r = plain_error(503, "the server is shutting down");
      r.retry_after = 5;
      return write(std::move(r), false);
    }
    ++srv_->in_flight;
    auto once = std::make_shared<std::atomic<bool>>(false);
    auto owner = srv_->shared_from_this();
    respond_fn respond = [owner, self = this->shared_from_this(), once](http_response r) {
      if (once->exchange(true))
        return;
      net::post(self->stream_.get_executor(), [owner, self, r = std::move(r)]() mutable {
        if (r.stream)
          return self->write_stream(std::move(r), self->keep_alive_); // in flight until it ends
        --owner->in_flight;
        self->write(std::move(r), self->keep_alive_);
      });
    };
    http_request call{std::move(method), std::move(target), std::move(req.body())};
    try {
      srv_->handler(std::move(call), respond);
    } catch (const std::exception& e) {
      auto r = plain_error(500, std::string("internal error: ") + e.what());
      respond(std::move(r));
    }
  }

  // The headers every answer carries, from the handler's response.
  template <class Body>
  static void set_headers(http::response<Body>& res, const http_response& r, bool keep_alive) {
    res.set(http::field::server, "leap");
    res.set(http::field::content_type, r.content_type);
    res.set("Leap-Schema", schema_version);
    if (r.retry_after > 0)
      res.set(http::field::retry_after, std::to_string(r.retry_after));
    if (!r.allow.empty())
      res.set(http::field::allow, r.allow);
    if (r.status == 401)
      res.set(http::field::www_authenticate, "Bearer");
    res.keep_alive(keep_alive);
  }

  // The request is answered: its metrics.
  void answered(const std::string& route, int status) {
    if (srv_->opts.metrics) {
      srv_->opts.metrics->inc("leap_http_requests_total",
                              {{"route", route}, {"code", std::to_string(status)}});
      if (started_ != clock_type::time_point{})
        srv_->opts.metrics->observe(
          "leap_http_request_seconds",
          std::chrono::duration<double>(clock_type::now() - started_).count(), {{"route", route}});
    }
    started_ = {};
  }

  // After an answer was written (ok) or failed: the next request on a kept-alive connection.
  void after_answer(bool ok, bool keep_alive) {
    if (!ok || !keep_alive)
      return close();
    first_ = false;
    wait_request();
  }

  void write(http_response r, bool keep_alive) {
    keep_alive = keep_alive && !srv_->draining.load();
    auto res = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(r.status), 11);
    set_headers(*res, r, keep_alive);
    res->body() = std::move(r.body);
    res->prepare_payload();
    answered(r.route, r.status);
    lowest().expires_after(srv_->opts.read_timeout);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res, keep_alive](beast::error_code ec,
                                                                         std::size_t) {
                        self->after_answer(!ec, keep_alive);
                      });
  }

  // A streamed answer: the header now (chunked), then each batch of bytes the producer wrote as
  // one chunk, then the last chunk; the request is answered (in flight, metrics) at the end.
  void write_stream(http_response r, bool keep_alive) {
    keep_alive = keep_alive && !srv_->draining.load();
    auto* handle = dynamic_cast<body_stream_handle*>(r.stream.get());
    if (!handle) { // not made by make_body_stream(): leap's own mistake
      --srv_->in_flight;
      return write(plain_error(500, "internal error: a stream the server did not make"), false);
    }
    auto res = std::make_shared<http::response<http::empty_body>>(
      static_cast<http::status>(r.status), 11);
    set_headers(*res, r, keep_alive);
    res->set(http::field::cache_control, "no-cache");
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    st_ = handle->state();
    stream_keep_alive_ = keep_alive;
    stream_status_ = r.status;
    stream_route_ = r.route;
    lowest().expires_after(srv_->opts.read_timeout);
    http::async_write_header(stream_, *sr, [self = this->shared_from_this(), res, sr](
                                             beast::error_code ec, std::size_t) {
      if (ec)
        return self->stream_done(false);
      self->srv_->hold(self);
      self->st_->attach([weak = std::weak_ptr<session>(self)] {
        if (auto s = weak.lock())
          net::post(s->stream_.get_executor(), [s] { s->pump(); });
      });
    });
  }

  void pump() {
    if (writing_ || !st_)
      return;
    auto [bytes, ended] = st_->take();
    if (bytes.empty() && !ended)
      return; // woken for nothing new; the next write wakes us again
    writing_ = true;
    lowest().expires_after(srv_->opts.read_timeout);
    if (bytes.empty())
      return last_chunk();
    auto buf = std::make_shared<std::string>(std::move(bytes));
    net::async_write(stream_, http::make_chunk(net::buffer(*buf)),
                     [self = this->shared_from_this(), buf, ended = ended](beast::error_code ec,
                                                                           std::size_t) {
                       if (ec)
                         return self->stream_done(false);
                       if (ended)
                         return self->last_chunk();
                       self->writing_ = false;
                       self->pump();
                     });
  }

  void last_chunk() {
    net::async_write(stream_, http::make_chunk_last(),
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->stream_done(!ec);
                     });
  }

  // The stream ended (ok) or its connection failed: the request is answered either way.
  void stream_done(bool ok) {
    auto st = std::move(st_);
    if (st)
      st->close(); // later writes are dropped
    srv_->release(this->shared_from_this());
    writing_ = false;
    --srv_->in_flight;
    answered(stream_route_, stream_status_);
    after_answer(ok, stream_keep_alive_);
  }

  void close() {
    beast::error_code ec;
    if constexpr (std::is_same<Stream, beast::tcp_stream>::value) {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    } else {
      lowest().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    }
  }

  http_server::impl* srv_; // valid while the io_context runs this session's handlers
  std::shared_ptr<connection_count> conns_;
  bool reject_;
  Stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool first_ = true;
  bool keep_alive_ = false;
  clock_type::time_point started_{};
  // The streamed answer being sent (write_stream), if any.
  std::shared_ptr<stream_state> st_;
  bool writing_ = false;
  bool stream_keep_alive_ = false;
  int stream_status_ = 200;
  std::string stream_route_;
};

} // namespace

void start_session(http_server::impl* srv, bool reject, tcp::socket sock) {
  if (srv->tls)
    std::make_shared<session<beast::ssl_stream<beast::tcp_stream>>>(srv, reject, std::move(sock),
                                                                    *srv->tls)
      ->run();
  else
    std::make_shared<session<beast::tcp_stream>>(srv, reject, std::move(sock))->run();
}

} // namespace leap::serve
