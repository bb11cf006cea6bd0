#include "runtime/cluster/node_host.hpp"

#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <thread>

namespace leap::runtime {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }
} // namespace

void configure_node_scheduler(caf::actor_system_config& cfg) {
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(100)});
  cfg.set("work-stealing.moderate-poll-attempts", 50);
}

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
  // Joining: connect to the head's registration actor and say where this node listens; the
  // head connects back. Asked again every few seconds (harmless when known), so a head that
  // restarts finds the node again.
  std::optional<msg::head_actor> head;
  std::string join_state;
  auto try_join = [&] {
    auto say = [&](const std::string& s) {
      if (s != join_state && opts.log)
        opts.log(s);
      join_state = s;
    };
    if (!head) {
      auto h = connect_head(sys, *opts.join, opts.tls);
      if (!h) {
        say("join: " + h.message() + " (trying again)");
        return;
      }
      head = *h;
    }
    caf::scoped_actor self{sys};
    self->request(*head, std::chrono::seconds(5), msg::join_atom_v, addr.text())
      .receive([&](std::string&) { say("joined the head at " + opts.join->text()); },
               [&](caf::error& e) {
                 say("join: " + msg::error_text(e, sys) + " (trying again)");
                 head.reset();
               });
  };
  auto next_join = std::chrono::steady_clock::now();
  while (!g_stop.load()) {
    if (opts.join && std::chrono::steady_clock::now() >= next_join) {
      try_join();
      next_join = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  head.reset();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  caf::scoped_actor self{sys};
  std::optional<std::uint64_t> done;
  self->request(node, opts.drain_limit, msg::drain_atom_v)
    .receive([&](std::uint64_t n) { done = n; },
             [&](caf::error& e) {
               if (opts.log)
                 opts.log("drain: " + msg::error_text(e, sys) + " (deadline "
                          + std::to_string(opts.drain_limit.count() / 1000)
                          + " s): cancelling the jobs still running");
             });
  // The node goes; its caller then stops the pools, which kill the processes of jobs still
  // running. From here the process must end: should shutting the actor system down hang (a
  // thread that never returns), it is ended after `exit_grace`, so a node that said it stopped
  // is gone.
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  if (opts.log)
    opts.log(done ? "stopped after " + std::to_string(*done) + " job(s)"
                  : std::string("stopped (running jobs cancelled at the drain deadline)"));
  std::thread([grace = opts.exit_grace, log = opts.log] {
    std::this_thread::sleep_for(grace);
    if (log)
      log("still shutting down " + std::to_string(grace.count() / 1000)
          + " s after stopping: exiting now");
    std::_Exit(1);
  }).detach();
  return done ? 0 : 1;
}

} // namespace leap::runtime
