// Messages between a head and its worker nodes (docs/cluster.md): the handshake, a node's
// capacity and statistics, and the answer of a node to an execute job. Nothing here names a
// local path: builds travel as content addresses (compile_reply::key), which every process
// resolves in its own build cache. Plain structs; include where CAF is used.
#pragma once

#include "messages/build_identity.hpp"
#include "messages/env_messages.hpp"
#include "messages/float_inspect.hpp"
#include "messages/train_messages.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace leap::msg {

// What a node offers, answered to the head's hello.
struct node_info {
  std::string name;                 // HOST:PORT it listens on (or "local" for the head's own)
  build_identity identity;
  env::backend backend = env::backend::cpu;
  std::uint32_t compile_workers = 0; // 0: the node does not compile
  std::uint32_t execute_workers = 0; // 0: the node does not execute
  std::uint32_t generate_slots = 0;  // 0: no generator replicas (else replicas x batch slots)
};

// A node's heartbeat answer.
struct node_stats {
  node_info info;
  pool_stats compile, execute, generate;
  bool draining = false;             // SIGTERM: finishing its jobs, taking no new ones
  double uptime_seconds = 0;
};

// A node's answer to an execute job: the run, or the builds it does not hold (then nothing
// ran; the head builds them there from the sources it remembers and sends the job again). With
// dump_inputs, the files the run kept (inputs.bin, outputs.bin) travel as bytes: the head
// writes them into a directory of its own and names that in rep.kept_dir.
struct node_exec_reply {
  exec_reply rep;
  std::vector<std::string> missing_builds;
  std::map<std::string, std::string> kept_files; // file name -> contents
};

// How the head sees a node.
enum class node_state : std::uint8_t {
  connecting, // listed, not (yet, or again) reachable
  up,         // connected and accepted: jobs go to it
  lost,       // was up; its monitor fired or it missed its heartbeats
  refused     // answered, but is a different leap build (or refused us)
};
inline const char* to_string(node_state s) {
  switch (s) {
    case node_state::connecting: return "connecting";
    case node_state::up: return "up";
    case node_state::lost: return "lost";
    case node_state::refused: return "refused";
  }
  return "?";
}
inline detail::checked_enum<node_state> enum_field(node_state& x) {
  return {x, "leap_node_state", node_state::refused};
}

// One node in the head's view (`leap cluster status`, the step line, metrics.jsonl).
struct node_row {
  std::string name;
  node_state state = node_state::connecting;
  std::string version;
  std::uint32_t compile_workers = 0, execute_workers = 0, generate_slots = 0;
  std::uint32_t busy = 0;          // jobs the head has on it now
  std::uint64_t done = 0;          // jobs it answered
  std::uint64_t failed = 0;        // jobs it failed (after its own retries)
  std::uint64_t lost = 0;          // times it was lost
  std::uint64_t rejoined = 0;      // times it came back
  std::uint64_t rerun = 0;         // jobs taken off it when it was lost and sent elsewhere
  std::uint64_t rebuilt = 0;       // builds made again on it for an execute
  double busy_seconds = 0;         // sum over jobs of their time on it
  double up_seconds = 0;           // time it has been up
  std::string problem;             // the last connection problem, if any
};

struct cluster_status {
  std::vector<node_row> nodes;
  std::uint32_t queued_compile = 0, queued_execute = 0, queued_generate = 0; // at the head
  // The learner's last weights update sent to the generating nodes: its version, its size, and
  // the time from sending it until the slowest node had handed it to its replicas.
  std::int64_t weights_version = -1;
  std::uint64_t weights_bytes = 0;
  double weights_ms = 0;
  std::uint32_t weights_nodes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_row& x) {
  return f(caf::meta::type_name("leap_node_row"), x.name, enum_field(x.state), x.version,
           x.compile_workers, x.execute_workers, x.generate_slots, x.busy, x.done, x.failed, x.lost, x.rejoined,
           x.rerun, x.rebuilt, float_field(x.busy_seconds), float_field(x.up_seconds), x.problem);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_status& x) {
  return f(caf::meta::type_name("leap_cluster_status"), x.nodes, x.queued_compile,
           x.queued_execute, x.queued_generate, x.weights_version, x.weights_bytes, float_field(x.weights_ms),
           x.weights_nodes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(caf::meta::type_name("leap_node_info"), x.name, x.identity, enum_field(x.backend),
           x.compile_workers, x.execute_workers, x.generate_slots);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_stats& x) {
  return f(caf::meta::type_name("leap_node_stats"), x.info, x.compile, x.execute, x.generate,
           x.draining,
           float_field(x.uptime_seconds));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_exec_reply& x) {
  return f(caf::meta::type_name("leap_node_exec_reply"), x.rep, x.missing_builds, x.kept_files);
}

} // namespace leap::msg
