// The head's side of a cluster (docs/cluster.md): one dispatcher actor that keeps the nodes
// (connects, checks their build identity, monitors them, heartbeats them, reconnects the lost
// ones) and sends them compile, execute and generate jobs; facades give the rest of the
// pipeline the ordinary compiler-, executor- and generator-pool and weights-sink interfaces, so
// the gatekeeper, the learner and the evaluator do not know whether their pools are local or
// spread over machines. Every weights update goes to every generating node (and to one that
// comes up later, the latest one), with its size and the time until the slowest node took it.
//
// Scheduling is credit-based: a node holds at most workers * (1 + queue_per_worker) jobs of a
// kind; the rest wait at the head (in request priority order, as in a local pool) and go to the
// node with the most free credit. An execute goes to
// a node that holds its builds (the one that compiled it); when none that holds them is up, any
// node with credit takes it, answers with the builds it lacks, and the head builds them there
// from the sources it remembers (the last `source_memory` builds) before sending the job again.
// When a node is lost (its CAF monitor fires, or it misses `heartbeat_misses` heartbeats), its
// jobs go back to the front of the queue, each at most `retries` more times (compiler.retries,
// executor.retries), then fail with an error naming the node, which the gatekeeper turns into an
// infrastructure drop. A node that comes back, or one that joins later, is used from then on.
//
// Spawned by the runtime's cluster setup (runtime/cluster/) on a non-actor thread; `connect`
// runs on a detached actor of its own (it may block), `log` on the dispatcher's thread.
#pragma once

#include "common/result.hpp"
#include "messages/interfaces.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace caf {
class actor_system;
}

namespace leap::actors {

struct cluster_options {
  std::vector<std::string> nodes;        // HOST:PORT, connected (and reconnected) by the head
  std::vector<msg::node_actor> local;    // the head's own pools as nodes (cluster.local_roles)
  msg::build_identity identity;          // ours, sent in every hello
  int queue_per_worker = 1;              // cluster.queue_per_worker
  double heartbeat_seconds = 1;          // cluster.heartbeat_seconds
  int heartbeat_misses = 3;              // then the node is lost
  int compile_retries = 1, exec_retries = 1;
  std::chrono::milliseconds job_timeout{std::chrono::minutes(30)}; // one job on a node
  std::size_t source_memory = 8192;      // builds whose sources are kept for rebuilding
  std::string work_dir;                  // where files a node kept for a job are written
  double node_wait_seconds = 60;         // a job that waits this long while no node of its
                                         // kind is up fails (naming every node's problem)
  // Blocking connect to HOST:PORT (plain middleman or TLS); an error says why not.
  std::function<result<msg::node_actor>(const std::string& host, std::uint16_t port)> connect;
  std::function<void(const std::string&)> log; // joins, losses, refusals
  // Optional: the cluster's status after every heartbeat (the step line, metrics.jsonl).
  std::function<void(const msg::cluster_status&)> on_status;
  // The policy generating nodes start from (the head's checkpoint); later versions come through
  // the weights facade. Optional: without it, nodes sample from their node.checkpoint.
  std::shared_ptr<const msg::weights_update> weights;
};

// The dispatcher's interface: the two pools' messages per kind, the cluster's status, and its
// own internal messages (tick: heartbeat and reconnects; connected: a connector's result), and
// (join, HOST:PORT) from a node that asks to be used.
using cluster_actor = caf::typed_actor<
  caf::replies_to<msg::compile_atom, msg::compile_request>::with<msg::compile_reply>,
  caf::replies_to<msg::exec_atom, msg::exec_request>::with<msg::exec_reply>,
  caf::reacts_to<msg::cancel_atom, msg::compile_atom, std::uint64_t>,
  caf::reacts_to<msg::cancel_atom, msg::exec_atom, std::uint64_t>,
  caf::replies_to<msg::stats_atom, msg::compile_atom>::with<msg::pool_stats>,
  caf::replies_to<msg::stats_atom, msg::exec_atom>::with<msg::pool_stats>,
  caf::replies_to<msg::generate_atom, msg::generate_request>::with<msg::generate_reply>,
  caf::reacts_to<msg::cancel_atom, msg::generate_atom, std::uint64_t>,
  caf::replies_to<msg::stats_atom, msg::generate_atom>::with<msg::pool_stats>,
  caf::reacts_to<msg::weights_atom, msg::weights_update>,
  caf::replies_to<msg::stats_atom>::with<msg::cluster_status>,
  caf::reacts_to<msg::tick_atom>,
  caf::reacts_to<msg::connected_atom, std::uint64_t, msg::node_actor>,
  caf::reacts_to<msg::connected_atom, std::uint64_t, std::string>,
  caf::replies_to<msg::join_atom, std::string>::with<std::string>>;

struct cluster_handles {
  cluster_actor dispatcher;
  msg::compiler_pool_actor compilers; // facades over the dispatcher
  msg::executor_pool_actor executors;
  msg::head_actor head;               // joins and status, for publishing on cluster.listen
  msg::generator_pool_actor generators;
  msg::weights_sink_actor weights;    // fans every update out to the generating nodes
};

cluster_handles spawn_cluster(caf::actor_system& sys, cluster_options opts);

} // namespace leap::actors
