// Hosting a node in this process until a signal: publish its front actor on an address (plain
// TCP or TLS), print the ready line, wait for SIGTERM or SIGINT, drain (no new jobs, the running
// ones finish, until drain_limit; then they are cancelled), log the job count; with `join`, keep asking that head to use it. Shared by `leap node` and `leap bench node` (whose pools are
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
class actor_system_config;
}

namespace leap::runtime {

struct node_host_options {
  host_port listen;                 // port 0: a free one, fixed before the node is named
  bool tls = false;
  std::string what = "node";        // the ready line's first word(s)
  // The drain's deadline: past it, the jobs still running are cancelled (their processes
  // killed) and the node stops anyway.
  std::chrono::milliseconds drain_limit{std::chrono::minutes(10)};
  // After "stopped", the most the actor system's shutdown may take before the process ends
  // itself (exit code 1), so a node that says it stopped has exited.
  std::chrono::milliseconds exit_grace{std::chrono::seconds(30)};
  std::function<void(const std::string&)> log;
  std::optional<host_port> join;    // a head's cluster.listen: ask it to use this node, again
                                    // every few seconds (a later or restarted head finds it)
};

// `spawn(name)` makes the node's front actor under its HOST:PORT name. Returns the exit code
// (0 after a drain, 1 when it cannot listen or the drain deadline passed).
int host_node_until_signal(caf::actor_system& sys, node_host_options opts,
                           const std::function<msg::node_actor(const std::string&)>& spawn,
                           const std::string& ready_details);

// Settings of a node's actor system, before it is made: a node idles between heads (for hours,
// on a cluster), so CAF's idle scheduler threads look for work to steal every 100 ms instead of
// every 10 ms, and poll 50 times 50 us instead of 500 times after each message before they
// sleep (with 4 threads, CAF's minimum, that was 0.6-1.6% of a core at rest on the 2-core
// machine, and 6% in the seconds after 8 heads left, as their heartbeats' timeouts fired). A
// message sent to the node still wakes a sleeping thread at once.
void configure_node_scheduler(caf::actor_system_config& cfg);

// "HH:MM:SS" prefixed log line on stderr, flushed (a node's log).
void node_log_line(const std::string& prefix, const std::string& line);

} // namespace leap::runtime
