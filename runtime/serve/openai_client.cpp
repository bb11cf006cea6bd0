#include "runtime/serve/openai_client.hpp"

#include "common/json_text.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>

namespace leap::serve {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using nlohmann::json;

result<openai_answer> parse_completion_answer(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    return make_error("the answer is not JSON (byte " + std::to_string(e.byte) + ")");
  }
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array())
    return make_error("the answer has no choices");
  openai_answer a;
  try {
    for (const auto& c : j["choices"]) {
      openai_sample s;
      s.text = c.value("text", std::string());
      if (c.contains("finish_reason") && c["finish_reason"].is_string())
        s.finish_reason = c["finish_reason"].get<std::string>();
      if (c.contains("token_ids") && c["token_ids"].is_array())
        s.tokens = c["token_ids"].get<std::vector<int>>();
      if (c.contains("logprobs") && c["logprobs"].is_object()
          && c["logprobs"].contains("token_logprobs"))
        for (const auto& x : c["logprobs"]["token_logprobs"])
          s.logprobs.push_back(x.is_number() ? x.get<float>() : 0.0f);
      a.samples.push_back(std::move(s));
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      a.prompt_tokens = j["usage"].value("prompt_tokens", 0LL);
      a.completion_tokens = j["usage"].value("completion_tokens", 0LL);
    }
  } catch (const json::exception& e) {
    return make_error(std::string("a malformed choice: ") + e.what());
  }
  return a;
}

struct openai_client::impl : std::enable_shared_from_this<openai_client::impl> {
  openai_client_options opts;
  std::string host, port, path; // path: "/v1/completions" or "/completions" under the URL's
  bool host_is_ip = false;
  std::optional<ssl::context> tls; // https:// only
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
  std::atomic<std::uint64_t> retried{0};
  int running = 0;                 // calls on the wire (I/O thread only)
  std::deque<std::function<void()>> waiting; // calls waiting for a slot (I/O thread only)
  bool stopped = false;            // I/O thread only

  // One call: its tries, each a fresh connection over Stream (beast::tcp_stream or
  // beast::ssl_stream<beast::tcp_stream>; only the handshake differs).
  template <class Stream>
  struct call : std::enable_shared_from_this<call<Stream>> {
    static constexpr bool is_tls = !std::is_same<Stream, beast::tcp_stream>::value;
    std::shared_ptr<impl> owner;
    std::string body;
    done_fn done;
    int tries = 0;
    std::string last_failure;
    tcp::resolver resolver;
    std::optional<Stream> stream; // made anew for every try (a TLS stream is not reusable)
    net::steady_timer timer;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::response<http::string_body> res;

    explicit call(std::shared_ptr<impl> o)
        : owner(std::move(o)), resolver(owner->io), timer(owner->io) {}

    auto& tcp_layer() { return beast::get_lowest_layer(*stream); }

    void start() {
      ++tries;
      res = {};
      buffer.clear();
      if constexpr (is_tls)
        stream.emplace(owner->io, *owner->tls);
      else
        stream.emplace(owner->io);
      tcp_layer().expires_after(owner->opts.timeout);
      resolver.async_resolve(owner->host, owner->port,
                             [self = this->shared_from_this()](beast::error_code ec,
                                                               tcp::resolver::results_type r) {
                               if (ec)
                                 return self->failed("cannot resolve " + self->owner->host + ": "
                                                       + ec.message(),
                                                     true, 0);
                               self->tcp_layer().async_connect(
                                 r, [self](beast::error_code ec, const tcp::endpoint&) {
                                   if (ec)
                                     return self->failed("cannot connect: " + ec.message(), true, 0);
                                   self->handshake();
                                 });
                             });
    }

    void handshake() {
      if constexpr (!is_tls) {
        send();
      } else {
        SSL* ssl = stream->native_handle();
        // SNI names a host, never an address (RFC 6066); the certificate must name either.
        if (!owner->host_is_ip)
          SSL_set_tlsext_host_name(ssl, owner->host.c_str());
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        const bool named = owner->host_is_ip
                             ? X509_VERIFY_PARAM_set1_ip_asc(param, owner->host.c_str()) == 1
                             : X509_VERIFY_PARAM_set1_host(param, owner->host.c_str(), 0) == 1;
        if (!named)
          return failed("TLS to " + owner->opts.url + ": cannot check certificates for host \""
                          + owner->host + "\"",
                        false, 0);
        stream->async_handshake(ssl::stream_base::client,
                                [self = this->shared_from_this()](beast::error_code ec) {
                                  if (ec)
                                    return self->handshake_failed(ec);
                                  self->send();
                                });
      }
    }

    // A refused certificate or a server that does not speak TLS stays so: not retried. A
    // timeout or a dropped connection during the handshake is retried like any other.
    void handshake_failed(beast::error_code ec) {
      if (ec == beast::error::timeout)
        return failed("TLS handshake with " + owner->opts.url + " timed out", true, 0);
      if (ec.category() != net::error::get_ssl_category())
        return failed("TLS handshake with " + owner->opts.url + ": " + ec.message(), true, 0);
      std::string why = ec.message();
      if constexpr (is_tls) {
        const long v = SSL_get_verify_result(stream->native_handle());
        if (v != X509_V_OK)
          why += " (" + std::string(X509_verify_cert_error_string(v)) + ")";
        why = "TLS handshake with " + owner->opts.url + " failed: " + why;
        if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
          why += "; the server's certificate does not name " + owner->host
                 + " (its subjectAltName must; dial a name it carries)";
        else if (v != X509_V_OK)
          why += owner->opts.tls_ca.empty()
                   ? "; the system's trust store does not vouch for the server's certificate "
                     "(set openai.tls_ca to the PEM file of the CA that signed it)"
                   : "; the CAs of openai.tls_ca (" + owner->opts.tls_ca
                       + ") do not vouch for the server's certificate";
      }
      failed(why, false, 0);
    }

    void send() {
      req = {http::verb::post, owner->path, 11};
      req.set(http::field::host, owner->host + ":" + owner->port);
      req.set(http::field::content_type, "application/json");
      if (!owner->opts.api_key.empty())
        req.set(http::field::authorization, "Bearer " + owner->opts.api_key);
      req.body() = body;
      req.keep_alive(false);
      req.prepare_payload();
      http::async_write(*stream, req,
                        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                          if (ec)
                            return self->failed(ec == beast::error::timeout
                                                  ? "timed out"
                                                  : "write: " + ec.message(),
                                                true, 0);
                          http::async_read(*self->stream, self->buffer, self->res,
                                           [self](beast::error_code ec, std::size_t) {
                                             self->received(ec);
                                           });
                        });
    }

    void received(beast::error_code ec) {
      if (ec)
        return failed(ec == beast::error::timeout
                        ? "no answer within " + std::to_string(owner->opts.timeout.count()) + " ms"
                        : "read: " + ec.message(),
                      true, 0);
      // The answer is complete (Content-Length); the connection is not reused, so it is closed
      // without a TLS close_notify.
      beast::error_code ignore;
      tcp_layer().socket().shutdown(tcp::socket::shutdown_both, ignore);
      tcp_layer().socket().close(ignore);
      const int status = static_cast<int>(res.result_int());
      if (status == 200) {
        auto a = parse_completion_answer(res.body());
        if (!a)
          return finish(make_error("the server's answer: " + a.message()));
        a->tries = tries;
        return finish(std::move(*a));
      }
      std::string message = res.body();
      try {
        auto j = json::parse(res.body());
        if (j.contains("error") && j["error"].is_object() && j["error"].contains("message"))
          message = j["error"]["message"].get<std::string>();
      } catch (...) {
      }
      if (message.size() > 300)
        message = message.substr(0, 300) + "...";
      int retry_after = 0;
      if (auto it = res.find(http::field::retry_after); it != res.end())
        retry_after = std::atoi(std::string(it->value()).c_str());
      const bool again = status == 429 || status >= 500;
      failed("HTTP " + std::to_string(status) + ": " + message, again, retry_after);
    }

    void failed(const std::string& why, bool retryable, int retry_after_s) {
      last_failure = why;
      if (stream) {
        beast::error_code ignore;
        tcp_layer().socket().close(ignore);
      }
      if (!retryable || tries > owner->opts.retries || owner->stopped)
        return finish(make_error("POST " + owner->path + " failed after " + std::to_string(tries)
                                 + (tries == 1 ? " try: " : " tries: ") + why));
      ++owner->retried;
      auto wait = owner->opts.backoff * (1 << std::min(tries - 1, 10));
      wait = std::max<std::chrono::milliseconds>(wait, std::chrono::seconds(retry_after_s));
      timer.expires_after(wait);
      timer.async_wait([self = this->shared_from_this()](beast::error_code ec) {
        if (ec || self->owner->stopped)
          return self->finish(make_error("the client stopped"));
        self->start();
      });
    }

    void finish(result<openai_answer> r) {
      auto d = std::move(done);
      done = nullptr;
      if (d)
        d(std::move(r));
      owner->release();
    }
  };

  // On the I/O thread: a call starts now if a slot is free, else waits for one.
  template <class Stream>
  void launch(std::string body, done_fn done) {
    auto c = std::make_shared<call<Stream>>(shared_from_this());
    c->body = std::move(body);
    c->done = std::move(done);
    auto go = [c] {
      ++c->owner->running;
      if (c->owner->stopped)
        return c->finish(make_error("the client stopped"));
      c->start();
    };
    if (running < opts.max_concurrency && !stopped)
      go();
    else
      waiting.push_back(go);
  }

  void release() {
    --running;
    if (!waiting.empty() && !stopped) {
      auto next = std::move(waiting.front());
      waiting.pop_front();
      next();
    }
  }
};

result<std::unique_ptr<openai_client>> openai_client::create(openai_client_options opts) {
  std::string url = opts.url;
  bool tls = false;
  if (url.rfind("https://", 0) == 0) {
    tls = true;
    url = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    url = url.substr(7);
  } else {
    return make_error("openai.url: \"" + opts.url + "\" must start with http:// or https://");
  }
  auto slash = url.find('/');
  std::string hostport = url.substr(0, slash);
  std::string base = slash == std::string::npos ? "" : url.substr(slash);
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  if (base.empty())
    base = "/v1";
  auto colon = hostport.rfind(':');
  auto c = std::make_unique<openai_client>(passkey<openai_client>());
  c->impl_ = std::make_shared<impl>();
  auto& i = *c->impl_;
  i.host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  i.port = colon == std::string::npos ? (tls ? "443" : "80") : hostport.substr(colon + 1);
  if (i.host.empty() || i.port.empty())
    return make_error("openai.url: \"" + opts.url + "\" names no host");
  beast::error_code not_ip;
  net::ip::make_address(i.host, not_ip);
  i.host_is_ip = !not_ip;
  i.path = base + "/completions";
  if (tls) {
    i.tls.emplace(ssl::context::tls_client);
    i.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                       | ssl::context::no_sslv3 | ssl::context::no_tlsv1
                       | ssl::context::no_tlsv1_1);
    i.tls->set_verify_mode(ssl::verify_peer);
    beast::error_code ec;
    if (opts.tls_ca.empty()) {
      i.tls->set_default_verify_paths(ec);
      if (ec)
        return make_error("openai.tls_ca is empty and the system's trust store cannot be read ("
                          + ec.message() + "); set openai.tls_ca to a PEM file of CAs");
    } else {
      std::error_code fec;
      if (!std::filesystem::is_regular_file(opts.tls_ca, fec))
        return make_error("openai.tls_ca: \"" + opts.tls_ca
                          + "\" is not a file (a PEM file of the CAs that sign the server's "
                            "certificate)");
      i.tls->load_verify_file(opts.tls_ca, ec);
      if (ec)
        return make_error("openai.tls_ca: cannot load \"" + opts.tls_ca
                          + "\" as PEM CA certificates: " + ec.message());
    }
  }
  opts.max_concurrency = std::max(1, opts.max_concurrency);
  i.opts = std::move(opts);
  i.thread = std::thread([p = c->impl_.get()] { p->io.run(); });
  return c;
}

openai_client::~openai_client() {
  auto i = impl_;
  if (!i || !i->thread.joinable())
    return; // create() failed before starting it
  net::post(i->io, [i] {
    i->stopped = true;
    for (auto& w : i->waiting)
      w(); // each fails at once (stopped)
    i->waiting.clear();
  });
  i->work.reset();
  // Calls on the wire finish or time out (their retries are cut short by `stopped`).
  i->thread.join();
}

std::uint64_t openai_client::retried() const { return impl_->retried.load(); }

void openai_client::complete(openai_completion_call call, done_fn done) {
  json body{{"model", impl_->opts.model},
            {"prompt", call.prompt},
            {"n", call.n},
            {"temperature", call.temperature},
            {"top_p", call.top_p},
            {"max_tokens", call.max_tokens},
            {"logprobs", 0},
            {"return_token_ids", true}};
  if (call.seed)
    body["seed"] = *call.seed;
  if (!call.stop.empty())
    body["stop"] = call.stop;
  auto i = impl_;
  auto text = dump_lossy(body);
  net::post(i->io, [i, text = std::move(text), done = std::move(done)]() mutable {
    if (i->tls)
      i->launch<beast::ssl_stream<beast::tcp_stream>>(std::move(text), std::move(done));
    else
      i->launch<beast::tcp_stream>(std::move(text), std::move(done));
  });
}

} // namespace leap::serve
