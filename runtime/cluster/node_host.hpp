// Hosting a node in this process until a signal: publish its front actor on an address (plain
// TCP or TLS), print the ready line, wait for SIGTERM or SIGINT, drain (no new jobs, the running
// ones finish), log the job count; with `join`, keep asking that head to use it. Shared by `leap node` and `leap bench node` (whose pools are
// latency models). The command's main thread; the actor system must have the transport loaded
// (configure_transport).
#pragma once

#include "common/host_port.hpp"
#include "messages/interfaces.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace caf {
class actor_system;
}

namespace leap::runtime {

struct node_host_options {
  host_port listen;                 // port 0: a free one, fixed before the node is named
  bool tls = false;
  std::string what = "node";        // the ready line's first word(s)
  std::chrono::milliseconds drain_limit{std::chrono::minutes(10)};
  std::function<void(const std::string&)> log;
  std::optional<host_port> join;    // a head's cluster.listen: ask it to use this node, again
                                    // every few seconds (a later or restarted head finds it)
};

// `spawn(name)` makes the node's front actor under its HOST:PORT name. Returns the exit code
// (0 after a drain, 1 when it cannot listen).
int host_node_until_signal(caf::actor_system& sys, node_host_options opts,
                           const std::function<msg::node_actor(const std::string&)>& spawn,
                           const std::string& ready_details);

// "HH:MM:SS" prefixed log line on stderr, flushed (a node's log).
void node_log_line(const std::string& prefix, const std::string& line);

} // namespace leap::runtime
