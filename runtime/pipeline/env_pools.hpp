// The compile and execute pools of a command's actor system, local or spread over the cluster's
// nodes: with cluster.nodes empty, the supervised pools over the services' compiler and executor;
// otherwise the cluster dispatcher's facades (actors/cluster.hpp) over the listed nodes, plus the
// head's own pools as one more node for the roles in cluster.local_roles. Whoever holds the two
// handles cannot tell the difference. prepare_actor_system() before the actor system exists,
// spawn_env_pools() after; both on the command's main thread.
#pragma once

#include "actors/cluster.hpp"
#include "actors/pool_options.hpp"
#include "common/result.hpp"
#include "messages/interfaces.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace caf {
class actor_system;
class actor_system_config;
} // namespace caf

namespace leap::runtime {

// The cluster's latest status, written by the dispatcher at every heartbeat and read by a
// command from any thread (the step line, metrics.jsonl). Thread-safe.
class cluster_board {
public:
  void set(msg::cluster_status s);
  std::optional<msg::cluster_status> get() const;

private:
  mutable std::mutex mtx_;
  std::optional<msg::cluster_status> status_;
};

struct env_pools {
  msg::compiler_pool_actor compilers;
  msg::executor_pool_actor executors;
  msg::generator_pool_actor generators; // clustered with a policy: the cluster's (else null)
  msg::weights_sink_actor weights;      // clustered with a policy: fans out to the nodes
  std::optional<actors::cluster_actor> cluster; // set when the pools are the cluster's
  std::vector<caf::actor> parts;                // the head's own pools and node, if any

  void shutdown(); // ends every actor above (idempotent)
};

// Whether the environment's pools are the cluster's: nodes are listed or may join.
bool clustered(const config::cluster_section& c);

// Registers leap's message types and, when clustered, loads the transport.
result<void> prepare_actor_system(caf::actor_system_config& cfg, const config::leap_config& c);

// The policy whose sampling may be spread over nodes (role generate), as the head hands it over.
// The caller that owns the engine (runtime/pipeline/assembly.cpp) fills it, so that this file, and
// every command that only compiles and runs kernels (`leap check`), links no LibTorch.
struct local_generation {
  msg::generator_pool_actor generators;
  msg::weights_sink_actor weights;
  std::uint32_t slots = 0; // prompts the head's generators decode at once
};
struct policy_stage {
  // Spawns the head's own generator pool and weights sink (used when cluster.local_roles has
  // generate); empty when the head has no engine.
  std::function<local_generation(caf::actor_system&)> spawn_local;
  std::string checkpoint;    // the weights generating nodes start from
  std::uint64_t version = 0; // the engine's weights version when the pools are spawned
};

// `compile` and `execute` size the local pools (and their retries the cluster's). An error:
// the transport or the policy's checkpoint cannot be read.
result<env_pools> spawn_env_pools(caf::actor_system& sys, services& svc,
                                  const actors::pool_options& compile,
                                  const actors::pool_options& execute,
                                  std::shared_ptr<cluster_board> board = nullptr,
                                  const policy_stage* policy = nullptr);

// Before a clustered run starts (leap train, leap eval): waits, at most cluster.node_wait_seconds,
// until every role in `needed` is served by a node that is up (the head's own pools, from
// cluster.local_roles, count as node "local"). An error names the first role no one serves,
// every node with its state and last problem, and the keys to set (cluster.nodes,
// cluster.local_roles, node.roles). Blocking; on the command's main thread.
// The start of pipeline::spawn's error when await_roles refused: commands exit 2 on it.
inline constexpr const char* cannot_start_prefix = "the cluster cannot serve this run: ";
inline bool cluster_cannot_start(const std::string& message) {
  return message.rfind(cannot_start_prefix, 0) == 0;
}
result<void> await_roles(caf::actor_system& sys, const env_pools& pools,
                         const config::cluster_section& c,
                         const std::vector<config::node_role>& needed);

// The cluster's status, or an error when the pools are local or it does not answer.
result<msg::cluster_status> query_cluster(caf::actor_system& sys, const env_pools& pools);

} // namespace leap::runtime
