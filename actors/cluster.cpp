#include "actors/cluster.hpp"

#include "actors/cluster_state.hpp"
#include "actors/queue_order.hpp"
#include "common/host_port.hpp"
#include "messages/error_text.hpp"

#include <caf/all.hpp>

namespace leap::actors {

namespace {

using namespace cluster_detail;

template <int K, class Request, class Promise>
void enqueue(self_ptr self, Request req, Promise rp) {
  auto& s = self->state;
  auto j = std::make_shared<job>();
  j->id = s.next_id++;
  j->gate_id = req.id;
  j->w.emplace<K>(std::variant_alternative_t<K, any_work>{std::move(req), std::move(rp)});
  s.by_gate[K][j->gate_id] = j->id;
  s.jobs[j->id] = j;
  // Same order as a local pool's (actors/queue_order.hpp): lower priority first.
  insert_by_priority(s.queue[K], j->id, [&s](std::uint64_t id) -> std::uint64_t {
    auto it = s.jobs.find(id);
    if (it == s.jobs.end())
      return 0;
    return std::visit([](const auto& w) -> std::uint64_t { return w.req.priority; }, it->second->w);
  });
  dispatch(self);
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
