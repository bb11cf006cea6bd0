// `leap node`: a worker process of a cluster (docs/cluster.md). It hosts the pools named by
// node.roles over this machine's compiler, executor and build cache, publishes its front actor
// (actors/node.hpp) on node.listen (plain TCP on loopback, else TLS from the cluster.tls_* keys),
// prints one ready line, and serves every head that connects, one after another. SIGTERM or
// SIGINT drains it: no new jobs, the running ones finish, then it exits. Main thread only.
#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/generator_pool.hpp"
#include "actors/node.hpp"
#include "common/host_port.hpp"
#include "policy/generation_engine.hpp"
#include "policy/policy_model.hpp"
#include "runtime/cluster/node_host.hpp"
#include "runtime/cluster/transport.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/services.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <algorithm>
#include <cstdio>

namespace leap::runtime {

namespace {

void log_line(const std::string& line) { node_log_line("leap node", line); }

// The address an option gives (`--flag`, else the config key's value), checked: HOST:PORT, and
// plain TCP only where allowed (a warning is logged when insecure). An error names where it
// came from.
result<host_port> checked_address(const command_context& ctx, const config::leap_config& cfg,
                                  const std::string& flag, const std::string& key,
                                  const std::string& configured) {
  auto given = ctx.args.opt(flag);
  const std::string& where = given ? flag : key;
  auto addr = parse_host_port(given ? *given : configured);
  if (!addr)
    return make_error(where + ": " + addr.message());
  auto plain = check_plain_allowed(cfg.cluster, *addr, where);
  if (!plain)
    return plain.err();
  if (*plain)
    log_line(**plain);
  return addr;
}

int run_node(const command_context& ctx) {
  auto& svc = *ctx.svc;
  auto cfg = svc.cfg;
  auto addr = checked_address(ctx, cfg, "--listen", "node.listen", cfg.node.listen);
  if (!addr)
    return usage_error(addr.message());
  if (cfg.node.roles.empty())
    return usage_error("node.roles is empty: a node hosts compile, execute, generate or several");

  caf::actor_system_config sys_cfg;
  msg::register_message_types(sys_cfg);
  configure_node_scheduler(sys_cfg);
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
  // A build is there when it verifies (a damaged one is removed and built again).
  no.holds_build = [c = svc.compiler](const std::string& key) { return c->cache().has_worker(key); };
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
  std::shared_ptr<policy::generation_engine> engine;
  if (has(config::node_role::generate)) {
    if (cfg.node.checkpoint.empty())
      return usage_error("node.roles has generate: set node.checkpoint to a checkpoint directory "
                         "of the head's policy architecture (e.g. a copy of its warm start)");
    // One compute thread per replica, as in `leap train` (the node also forks compile and
    // execute children; OpenBLAS threads and fork do not mix).
    policy::set_torch_threads(1);
    auto e = policy::generation_engine::create(cfg.node.checkpoint, cfg.train.generators, 0);
    if (!e)
      return usage_error("node.checkpoint: " + e.message());
    engine = std::move(*e);
    actors::pool_options gen;
    gen.retries = cfg.compiler.retries;
    no.generators = actors::spawn_generator_pool(sys, gen, engine);
    no.weights = actors::spawn_weights_sink(sys, engine);
    no.info.generate_slots =
      static_cast<std::uint32_t>(engine->workers() * policy::max_batch_prompts);
  }
  node_host_options ho;
  ho.listen = *addr;
  if (ctx.args.opt("--join") || !cfg.node.join.empty()) {
    auto j = checked_address(ctx, cfg, "--join", "node.join", cfg.node.join);
    if (!j)
      return usage_error(j.message());
    ho.join = *j;
  }
  ho.tls = uses_tls(cfg.cluster);
  ho.log = log_line;
  ho.drain_limit = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>((cfg.compiler.timeout_seconds + cfg.executor.timeout_seconds * 2)
                                    * (1 + std::max(cfg.compiler.retries, cfg.executor.retries))
                                  + 60));
  std::string details = "compile " + std::to_string(no.info.compile_workers) + ", execute "
                        + std::to_string(no.info.execute_workers)
                        + (engine ? ", generate " + std::to_string(engine->workers())
                                      + " replica(s)"
                                  : std::string())
                        + " (backend "
                        + env::to_string(svc.backend) + ", " + (ho.tls ? "TLS" : "plain TCP")
                        + ", messages " + no.info.identity.messages + ")";
  int rc = host_node_until_signal(
    sys, ho,
    [&](const std::string& name) {
      no.info.name = name;
      return actors::spawn_node(sys, no);
    },
    details);
  for (auto h : {caf::actor_cast<caf::actor>(no.compilers), caf::actor_cast<caf::actor>(no.executors),
                 caf::actor_cast<caf::actor>(no.generators), caf::actor_cast<caf::actor>(no.weights)})
    if (h)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  return rc == 0 ? exit_ok : exit_failed;
}

} // namespace

command node_command() {
  return {{"node"},
          "[--listen HOST:PORT] [--join HEAD:PORT]",
          "run a cluster worker node: compile and execute jobs for a head\n"
          "and generator replicas (node.roles, node.checkpoint,\ncluster.tls_*; docs/cluster.md); "
          "SIGTERM drains it",
          command::needs::services, true, false, run_node};
}

} // namespace leap::runtime
