#include "runtime/cluster/node_host.hpp"

#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

namespace leap::runtime {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }
} // namespace

void node_log_line(const std::string& prefix, const std::string& line) {
  std::time_t t = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%H:%M:%S", std::localtime(&t));
  std::fprintf(stderr, "%s %s: %s\n", prefix.c_str(), ts, line.c_str());
  std::fflush(stderr);
}

int host_node_until_signal(caf::actor_system& sys, node_host_options opts,
                           const std::function<msg::node_actor(const std::string&)>& spawn,
                           const std::string& ready_details) {
  auto addr = opts.listen;
  if (addr.port == 0) {
    auto p = free_port(addr.host);
    if (!p) {
      std::fprintf(stderr, "leap %s: %s\n", opts.what.c_str(), p.message().c_str());
      return 1;
    }
    addr.port = *p;
  }
  auto node = spawn(addr.text());
  if (auto port = publish_node(sys, node, addr, opts.tls); !port) {
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    std::fprintf(stderr, "leap %s: %s\n", opts.what.c_str(), port.message().c_str());
    return 1;
  }
  std::printf("%s ready on %s: %s\n", opts.what.c_str(), addr.text().c_str(),
              ready_details.c_str());
  std::fflush(stdout);

  g_stop.store(false);
  auto old_int = std::signal(SIGINT, on_signal);
  auto old_term = std::signal(SIGTERM, on_signal);
  while (!g_stop.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  caf::scoped_actor self{sys};
  std::uint64_t done = 0;
  self->request(node, opts.drain_limit, msg::drain_atom_v)
    .receive([&](std::uint64_t n) { done = n; },
             [&](caf::error& e) {
               if (opts.log)
                 opts.log("drain: " + msg::error_text(e, sys));
             });
  if (opts.log)
    opts.log("stopped after " + std::to_string(done) + " job(s)");
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace leap::runtime
