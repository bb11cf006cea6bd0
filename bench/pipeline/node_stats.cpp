#include "bench/pipeline/node_stats.hpp"

#include "common/host_port.hpp"
#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>

namespace leap::bench {

std::vector<node_figures> ask_nodes(const std::vector<std::string>& nodes,
                                    const config::cluster_section& c) {
  std::vector<node_figures> out;
  for (auto& n : nodes) {
    out.emplace_back();
    out.back().node = n;
  }
  if (nodes.empty())
    return out;
  caf::actor_system_config cfg;
  msg::register_message_types(cfg);
  if (auto r = runtime::configure_transport(cfg, c); !r) {
    for (auto& f : out)
      f.problem = r.message();
    return out;
  }
  caf::actor_system sys{cfg};
  auto connect = runtime::node_connector(sys, runtime::uses_tls(c));
  caf::scoped_actor self{sys};
  for (auto& f : out) {
    auto hp = parse_host_port(f.node);
    if (!hp) {
      f.problem = hp.message();
      continue;
    }
    auto node = connect(hp->host, hp->port);
    if (!node) {
      f.problem = node.message();
      continue;
    }
    self->request(*node, std::chrono::seconds(10), msg::stats_atom_v)
      .receive(
        [&](msg::node_stats& s) {
          f.compiles = s.compile.completed;
          f.executes = s.execute.completed;
          f.compile_cache_hits = s.compile.cache_hits;
        },
        [&](caf::error& e) { f.problem = msg::error_text(e, sys); });
  }
  return out;
}

} // namespace leap::bench
