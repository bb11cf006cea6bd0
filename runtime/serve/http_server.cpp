#include "runtime/serve/http_server.hpp"

#include "runtime/serve/http_server_impl.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <future>
#include <mutex>
#include <set>

namespace leap::serve {

void declare_http_metrics(prom::registry& m) {
  m.declare("leap_http_requests_total", "HTTP requests answered, by route and status code.",
            prom::kind::counter);
  m.declare("leap_http_request_seconds", "Time from a request read to its answer written.",
            prom::kind::histogram,
            {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300});
  m.declare("leap_http_connections", "Open HTTP connections.", prom::kind::gauge);
  m.declare("leap_http_closed_total",
            "Connections leap closed itself, by reason (timeout, over_limit, malformed, tls).",
            prom::kind::counter);
}

std::shared_ptr<body_stream> make_body_stream() { return std::make_shared<body_stream_handle>(); }

void http_server::impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](boost::system::error_code ec,
                                                      tcp::socket sock) {
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open())
        return;
      return accept(); // e.g. out of descriptors for a moment: keep serving the rest
    }
    bool reject = conns->open.load() >= opts.max_connections;
    start_session(this, reject, std::move(sock));
    accept();
  });
}

http_server::http_server(passkey<http_server>, std::shared_ptr<impl> i) : impl_(std::move(i)) {}

http_server::~http_server() { stop(); }

result<std::unique_ptr<http_server>> http_server::start(http_server_options opts,
                                                        handler_fn handler) {
  auto sp = std::make_shared<impl>();
  auto& I = *sp;
  I.opts = std::move(opts);
  I.handler = std::move(handler);
  I.conns->metrics = I.opts.metrics;
  if (!I.opts.tls_cert.empty()) {
    I.tls.emplace(ssl::context::tls_server);
    I.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                       | ssl::context::no_sslv3 | ssl::context::no_tlsv1
                       | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    boost::system::error_code ec;
    I.tls->use_certificate_chain_file(I.opts.tls_cert, ec);
    if (ec)
      return make_error("serve.tls_cert: cannot use '" + I.opts.tls_cert + "': " + ec.message());
    I.tls->use_private_key_file(I.opts.tls_key, ssl::context::pem, ec);
    if (ec)
      return make_error("serve.tls_key: cannot use '" + I.opts.tls_key + "': " + ec.message());
  }
  const auto where = I.opts.listen.text();
  boost::system::error_code ec;
  tcp::resolver resolver(I.ioc);
  auto found = resolver.resolve(I.opts.listen.host, std::to_string(I.opts.listen.port),
                                tcp::resolver::passive, ec);
  if (ec || found.empty())
    return make_error("serve.listen: cannot resolve '" + where + "': " + ec.message());
  tcp::endpoint ep = found.begin()->endpoint();
  I.acceptor.open(ep.protocol(), ec);
  if (!ec)
    I.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    I.acceptor.bind(ep, ec);
  if (!ec)
    I.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error("serve.listen: cannot listen on " + where + ": " + ec.message());
  I.port = I.acceptor.local_endpoint().port();
  I.accept();
  I.work.emplace(net::make_work_guard(I.ioc));
  for (int t = 0; t < std::max(1, I.opts.threads); ++t)
    I.threads.emplace_back([p = sp.get()] { p->ioc.run(); });
  return std::make_unique<http_server>(passkey<http_server>(), std::move(sp));
}

std::uint16_t http_server::port() const { return impl_->port; }

bool http_server::tls() const { return impl_->tls.has_value(); }

std::size_t http_server::in_flight() const { return impl_->in_flight.load(); }

void http_server::stop_accepting() {
  impl_->draining.store(true);
  std::promise<void> done;
  net::post(impl_->acceptor.get_executor(), [this, &done] {
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
    done.set_value();
  });
  done.get_future().wait_for(std::chrono::seconds(5));
}

void http_server::stop() {
  if (!impl_ || impl_->stopped.exchange(true))
    return;
  impl_->draining.store(true);
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    if (t.joinable())
      t.join();
  // Sessions still waiting on a producer end now, while the io_context their sockets use exists.
  std::set<std::shared_ptr<void>> streaming;
  {
    std::lock_guard<std::mutex> lk(impl_->streaming_mtx);
    streaming.swap(impl_->streaming);
  }
}

} // namespace leap::serve
