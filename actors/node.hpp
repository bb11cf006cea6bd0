// A worker node's front actor (docs/cluster.md): what a head talks to, over CAF's middleman or
// in the head's own process (cluster.local_roles). It checks the head's build identity on
// hello, hands compile and execute jobs to the node's own supervised pools (which retry their
// infrastructure failures), answers an execute whose builds it does not hold with their keys
// instead of running it, hands the head's weights updates to its generator replicas, reports its pools' statistics as the heartbeat, and on drain takes no
// new jobs and answers once the running ones are done. Job ids are the head's. Spawned by
// `leap node` and by the head's cluster setup (runtime/cluster/); `log` runs on the node's
// actor thread.
#pragma once

#include "messages/interfaces.hpp"

#include <chrono>
#include <functional>
#include <string>

namespace caf {
class actor_system;
}

namespace leap::actors {

struct node_options {
  msg::node_info info;                   // name, identity, backend, worker counts
  msg::compiler_pool_actor compilers;    // null: the node does not compile
  msg::executor_pool_actor executors;    // null: the node does not execute
  msg::generator_pool_actor generators;  // null: the node does not generate
  msg::weights_sink_actor weights;       // its generator replicas' sink (with generators)
  std::string cache_dir;                 // where its builds live (env::build_executable)
  // Optional: whether it holds a build (default: its worker file exists under cache_dir).
  // `leap bench node`'s latency models hold every build.
  std::function<bool(const std::string& key)> holds_build;
  std::chrono::milliseconds job_timeout{std::chrono::minutes(30)}; // a job in its own pools
  std::function<void(const std::string&)> log; // optional: hellos, refusals, drain
};

msg::node_actor spawn_node(caf::actor_system& sys, node_options opts);

} // namespace leap::actors
