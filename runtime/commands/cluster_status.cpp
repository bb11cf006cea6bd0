// `leap cluster status --head HOST:PORT [--json]`: asks a running head (its cluster.listen) how
// every node is doing: state, roles and capacity, jobs it holds, done, failed, losses and
// returns, version, the last connection problem. Uses the config's cluster.tls_* keys to
// connect. Main thread.
#include "common/host_port.hpp"
#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"
#include "runtime/commands/table.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int run_cluster_status(const command_context& ctx) {
  const auto& cfg = *ctx.cfg;
  auto head_text = ctx.args.opt("--head");
  if (!head_text)
    return usage_error("cluster status needs --head HOST:PORT (the head's cluster.listen)");
  auto addr = parse_host_port(*head_text);
  if (!addr)
    return usage_error("--head: " + addr.message());
  auto plain = check_plain_allowed(cfg.cluster, *addr, "--head");
  if (!plain)
    return usage_error(plain.message());
  caf::actor_system_config sys_cfg;
  msg::register_message_types(sys_cfg);
  if (auto r = configure_transport(sys_cfg, cfg.cluster); !r)
    return usage_error(r.message());
  caf::actor_system sys{sys_cfg};
  auto head = connect_head(sys, *addr, uses_tls(cfg.cluster));
  if (!head) {
    std::cerr << "leap: " << head.message() << "\n";
    return exit_failed;
  }
  caf::scoped_actor self{sys};
  std::optional<msg::cluster_status> st;
  std::string failure;
  self->request(*head, std::chrono::seconds(10), msg::stats_atom_v)
    .receive([&](msg::cluster_status& s) { st = std::move(s); },
             [&](caf::error& e) { failure = msg::error_text(e, sys); });
  if (!st) {
    std::cerr << "leap: the head at " << addr->text() << " did not answer: " << failure << "\n";
    return exit_failed;
  }
  if (ctx.args.has("--json")) {
    nlohmann::json nodes = nlohmann::json::array();
    for (auto& n : st->nodes)
      nodes.push_back({{"node", n.name},         {"state", msg::to_string(n.state)},
                       {"version", n.version},   {"compile_workers", n.compile_workers},
                       {"execute_workers", n.execute_workers},
                       {"busy", n.busy},         {"done", n.done},
                       {"failed", n.failed},     {"lost", n.lost},
                       {"rejoined", n.rejoined}, {"rerun", n.rerun},
                       {"rebuilt", n.rebuilt},   {"up_seconds", n.up_seconds},
                       {"problem", n.problem}});
    std::cout << nlohmann::json{{"head", addr->text()},
                                {"queued_compile", st->queued_compile},
                                {"queued_execute", st->queued_execute},
                                {"nodes", nodes}}
                   .dump()
              << "\n";
    return exit_ok;
  }
  std::printf("head %s: %zu node(s); waiting at the head: compile %u, execute %u\n",
              addr->text().c_str(), st->nodes.size(), st->queued_compile, st->queued_execute);
  std::printf("%-22s %-10s %7s %7s %5s %7s %6s %4s %8s %5s  %s\n", "node", "state", "compile",
              "execute", "busy", "done", "failed", "lost", "rejoined", "rerun", "version");
  for (auto& n : st->nodes) {
    std::printf("%-22s %-10s %7u %7u %5u %7llu %6llu %4llu %8llu %5llu  %s\n", n.name.c_str(),
                msg::to_string(n.state), n.compile_workers, n.execute_workers, n.busy,
                static_cast<unsigned long long>(n.done), static_cast<unsigned long long>(n.failed),
                static_cast<unsigned long long>(n.lost),
                static_cast<unsigned long long>(n.rejoined),
                static_cast<unsigned long long>(n.rerun), n.version.c_str());
    if (!n.problem.empty())
      std::printf("%-22s   last problem: %s\n", "", n.problem.c_str());
  }
  return exit_ok;
}

} // namespace

command cluster_status_command() {
  return {{"cluster", "status"},
          "--head HOST:PORT [--json]",
          "the nodes of a running head (its cluster.listen): state,\ncapacity, jobs, losses, "
          "versions",
          command::needs::config, false, false, run_cluster_status};
}

} // namespace leap::runtime
