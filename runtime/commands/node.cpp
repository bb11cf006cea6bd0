// `leap node`: a worker process of a cluster (docs/cluster.md). It hosts the pools named by
// node.roles over this machine's compiler, executor and build cache, publishes its front actor
// (actors/node.hpp) on node.listen (plain TCP on loopback, else TLS from the cluster.tls_* keys),
// prints one ready line, and serves every head that connects, one after another. SIGTERM or
// SIGINT drains it: no new jobs, the running ones finish, then it exits. Main thread only.
#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/node.hpp"
#include "common/host_port.hpp"
#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/services.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

namespace leap::runtime {

namespace {

std::atomic<bool> g_node_stop{false};
void on_node_signal(int) { g_node_stop.store(true); }

void log_line(const std::string& line) {
  std::time_t t = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%H:%M:%S", std::localtime(&t));
  std::fprintf(stderr, "leap node %s: %s\n", ts, line.c_str());
  std::fflush(stderr);
}

int run_node(const command_context& ctx) {
  auto& svc = *ctx.svc;
  auto cfg = svc.cfg;
  std::string listen_key = "node.listen";
  if (auto l = ctx.args.opt("--listen")) {
    cfg.node.listen = *l;
    listen_key = "--listen";
  }
  auto addr = parse_host_port(cfg.node.listen);
  if (!addr)
    return usage_error(listen_key + ": " + addr.message());
  auto plain = check_plain_allowed(cfg.cluster, *addr, listen_key);
  if (!plain)
    return usage_error(plain.message());
  if (!plain->empty())
    log_line(*plain);
  if (cfg.node.roles.empty())
    return usage_error("node.roles is empty: a node hosts compile, execute or both");

  caf::actor_system_config sys_cfg;
  msg::register_message_types(sys_cfg);
  if (auto r = configure_transport(sys_cfg, cfg.cluster); !r)
    return usage_error(r.message());
  caf::actor_system sys{sys_cfg};

  auto has = [&](config::node_role r) {
    return std::find(cfg.node.roles.begin(), cfg.node.roles.end(), r) != cfg.node.roles.end();
  };
  actors::node_options no;
  no.info.identity = msg::this_build_identity();
  no.info.backend = svc.backend;
  no.cache_dir = svc.cache_dir;
  no.log = log_line;
  auto compile = compiler_pool_of(cfg);
  auto execute = executor_pool_of(cfg);
  if (has(config::node_role::compile)) {
    no.compilers = actors::spawn_compiler_pool(sys, compile, svc.compiler, svc.tasks);
    no.info.compile_workers = static_cast<std::uint32_t>(compile.workers);
  }
  if (has(config::node_role::execute)) {
    no.executors = actors::spawn_executor_pool(sys, execute, svc.executor, svc.tasks,
                                               svc.cache_dir);
    no.info.execute_workers = static_cast<std::uint32_t>(execute.workers);
  }
  auto compilers = no.compilers;
  auto executors = no.executors;
  auto shutdown = [&](const auto& node) {
    for (auto h : {caf::actor_cast<caf::actor>(node), caf::actor_cast<caf::actor>(compilers),
                   caf::actor_cast<caf::actor>(executors)})
      if (h)
        caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  };
  // The node names itself by the address it listens on, so the port is fixed first (port 0:
  // one the kernel says is free now).
  bool tls = uses_tls(cfg.cluster);
  if (addr->port == 0) {
    auto p = free_port(addr->host);
    if (!p) {
      std::fprintf(stderr, "leap node: %s\n", p.message().c_str());
      return exit_failed;
    }
    addr->port = *p;
  }
  no.info.name = addr->text();
  auto node = actors::spawn_node(sys, no);
  if (auto port = publish_node(sys, node, *addr, tls); !port) {
    shutdown(node);
    std::fprintf(stderr, "leap node: %s\n", port.message().c_str());
    return exit_failed;
  }
  std::printf("node ready on %s: compile %u, execute %u (backend %s, %s, messages %s)\n",
              addr->text().c_str(), no.info.compile_workers, no.info.execute_workers,
              env::to_string(svc.backend), tls ? "TLS" : "plain TCP",
              no.info.identity.messages.c_str());
  std::fflush(stdout);

  g_node_stop.store(false);
  auto old_int = std::signal(SIGINT, on_node_signal);
  auto old_term = std::signal(SIGTERM, on_node_signal);
  while (!g_node_stop.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  caf::scoped_actor self{sys};
  std::uint64_t done = 0;
  auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(
    (cfg.compiler.timeout_seconds + cfg.executor.timeout_seconds * 2) * 4 + 60));
  self->request(node, limit, msg::drain_atom_v)
    .receive([&](std::uint64_t n) { done = n; },
             [&](caf::error& e) { log_line("drain: " + msg::error_text(e, sys)); });
  log_line("stopped after " + std::to_string(done) + " job(s)");
  shutdown(node);
  return exit_ok;
}

} // namespace

command node_command() {
  return {{"node"},
          "[--listen HOST:PORT]",
          "run a cluster worker node: compile and execute jobs for a head\n"
          "(node.roles, cluster.tls_*; docs/cluster.md); SIGTERM drains it",
          command::needs::services, true, false, run_node};
}

} // namespace leap::runtime
