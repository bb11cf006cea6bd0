#include "actors/cluster.hpp"
#include "actors/queue_order.hpp"

#include "common/fs.hpp"
#include "common/host_port.hpp"
#include "messages/error_text.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace leap::actors {

namespace {

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

struct job {
  int k = compile_kind;
  std::uint64_t id = 0;      // the dispatcher's (what nodes see)
  std::uint64_t gate_id = 0; // the requester's
  msg::compile_request creq;
  msg::exec_request ereq;
  msg::generate_request greq;
  caf::typed_response_promise<msg::compile_reply> crp;
  caf::typed_response_promise<msg::exec_reply> erp;
  caf::typed_response_promise<msg::generate_reply> grp;
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

std::string kind_name(int k) {
  return k == compile_kind ? "compile" : k == execute_kind ? "execute" : "generate";
}

void dispatch(self_ptr self);
void send_weights(self_ptr self, const std::vector<std::size_t>& targets);

// Takes the job off its node's books (its credit comes back).
void release(self_ptr self, job& j) {
  if (!j.node)
    return;
  auto& n = self->state.nodes[*j.node];
  if (n.in[j.k] > 0)
    --n.in[j.k];
  n.row.busy = n.in[0] + n.in[1] + n.in[2];
  n.row.busy_seconds += std::chrono::duration<double>(clock::now() - j.sent).count();
  j.node.reset();
}

// The job `id` if its try on `slot` (since the node's `epoch`) is still the live one; null when
// the answer comes after the job was given up there (it went elsewhere) or finished.
std::shared_ptr<job> live_job(self_ptr self, std::uint64_t id, std::size_t slot,
                              std::uint64_t epoch) {
  auto& s = self->state;
  auto it = s.jobs.find(id);
  if (it == s.jobs.end() || it->second->node != slot || it->second->epoch != epoch)
    return nullptr;
  return it->second;
}

void forget(self_ptr self, const job& j) {
  auto& s = self->state;
  s.by_gate[j.k].erase(j.gate_id);
  s.jobs.erase(j.id);
}

void fail(self_ptr self, std::shared_ptr<job> j, const std::string& why) {
  auto text = "cluster " + kind_name(j->k) + " job " + std::to_string(j->gate_id) + ": " + why;
  auto e = caf::make_error(caf::sec::runtime_error, text);
  if (j->k == compile_kind)
    j->crp.deliver(e);
  else if (j->k == execute_kind)
    j->erp.deliver(e);
  else
    j->grp.deliver(e);
  forget(self, *j);
}

// A try lost to the infrastructure (a node lost or unreachable): run it again elsewhere, first
// in line, or fail it once it used its retries. A cancelled job is never run again.
void retry_or_fail(self_ptr self, std::shared_ptr<job> j, const std::string& why,
                   bool counts = true) {
  auto& s = self->state;
  if (j->cancelled) {
    fail(self, j, "cancelled");
    return;
  }
  // Generation has no retry key of its own: it follows the compiler's.
  int retries = j->k == execute_kind ? s.opts.exec_retries : s.opts.compile_retries;
  if (!counts)
    --j->tries;
  if (j->tries <= std::max(0, retries)) {
    if (counts)
      ++s.stats[j->k].retried;
    j->queued = clock::now();
    s.queue[j->k].push_front(j->id);
    return;
  }
  ++s.stats[j->k].failed;
  fail(self, j, "failed on " + std::to_string(j->tries) + " tries: " + why);
}

void node_lost(self_ptr self, std::size_t slot, const std::string& why) {
  auto& s = self->state;
  auto& n = s.nodes[slot];
  if (n.row.state != msg::node_state::up)
    return;
  n.row.state = msg::node_state::lost;
  ++n.row.lost;
  ++n.epoch;
  n.up_before += std::chrono::duration<double>(clock::now() - n.up_since).count();
  if (n.handle)
    self->demonitor(n.handle.address());
  n.handle = nullptr;
  n.builds.clear();
  n.heartbeat_pending = false;
  n.hello_pending = false;
  n.missed = 0;
  std::vector<std::shared_ptr<job>> lost;
  for (auto& [id, j] : s.jobs)
    if (j->node == slot)
      lost.push_back(j);
  n.row.rerun += lost.size();
  s.log("node " + n.row.name + " lost (" + why + "): " + std::to_string(lost.size())
        + " job(s) go to other nodes");
  for (auto& j : lost) {
    release(self, *j);
    retry_or_fail(self, j, "node " + n.row.name + " was lost (" + why + ")");
  }
  n.in[0] = n.in[1] = n.in[2] = 0;
  n.row.busy = 0;
  dispatch(self);
}

// The node to send `j` to now, if any.
std::optional<std::size_t> pick(self_ptr self, const job& j) {
  auto& s = self->state;
  std::optional<std::size_t> best, best_holder;
  bool holder_up = false;
  auto better = [&](std::optional<std::size_t> cur, std::size_t i) {
    if (!cur)
      return true;
    auto& a = s.nodes[i];
    auto& b = s.nodes[*cur];
    return s.limit(a, j.k) - a.in[j.k] > s.limit(b, j.k) - b.in[j.k];
  };
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    auto& n = s.nodes[i];
    if (!s.usable(n, j.k))
      continue;
    bool holds = j.k == execute_kind && n.builds.count(j.ereq.candidate_build);
    holder_up = holder_up || holds;
    if (n.in[j.k] >= s.limit(n, j.k))
      continue;
    if (holds && better(best_holder, i))
      best_holder = i;
    if (better(best, i))
      best = i;
  }
  if (j.k != execute_kind)
    return best;
  if (best_holder)
    return best_holder;
  return holder_up ? std::nullopt : best; // wait for the holder rather than build again
}

// Sends `j` to node `slot` and takes one of its credits; `new_try` false: the same try again
// (an execute sent back after its builds were made on that node).
void send_job(self_ptr self, std::shared_ptr<job> j, std::size_t slot, bool new_try = true);

void on_compile_reply(self_ptr self, std::uint64_t id, std::size_t slot, std::uint64_t epoch,
                      msg::compile_reply& r) {
  auto& s = self->state;
  auto j = live_job(self, id, slot, epoch);
  if (!j)
    return; // answered after its node was given up: the job went elsewhere
  auto& n = s.nodes[slot];
  release(self, *j);
  ++n.row.done;
  auto& st = s.stats[compile_kind];
  ++st.completed;
  if (r.cached)
    ++st.cache_hits;
  if (r.status == env::build_status::emulation_unsupported)
    ++st.emulation_unsupported;
  if (r.status == env::build_status::ok) {
    n.builds.insert(r.key);
    s.remember(r.key, j->creq);
  }
  r.id = j->gate_id;
  r.attempts = std::max(r.attempts, j->tries);
  j->crp.deliver(std::move(r));
  forget(self, *j);
  dispatch(self);
}

// A job's request to its node failed: the node is gone or unreachable (the job runs elsewhere),
// busy with something else (elsewhere, no try counted), or it failed the job after its own
// retries (the requester gets the error).
void on_job_error(self_ptr self, std::uint64_t id, std::size_t slot, std::uint64_t epoch,
                  const caf::error& e) {
  auto& s = self->state;
  auto j = live_job(self, id, slot, epoch);
  if (!j)
    return;
  auto& n = s.nodes[slot];
  auto text = msg::error_text(e, self->system());
  release(self, *j);
  if (e == caf::sec::unavailable_or_would_block) {
    n.draining = true;
    retry_or_fail(self, j, text, false);
  } else if (e == caf::sec::request_receiver_down || e == caf::sec::request_timeout) {
    retry_or_fail(self, j, "node " + n.row.name + ": " + text);
    if (e == caf::sec::request_receiver_down)
      node_lost(self, slot, "its front actor is down");
  } else {
    ++n.row.failed;
    ++s.stats[j->k].failed;
    fail(self, j, text);
  }
  dispatch(self);
}

// The node lacks builds of an execute job: build them there, then send the job again.
void rebuild_then_run(self_ptr self, std::shared_ptr<job> j, std::size_t slot,
                      const std::vector<std::string>& missing) {
  auto& s = self->state;
  auto& n = s.nodes[slot];
  if (++j->rebuild_rounds > 2) {
    release(self, *j);
    ++s.stats[execute_kind].failed;
    fail(self, j, "node " + n.row.name + " still lacks builds after building them twice");
    return;
  }
  std::vector<msg::compile_request> sources; // how to build each missing key again
  for (const auto& key : missing) {
    auto m = s.memo.find(key);
    if (m == s.memo.end()) {
      release(self, *j);
      ++s.stats[execute_kind].failed;
      fail(self, j, "build " + key + " is on no node that is up, and its source is no longer "
                    "remembered (cluster source memory)");
      return;
    }
    sources.push_back(m->second);
  }
  auto pending = std::make_shared<std::size_t>(sources.size());
  auto epoch = j->epoch;
  for (auto& req : sources) {
    req.id = s.next_id++;
    ++n.row.rebuilt;
    self->request(n.handle, s.opts.job_timeout, msg::compile_atom_v, req)
      .then(
        [self, j, slot, epoch, pending](msg::compile_reply& r) {
          auto& s = self->state;
          if (!live_job(self, j->id, slot, epoch))
            return;
          if (r.status != env::build_status::ok) {
            release(self, *j);
            ++s.stats[execute_kind].failed;
            fail(self, j, "rebuilding " + r.key + " on node " + s.nodes[slot].row.name
                            + " gave " + env::to_string(r.status) + ": " + r.diagnostics);
            dispatch(self);
            return;
          }
          s.nodes[slot].builds.insert(r.key);
          if (--*pending == 0) {
            // Same node, same try: its credit is still held.
            release(self, *j);
            send_job(self, j, slot, /*new_try=*/false);
          }
        },
        [self, j, slot, epoch](caf::error& e) { on_job_error(self, j->id, slot, epoch, e); });
  }
}

void on_exec_reply(self_ptr self, std::uint64_t id, std::size_t slot, std::uint64_t epoch,
                   msg::node_exec_reply& r) {
  auto& s = self->state;
  auto j = live_job(self, id, slot, epoch);
  if (!j)
    return;
  auto& n = s.nodes[slot];
  if (!r.missing_builds.empty()) {
    for (const auto& key : r.missing_builds)
      n.builds.erase(key);
    rebuild_then_run(self, j, slot, r.missing_builds);
    return;
  }
  release(self, *j);
  ++n.row.done;
  ++s.stats[execute_kind].completed;
  if (!r.kept_files.empty()) {
    // The files the node kept (dump_inputs) get a directory here, as a local run's would.
    auto dir = make_temp_dir(s.opts.work_dir.empty() ? temp_root() : s.opts.work_dir, "kept-");
    if (!dir) {
      fail(self, j, "cannot keep the run's files: " + dir.message());
      dispatch(self);
      return;
    }
    for (auto& [name, bytes] : r.kept_files)
      if (name.find('/') == std::string::npos && name != ".." && name != ".")
        if (auto w = write_file_atomic(*dir + "/" + name, bytes); !w) {
          fail(self, j, "cannot keep the run's files: " + w.message());
          dispatch(self);
          return;
        }
    r.rep.kept_dir = *dir;
  }
  r.rep.id = j->gate_id;
  r.rep.attempts = std::max(r.rep.attempts, j->tries);
  j->erp.deliver(std::move(r.rep));
  forget(self, *j);
  dispatch(self);
}

void on_generate_reply(self_ptr self, std::uint64_t id, std::size_t slot, std::uint64_t epoch,
                       msg::generate_reply& r) {
  auto& s = self->state;
  auto j = live_job(self, id, slot, epoch);
  if (!j)
    return;
  release(self, *j);
  ++s.nodes[slot].row.done;
  ++s.stats[generate_kind].completed;
  r.id = j->gate_id;
  j->grp.deliver(std::move(r));
  forget(self, *j);
  dispatch(self);
}

void send_job(self_ptr self, std::shared_ptr<job> j, std::size_t slot, bool new_try) {
  auto& s = self->state;
  auto& n = s.nodes[slot];
  j->node = slot;
  j->epoch = n.epoch;
  j->sent = clock::now();
  if (new_try)
    ++j->tries;
  ++n.in[j->k];
  n.row.busy = n.in[0] + n.in[1] + n.in[2];
  auto id = j->id;
  auto epoch = n.epoch;
  if (j->k == generate_kind) {
    auto req = j->greq;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::generate_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::generate_reply& r) { on_generate_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  } else if (j->k == compile_kind) {
    auto req = j->creq;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::compile_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::compile_reply& r) { on_compile_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  } else {
    auto req = j->ereq;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::exec_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::node_exec_reply& r) { on_exec_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  }
}

void dispatch(self_ptr self) {
  auto& s = self->state;
  for (int k : {compile_kind, execute_kind, generate_kind}) {
    auto& q = s.queue[k];
    for (auto it = q.begin(); it != q.end();) {
      auto jt = s.jobs.find(*it);
      if (jt == s.jobs.end()) {
        it = q.erase(it);
        continue;
      }
      auto slot = pick(self, *jt->second);
      if (!slot) {
        if (k != execute_kind)
          break; // compile (and generate) jobs are alike: none can go before this one
        ++it;
        continue;
      }
      auto j = jt->second;
      it = q.erase(it);
      send_job(self, j, *slot);
    }
  }
}

void start_connect(self_ptr self, std::size_t slot) {
  auto& n = self->state.nodes[slot];
  if (n.local || n.connecting || !self->state.opts.connect)
    return;
  n.connecting = true;
  auto connect = self->state.opts.connect;
  auto host = n.host;
  auto port = n.port;
  cluster_actor me = self;
  self->spawn<caf::detached>([connect, host, port, me, slot](caf::event_based_actor* c) {
    auto r = connect(host, port);
    if (r)
      c->send(me, msg::connected_atom_v, static_cast<std::uint64_t>(slot), *r);
    else
      c->send(me, msg::connected_atom_v, static_cast<std::uint64_t>(slot), r.message());
  });
}

void set_problem(self_ptr self, std::size_t slot, const std::string& why) {
  auto& n = self->state.nodes[slot];
  if (n.row.problem != why)
    self->state.log("node " + n.row.name + ": " + why);
  n.row.problem = why;
}

// A connected node's hello: accept it (identity checked on both sides) or refuse it.
void greet(self_ptr self, std::size_t slot, msg::node_actor h) {
  auto& s = self->state;
  auto& n = s.nodes[slot];
  if (n.hello_pending || n.row.state == msg::node_state::up)
    return;
  n.hello_pending = true;
  self->request(h, std::chrono::seconds(10), msg::hello_atom_v, s.opts.identity)
    .then(
      [self, slot, h](msg::node_info& info) {
        auto& s = self->state;
        auto& n = s.nodes[slot];
        n.hello_pending = false;
        if (auto why = msg::identity_mismatch(s.opts.identity, info.identity)) {
          n.row.state = msg::node_state::refused;
          set_problem(self, slot, "refused: " + *why);
          return;
        }
        bool again = n.row.lost > 0;
        n.handle = h;
        n.info = info;
        n.row.state = msg::node_state::up;
        n.row.version = info.identity.version + " (" + info.identity.messages + ")";
        n.row.compile_workers = info.compile_workers;
        n.row.execute_workers = info.execute_workers;
        n.row.generate_slots = info.generate_slots;
        n.row.problem.clear();
        n.draining = false;
        n.missed = 0;
        n.in[0] = n.in[1] = n.in[2] = 0;
        ++n.epoch;
        n.up_since = clock::now();
        if (again)
          ++n.row.rejoined;
        self->monitor(h);
        s.log("node " + n.row.name + (again ? " rejoined" : " joined") + ": compile "
              + std::to_string(info.compile_workers) + ", execute "
              + std::to_string(info.execute_workers)
              + (info.generate_slots ? ", generate " + std::to_string(info.generate_slots) : "")
              + " (" + env::to_string(info.backend) + ")");
        // A generating node samples from the head's current policy, not its own checkpoint's.
        if (info.generate_slots > 0)
          send_weights(self, {slot});
        dispatch(self);
      },
      [self, slot](caf::error& e) {
        auto& n = self->state.nodes[slot];
        n.hello_pending = false;
        auto text = msg::error_text(e, self->system());
        if (e == caf::sec::runtime_error) {
          n.row.state = msg::node_state::refused;
          set_problem(self, slot, "refused: " + text);
        } else {
          set_problem(self, slot, "no answer to hello: " + text);
        }
      });
}

// Jobs that wait while no node could take their kind fail after node_wait_seconds, with
// what is known of every node.
void expire_waiting(self_ptr self) {
  auto& s = self->state;
  for (int k : {compile_kind, execute_kind, generate_kind}) {
    bool any = false;
    for (auto& n : s.nodes)
      any = any || s.usable(n, k);
    if (any || s.queue[k].empty())
      continue;
    std::string why;
    for (auto& n : s.nodes)
      why += (why.empty() ? "" : "; ") + n.row.name + ": "
             + (n.row.problem.empty() ? std::string(to_string(n.row.state)) : n.row.problem);
    auto limit = std::chrono::duration<double>(s.opts.node_wait_seconds);
    auto& q = s.queue[k];
    for (auto it = q.begin(); it != q.end();) {
      auto jt = s.jobs.find(*it);
      if (jt != s.jobs.end() && clock::now() - jt->second->queued > limit) {
        auto j = jt->second;
        it = q.erase(it);
        ++s.stats[k].failed;
        fail(self, j, "no node that can " + kind_name(k) + " has been up for "
                        + std::to_string(static_cast<int>(s.opts.node_wait_seconds))
                        + " s (" + (why.empty() ? "no nodes listed" : why) + ")");
      } else {
        ++it;
      }
    }
  }
}

void heartbeat(self_ptr self) {
  auto& s = self->state;
  expire_waiting(self);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(s.opts.heartbeat_seconds));
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    auto& n = s.nodes[i];
    if (n.row.state != msg::node_state::up) {
      start_connect(self, i);
      continue;
    }
    if (n.heartbeat_pending) {
      if (++n.missed >= s.opts.heartbeat_misses) {
        node_lost(self, i, "no heartbeat for " + std::to_string(n.missed) + " periods");
      }
      continue;
    }
    n.heartbeat_pending = true;
    auto epoch = n.epoch;
    self->request(n.handle, wait * s.opts.heartbeat_misses, msg::stats_atom_v)
      .then(
        [self, i, epoch](msg::node_stats& st) {
          auto& n = self->state.nodes[i];
          if (n.epoch != epoch)
            return;
          n.heartbeat_pending = false;
          n.missed = 0;
          if (st.draining && !n.draining)
            self->state.log("node " + n.row.name + " is draining");
          n.draining = st.draining;
        },
        [self, i, epoch](caf::error& e) {
          auto& n = self->state.nodes[i];
          if (n.epoch != epoch)
            return;
          n.heartbeat_pending = false;
          ++n.missed;
          if (e == caf::sec::request_receiver_down || n.missed >= self->state.opts.heartbeat_misses)
            node_lost(self, i, "heartbeat: " + msg::error_text(e, self->system()));
        });
  }
}

template <int K, class Request, class Promise>
void enqueue(self_ptr self, Request req, Promise rp) {
  auto& s = self->state;
  auto j = std::make_shared<job>();
  j->k = K;
  j->id = s.next_id++;
  j->gate_id = req.id;
  if constexpr (K == compile_kind) {
    j->creq = std::move(req);
    j->crp = rp;
  } else if constexpr (K == generate_kind) {
    j->greq = std::move(req);
    j->grp = rp;
  } else {
    j->ereq = std::move(req);
    j->erp = rp;
  }
  s.by_gate[K][j->gate_id] = j->id;
  s.jobs[j->id] = j;
  // Same order as a local pool's (actors/queue_order.hpp): lower priority first.
  insert_by_priority(s.queue[K], j->id, [&s](std::uint64_t id) -> std::uint64_t {
    auto it = s.jobs.find(id);
    if (it == s.jobs.end())
      return 0;
    const auto& q = *it->second;
    return q.k == compile_kind ? q.creq.priority
                               : q.k == generate_kind ? q.greq.priority : q.ereq.priority;
  });
  dispatch(self);
}

void cancel(self_ptr self, int k, std::uint64_t gate_id) {
  auto& s = self->state;
  auto g = s.by_gate[k].find(gate_id);
  if (g == s.by_gate[k].end())
    return;
  auto j = s.jobs.at(g->second);
  ++s.stats[k].cancelled;
  j->cancelled = true;
  if (!j->node) {
    auto& q = s.queue[k];
    q.erase(std::remove(q.begin(), q.end(), j->id), q.end());
    fail(self, j, "cancelled before it started");
    return;
  }
  auto& n = s.nodes[*j->node];
  if (k == compile_kind)
    self->send(n.handle, msg::cancel_atom_v, msg::compile_atom_v, j->id);
  else if (k == execute_kind)
    self->send(n.handle, msg::cancel_atom_v, msg::exec_atom_v, j->id);
  else
    self->send(n.handle, msg::cancel_atom_v, msg::generate_atom_v, j->id);
}

msg::pool_stats pool_stats_of(self_ptr self, int k) {
  auto& s = self->state;
  auto out = s.stats[k];
  out.pool = "cluster " + kind_name(k);
  out.workers = 0;
  out.busy = 0;
  for (auto& n : s.nodes)
    if (n.row.state == msg::node_state::up) {
      out.workers += n.workers(k);
      out.busy += n.in[k];
    }
  out.queued = static_cast<std::uint32_t>(s.queue[k].size());
  return out;
}

msg::cluster_status status_of(self_ptr self) {
  auto& s = self->state;
  msg::cluster_status out;
  for (auto& n : s.nodes) {
    auto row = n.row;
    row.up_seconds = n.up_before;
    if (n.row.state == msg::node_state::up)
      row.up_seconds += std::chrono::duration<double>(clock::now() - n.up_since).count();
    out.nodes.push_back(std::move(row));
  }
  out.queued_compile = static_cast<std::uint32_t>(s.queue[compile_kind].size());
  out.queued_execute = static_cast<std::uint32_t>(s.queue[execute_kind].size());
  out.queued_generate = static_cast<std::uint32_t>(s.queue[generate_kind].size());
  out.weights_version = s.weights_version;
  out.weights_bytes = s.weights_bytes;
  out.weights_ms = s.weights_ms;
  out.weights_nodes = s.weights_nodes;
  return out;
}

// Sends the latest weights to the generating nodes in `targets`, and measures the time until
// the slowest has handed them to its replicas.
void send_weights(self_ptr self, const std::vector<std::size_t>& targets) {
  auto& s = self->state;
  if (!s.weights || targets.empty())
    return;
  auto w = s.weights;
  auto t0 = clock::now();
  auto pending = std::make_shared<std::size_t>(targets.size());
  for (auto i : targets) {
    auto& n = s.nodes[i];
    self->request(n.handle, std::chrono::seconds(60), msg::weights_atom_v, *w)
      .then(
        [self, w, t0, pending, n_targets = targets.size()](std::int64_t) {
          if (--*pending > 0)
            return;
          auto& s = self->state;
          s.weights_version = w->version;
          s.weights_bytes = w->safetensors.size();
          s.weights_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
          s.weights_nodes = static_cast<std::uint32_t>(n_targets);
        },
        [self, i, pending](caf::error& e) {
          --*pending;
          set_problem(self, i, "weights: " + msg::error_text(e, self->system()));
        });
  }
}

cluster_actor::behavior_type dispatcher(self_ptr self, cluster_options opts) {
  auto& s = self->state;
  s.opts = std::move(opts);
  s.stats[compile_kind].pool = "cluster compile";
  s.stats[execute_kind].pool = "cluster execute";
  s.stats[generate_kind].pool = "cluster generate";
  s.weights = s.opts.weights;
  for (auto& name : s.opts.nodes) {
    node_slot n;
    n.row.name = name;
    if (auto hp = parse_host_port(name)) {
      n.host = hp->host;
      n.port = hp->port;
    }
    s.nodes.push_back(std::move(n));
  }
  for (std::size_t i = 0; i < s.opts.local.size(); ++i) {
    node_slot n;
    n.local = true;
    n.row.name = "local";
    s.nodes.push_back(std::move(n));
  }
  // The facades are linked to the dispatcher, so ending one (the pipeline's shutdown) ends it.
  // A facade nobody uses ends as unreachable: that one is ignored.
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (em.reason != caf::exit_reason::unreachable)
      self->quit(em.reason);
  });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      if (s.nodes[i].handle && s.nodes[i].handle.address() == dm.source)
        node_lost(self, i, "connection lost: " + msg::error_text(dm.reason, self->system()));
  });
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].local)
      greet(self, i, s.opts.local[i - s.opts.nodes.size()]);
    else
      start_connect(self, i);
  }
  auto period = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(std::max(0.05, s.opts.heartbeat_seconds)));
  self->delayed_send(self, period, msg::tick_atom_v);
  return {
    [self](msg::compile_atom, msg::compile_request& req) -> caf::result<msg::compile_reply> {
      auto rp = self->make_response_promise<msg::compile_reply>();
      enqueue<compile_kind>(self, std::move(req), rp);
      return rp;
    },
    [self](msg::exec_atom, msg::exec_request& req) -> caf::result<msg::exec_reply> {
      auto rp = self->make_response_promise<msg::exec_reply>();
      enqueue<execute_kind>(self, std::move(req), rp);
      return rp;
    },
    [self](msg::generate_atom, msg::generate_request& req) -> caf::result<msg::generate_reply> {
      auto rp = self->make_response_promise<msg::generate_reply>();
      enqueue<generate_kind>(self, std::move(req), rp);
      return rp;
    },
    [self](msg::cancel_atom, msg::generate_atom, std::uint64_t id) { cancel(self, generate_kind, id); },
    [self](msg::stats_atom, msg::generate_atom) { return pool_stats_of(self, generate_kind); },
    [self](msg::weights_atom, msg::weights_update& w) {
      auto& s = self->state;
      s.weights = std::make_shared<const msg::weights_update>(std::move(w));
      std::vector<std::size_t> targets;
      for (std::size_t i = 0; i < s.nodes.size(); ++i)
        if (s.usable(s.nodes[i], generate_kind))
          targets.push_back(i);
      send_weights(self, targets);
    },
    [self](msg::cancel_atom, msg::compile_atom, std::uint64_t id) { cancel(self, compile_kind, id); },
    [self](msg::cancel_atom, msg::exec_atom, std::uint64_t id) { cancel(self, execute_kind, id); },
    [self](msg::stats_atom, msg::compile_atom) { return pool_stats_of(self, compile_kind); },
    [self](msg::stats_atom, msg::exec_atom) { return pool_stats_of(self, execute_kind); },
    [self](msg::stats_atom) { return status_of(self); },
    [self, period](msg::tick_atom) {
      heartbeat(self);
      if (self->state.opts.on_status)
        self->state.opts.on_status(status_of(self));
      self->delayed_send(self, period, msg::tick_atom_v);
    },
    [self](msg::connected_atom, std::uint64_t slot, msg::node_actor& h) {
      auto& s = self->state;
      if (slot >= s.nodes.size())
        return;
      s.nodes[slot].connecting = false;
      greet(self, slot, h);
    },
    [self](msg::join_atom, std::string& addr) -> caf::result<std::string> {
      auto& s = self->state;
      auto hp = parse_host_port(addr);
      if (!hp || hp->port == 0)
        return caf::make_error(caf::sec::invalid_argument,
                               "join: '" + addr + "' is not the node's HOST:PORT");
      for (std::size_t i = 0; i < s.nodes.size(); ++i)
        if (!s.nodes[i].local && s.nodes[i].row.name == addr) {
          if (s.nodes[i].row.state != msg::node_state::up)
            start_connect(self, i);
          return std::string("known");
        }
      node_slot n;
      n.row.name = addr;
      n.host = hp->host;
      n.port = hp->port;
      s.nodes.push_back(std::move(n));
      s.log("node " + addr + " asked to join");
      start_connect(self, s.nodes.size() - 1);
      return std::string("joined");
    },
    [self](msg::connected_atom, std::uint64_t slot, std::string& why) {
      auto& s = self->state;
      if (slot >= s.nodes.size())
        return;
      s.nodes[slot].connecting = false;
      set_problem(self, slot, "cannot connect: " + why);
    },
  };
}

// A pool interface over the dispatcher, for one kind of job (`Atom`).
template <class Atom, class Request, class Reply>
typename msg::pool_actor<Atom, Request, Reply>::behavior_type
pool_facade(typename msg::pool_actor<Atom, Request, Reply>::pointer self, cluster_actor d) {
  self->link_to(d);
  return {
    [self, d](Atom, Request& req) { return self->delegate(d, Atom::value, std::move(req)); },
    [self, d](msg::cancel_atom, std::uint64_t id) {
      self->send(d, msg::cancel_atom_v, Atom::value, id);
    },
    [self, d](msg::stats_atom) { return self->delegate(d, msg::stats_atom_v, Atom::value); },
  };
}

msg::weights_sink_actor::behavior_type weights_facade(msg::weights_sink_actor::pointer self,
                                                      cluster_actor d) {
  self->link_to(d);
  return {
    [self, d](msg::weights_atom, msg::weights_update& w) {
      self->send(d, msg::weights_atom_v, std::move(w));
    },
  };
}

msg::head_actor::behavior_type head_facade(msg::head_actor::pointer self, cluster_actor d) {
  self->link_to(d);
  return {
    [self, d](msg::join_atom, std::string& addr) {
      return self->delegate(d, msg::join_atom_v, std::move(addr));
    },
    [self, d](msg::stats_atom) { return self->delegate(d, msg::stats_atom_v); },
  };
}

} // namespace

cluster_handles spawn_cluster(caf::actor_system& sys, cluster_options opts) {
  cluster_handles h;
  h.dispatcher = sys.spawn(dispatcher, std::move(opts));
  h.compilers = sys.spawn(pool_facade<msg::compile_atom, msg::compile_request, msg::compile_reply>,
                          h.dispatcher);
  h.executors = sys.spawn(pool_facade<msg::exec_atom, msg::exec_request, msg::exec_reply>,
                          h.dispatcher);
  h.head = sys.spawn(head_facade, h.dispatcher);
  h.generators =
    sys.spawn(pool_facade<msg::generate_atom, msg::generate_request, msg::generate_reply>,
              h.dispatcher);
  h.weights = sys.spawn(weights_facade, h.dispatcher);
  return h;
}

} // namespace leap::actors
