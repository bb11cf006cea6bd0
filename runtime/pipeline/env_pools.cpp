#include "runtime/pipeline/env_pools.hpp"

#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "common/fs.hpp"
#include "actors/node.hpp"
#include "common/host_port.hpp"
#include "messages/error_text.hpp"
#include "runtime/cluster/transport.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>

namespace leap::runtime {

void cluster_board::set(msg::cluster_status s) {
  std::lock_guard<std::mutex> lk(mtx_);
  status_ = std::move(s);
}

std::optional<msg::cluster_status> cluster_board::get() const {
  std::lock_guard<std::mutex> lk(mtx_);
  return status_;
}

void env_pools::shutdown() {
  auto down = [](const auto& h) {
    if (h)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  };
  down(compilers);
  down(executors);
  down(generators);
  down(weights);
  if (cluster)
    down(*cluster);
  for (auto& p : parts)
    down(p);
  compilers = nullptr;
  executors = nullptr;
  generators = nullptr;
  weights = nullptr;
  cluster.reset();
  parts.clear();
}

bool clustered(const config::cluster_section& c) { return !c.nodes.empty() || !c.listen.empty(); }

result<void> prepare_actor_system(caf::actor_system_config& cfg, const config::leap_config& c) {
  msg::register_message_types(cfg);
  if (!clustered(c.cluster))
    return {};
  auto addrs = c.cluster.nodes;
  if (!c.cluster.listen.empty())
    addrs.push_back(c.cluster.listen);
  for (const auto& n : addrs) {
    const char* key = n == c.cluster.listen ? "cluster.listen" : "cluster.nodes";
    auto hp = parse_host_port(n);
    if (!hp)
      return make_error(std::string(key) + ": " + hp.message());
    auto plain = check_plain_allowed(c.cluster, *hp, key);
    if (!plain)
      return plain.err();
    if (*plain)
      std::fprintf(stderr, "leap: %s\n", (*plain)->c_str());
  }
  return configure_transport(cfg, c.cluster);
}

result<env_pools> spawn_env_pools(caf::actor_system& sys, services& svc,
                                  const actors::pool_options& compile,
                                  const actors::pool_options& execute,
                                  std::shared_ptr<cluster_board> board,
                                  const policy_stage* policy) {
  env_pools out;
  const auto& c = svc.cfg.cluster;
  auto local_compilers = [&] {
    return actors::spawn_compiler_pool(sys, compile, svc.compiler, svc.tasks);
  };
  auto local_executors = [&] {
    return actors::spawn_executor_pool(sys, execute, svc.executor, svc.tasks, svc.cache_dir);
  };
  if (!clustered(c)) {
    out.compilers = local_compilers();
    out.executors = local_executors();
    return out;
  }
  actors::cluster_options co;
  co.nodes = c.nodes;
  co.identity = msg::this_build_identity();
  co.queue_per_worker = c.queue_per_worker;
  co.heartbeat_seconds = c.heartbeat_seconds;
  co.heartbeat_misses = c.heartbeat_misses;
  co.node_wait_seconds = c.node_wait_seconds;
  co.work_dir = svc.work_dir;
  co.compile_retries = compile.retries;
  co.exec_retries = execute.retries;
  co.connect = node_connector(sys, uses_tls(c));
  co.log = [](const std::string& line) { std::fprintf(stderr, "leap: cluster: %s\n", line.c_str()); };
  if (board)
    co.on_status = [board](const msg::cluster_status& s) { board->set(s); };
  auto has = [&](config::node_role r) {
    return std::find(c.local_roles.begin(), c.local_roles.end(), r) != c.local_roles.end();
  };
  if (!c.local_roles.empty()) {
    actors::node_options no;
    no.info.name = "local";
    no.info.identity = co.identity;
    no.info.backend = svc.backend;
    no.cache_dir = svc.cache_dir;
    // A build is there when it verifies (a damaged one is removed and built again).
    no.holds_build = [c = svc.compiler](const std::string& key) { return c->cache().has_worker(key); };
    if (has(config::node_role::compile)) {
      no.compilers = local_compilers();
      no.info.compile_workers = static_cast<std::uint32_t>(compile.workers);
      out.parts.push_back(caf::actor_cast<caf::actor>(no.compilers));
    }
    if (has(config::node_role::execute)) {
      no.executors = local_executors();
      no.info.execute_workers = static_cast<std::uint32_t>(execute.workers);
      out.parts.push_back(caf::actor_cast<caf::actor>(no.executors));
    }
    if (has(config::node_role::generate) && policy && policy->spawn_local) {
      auto g = policy->spawn_local(sys);
      no.generators = g.generators;
      no.weights = g.weights;
      no.info.generate_slots = g.slots;
      out.parts.push_back(caf::actor_cast<caf::actor>(no.generators));
      out.parts.push_back(caf::actor_cast<caf::actor>(no.weights));
    }
    auto node = actors::spawn_node(sys, std::move(no));
    out.parts.push_back(caf::actor_cast<caf::actor>(node));
    co.local.push_back(node);
  }
  if (policy && !policy->checkpoint.empty()) {
    // Generating nodes start from the head's policy, whatever their node.checkpoint holds.
    auto image = read_file(policy->checkpoint + "/model.safetensors");
    if (!image)
      return make_error("the policy's weights for the generating nodes: " + image.message());
    auto w = std::make_shared<msg::weights_update>();
    w->version = policy->version;
    w->safetensors = std::move(*image);
    co.weights = std::move(w);
  }
  auto h = actors::spawn_cluster(sys, std::move(co));
  out.compilers = h.compilers;
  out.executors = h.executors;
  out.cluster = h.dispatcher;
  out.parts.push_back(caf::actor_cast<caf::actor>(h.head));
  // The facades are linked to the dispatcher; held here until shutdown.
  out.parts.push_back(caf::actor_cast<caf::actor>(h.generators));
  out.parts.push_back(caf::actor_cast<caf::actor>(h.weights));
  if (policy) {
    out.generators = h.generators;
    out.weights = h.weights;
  }
  if (!c.listen.empty()) {
    auto addr = parse_host_port(c.listen);
    auto port = addr ? publish_head(sys, h.head, *addr, uses_tls(c)) : result<std::uint16_t>(addr.err());
    if (!port) {
      out.shutdown();
      return make_error("cluster.listen: " + port.message());
    }
    std::fprintf(stderr, "leap: cluster: nodes may join at %s:%u (leap node --join)\n",
                 addr->host.c_str(), *port);
  }
  return out;
}

result<msg::cluster_status> query_cluster(caf::actor_system& sys, const env_pools& pools) {
  if (!pools.cluster)
    return make_error("no cluster: cluster.nodes is empty");
  caf::scoped_actor self{sys};
  result<msg::cluster_status> out = make_error("the cluster dispatcher did not answer");
  self->request(*pools.cluster, std::chrono::seconds(10), msg::stats_atom_v)
    .receive([&](msg::cluster_status& s) { out = std::move(s); },
             [&](caf::error& e) { out = make_error(msg::error_text(e, sys)); });
  return out;
}

result<void> await_roles(caf::actor_system& sys, const env_pools& pools,
                         const config::cluster_section& c,
                         const std::vector<config::node_role>& needed) {
  if (!pools.cluster || needed.empty())
    return {};
  auto role_name = [](config::node_role r) {
    switch (r) {
      case config::node_role::compile: return "compile";
      case config::node_role::execute: return "execute";
      case config::node_role::generate: return "generate";
    }
    return "?";
  };
  auto serves = [](const msg::node_row& n, config::node_role r) {
    if (n.state != msg::node_state::up)
      return false;
    switch (r) {
      case config::node_role::compile: return n.compile_workers > 0;
      case config::node_role::execute: return n.execute_workers > 0;
      case config::node_role::generate: return n.generate_slots > 0;
    }
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now()
                        + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(c.node_wait_seconds));
  for (;;) {
    auto st = query_cluster(sys, pools);
    if (!st)
      return st.err();
    const config::node_role* missing = nullptr;
    for (const auto& r : needed) {
      bool ok = std::any_of(st->nodes.begin(), st->nodes.end(),
                            [&](const msg::node_row& n) { return serves(n, r); });
      if (!ok) {
        missing = &r;
        break;
      }
    }
    if (!missing)
      return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string nodes;
      for (const auto& n : st->nodes) {
        nodes += (nodes.empty() ? "" : "; ") + n.name + " " + to_string(n.state);
        if (n.state == msg::node_state::up)
          nodes += " (compile " + std::to_string(n.compile_workers) + ", execute "
                   + std::to_string(n.execute_workers) + ", generate "
                   + std::to_string(n.generate_slots) + ")";
        if (!n.problem.empty())
          nodes += ": " + n.problem;
      }
      if (nodes.empty())
        nodes = "none (no node listed, none joined)";
      char waited[32];
      std::snprintf(waited, sizeof waited, "%g", c.node_wait_seconds);
      return make_error(std::string("no node serves the role '") + role_name(*missing)
                        + "' after waiting " + waited + " s (cluster.node_wait_seconds), so the "
                        "run does not start. Nodes: " + nodes + ". List a node that serves it in "
                        "cluster.nodes (its node.roles must include " + role_name(*missing)
                        + "), start the listed nodes, or add " + role_name(*missing)
                        + " to cluster.local_roles to run it in this process");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

} // namespace leap::runtime
