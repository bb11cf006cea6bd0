// The cluster dispatcher's state (actors/cluster.hpp), shared by its files: cluster.cpp (the
// dispatcher's behaviour, taking requests, the facades), cluster_jobs.cpp (a job's life: which
// node takes it, sending it, its reply or error, retries, cancel, the queue's expiry) and
// cluster_nodes.cpp (a node's life: connect, hello and identity check, heartbeats, loss, weights
// updates, the status rows). Internal: only actors/cluster*.cpp include it; everything in it runs
// on the dispatcher actor's thread.
#pragma once

#include "actors/cluster.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <type_traits>
#include <variant>
#include <vector>

namespace leap::actors::cluster_detail {

using clock = std::chrono::steady_clock;
enum kind : int { compile_kind = 0, execute_kind = 1, generate_kind = 2 };
constexpr int kinds = 3;

struct node_slot {
  std::string host;
  std::uint16_t port = 0;
  bool local = false;
  msg::node_actor handle;
  msg::node_info info;
  std::uint64_t epoch = 0;  // bumps when it comes up or is lost: older replies are ignored
  bool connecting = false;  // a connector is under way
  bool hello_pending = false;
  bool heartbeat_pending = false;
  int missed = 0;
  bool draining = false;
  std::uint32_t in[kinds] = {0, 0, 0};
  std::unordered_set<std::string> builds; // keys built there since it came up
  clock::time_point up_since;
  double up_before = 0; // seconds up in earlier connections
  msg::node_row row;

  std::uint32_t workers(int k) const {
    return k == compile_kind   ? info.compile_workers
           : k == execute_kind ? info.execute_workers
                               : info.generate_slots;
  }
};

// One kind of work: the request as the requester sent it, and the promise of its reply.
template <class Request, class Reply>
struct work {
  Request req;
  caf::typed_response_promise<Reply> rp;
};
using compile_work = work<msg::compile_request, msg::compile_reply>;
using exec_work = work<msg::exec_request, msg::exec_reply>;
using generate_work = work<msg::generate_request, msg::generate_reply>;
// The alternatives stand in the order of `kind`, so a job's kind is its work's index.
using any_work = std::variant<compile_work, exec_work, generate_work>;
static_assert(std::is_same_v<std::variant_alternative_t<compile_kind, any_work>, compile_work>
              && std::is_same_v<std::variant_alternative_t<execute_kind, any_work>, exec_work>
              && std::is_same_v<std::variant_alternative_t<generate_kind, any_work>, generate_work>);

struct job {
  any_work w;
  int k() const { return static_cast<int>(w.index()); }
  template <class Work>
  Work& as() { return std::get<Work>(w); }
  template <class Work>
  const Work& as() const { return std::get<Work>(w); }
  std::uint64_t id = 0;      // the dispatcher's (what nodes see)
  std::uint64_t gate_id = 0; // the requester's
  int tries = 0;
  bool cancelled = false;
  std::optional<std::size_t> node;
  std::uint64_t epoch = 0;
  clock::time_point sent;
  clock::time_point queued = clock::now();
  int rebuild_rounds = 0;
};

struct cluster_state {
  cluster_options opts;
  std::vector<node_slot> nodes;
  std::map<std::uint64_t, std::shared_ptr<job>> jobs; // queued and running, by dispatcher id
  std::deque<std::uint64_t> queue[kinds];
  std::map<std::uint64_t, std::uint64_t> by_gate[kinds]; // requester id -> dispatcher id
  std::unordered_map<std::string, msg::compile_request> memo; // build key -> how to build it
  std::deque<std::string> memo_order;
  msg::pool_stats stats[kinds];
  std::uint64_t next_id = 1;
  std::shared_ptr<const msg::weights_update> weights; // the latest version, for new nodes
  std::int64_t weights_version = -1;
  std::uint64_t weights_bytes = 0;
  double weights_ms = 0;
  std::uint32_t weights_nodes = 0;

  void log(const std::string& line) const {
    if (opts.log)
      opts.log(line);
  }
  std::uint32_t limit(const node_slot& n, int k) const {
    return n.workers(k) * static_cast<std::uint32_t>(1 + std::max(0, opts.queue_per_worker));
  }
  bool usable(const node_slot& n, int k) const {
    return n.row.state == msg::node_state::up && !n.draining && n.workers(k) > 0;
  }
  void remember(const std::string& key, const msg::compile_request& req) {
    if (memo.count(key))
      return;
    memo[key] = req;
    memo_order.push_back(key);
    while (memo_order.size() > opts.source_memory) {
      memo.erase(memo_order.front());
      memo_order.pop_front();
    }
  }
};

using self_ptr = cluster_actor::stateful_pointer<cluster_state>;

inline std::string kind_name(int k) {
  return k == compile_kind ? "compile" : k == execute_kind ? "execute" : "generate";
}

// --- jobs (cluster_jobs.cpp) ---
// Takes the job off its node's books (its credit comes back).
void release(self_ptr self, job& j);
// Answers the job's requester with an error naming the job, and forgets the job.
void fail(self_ptr self, std::shared_ptr<job> j, const std::string& why);
// A try lost to the infrastructure (a node lost or unreachable): run it again elsewhere, first
// in line, or fail it once it used its retries. A cancelled job is never run again. `counts`
// false: the try is not counted (the node was only busy).
void retry_or_fail(self_ptr self, std::shared_ptr<job> j, const std::string& why,
                   bool counts = true);
// Sends every queued job that a node has credit for.
void dispatch(self_ptr self);
// Jobs that wait while no node could take their kind fail after node_wait_seconds, with
// what is known of every node.
void expire_waiting(self_ptr self);
// The requester `gate_id` of kind `k` no longer wants its job: dropped from the queue, or
// cancelled on its node.
void cancel(self_ptr self, int k, std::uint64_t gate_id);
msg::pool_stats pool_stats_of(self_ptr self, int k);

// --- nodes (cluster_nodes.cpp) ---
// The node is gone: its jobs go back to the queue (or fail), it is connected again later.
void node_lost(self_ptr self, std::size_t slot, const std::string& why);
// Connects to a listed node on a detached actor (connecting may block); the answer comes back
// as a connected_atom message.
void start_connect(self_ptr self, std::size_t slot);
// The node's problem, in its status row and (when it changed) the log.
void set_problem(self_ptr self, std::size_t slot, const std::string& why);
// A connected node's hello: accept it (identity checked on both sides) or refuse it.
void greet(self_ptr self, std::size_t slot, msg::node_actor h);
// One heartbeat period: waiting jobs expire, lost nodes reconnect, live ones are asked for stats.
void heartbeat(self_ptr self);
msg::cluster_status status_of(self_ptr self);
// Sends the latest weights to the generating nodes in `targets`, and measures the time until
// the slowest has handed them to its replicas.
void send_weights(self_ptr self, const std::vector<std::size_t>& targets);

} // namespace leap::actors::cluster_detail
