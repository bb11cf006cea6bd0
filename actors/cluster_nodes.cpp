#include "actors/cluster_state.hpp"

#include "messages/error_text.hpp"

namespace leap::actors::cluster_detail {

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

} // namespace leap::actors::cluster_detail
