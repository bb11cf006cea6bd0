#include "actors/node.hpp"

#include "common/fs.hpp"
#include "env/compiler.hpp"
#include "messages/error_text.hpp"

#include <caf/all.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <vector>

namespace leap::actors {

namespace {

// A job in the node's pools on behalf of a head: the pools see a node-local id (heads choose
// theirs independently, so two heads' ids may be equal), the head gets its own id back.
enum class job_kind : std::uint8_t { compile, execute, generate };
struct job_ref {
  caf::actor_addr head;
  job_kind kind = job_kind::compile;
  std::uint64_t head_id = 0;
};

struct node_state {
  node_options opts;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  bool draining = false;
  std::uint64_t in_flight = 0, done = 0;
  std::uint64_t next_local_id = 1;
  std::map<std::uint64_t, job_ref> jobs; // by local id, until the pool answers

  // The local id of a head's job, or 0 when it is not (or no longer) here.
  std::uint64_t local_id_of(const caf::actor_addr& head, job_kind kind, std::uint64_t head_id) const {
    for (const auto& [local, j] : jobs)
      if (j.head == head && j.kind == kind && j.head_id == head_id)
        return local;
    return 0;
  }
  std::vector<caf::typed_response_promise<std::uint64_t>> drained; // waiting for in_flight == 0

  void log(const std::string& line) const {
    if (opts.log)
      opts.log(line);
  }
  void finished() {
    --in_flight;
    ++done;
    if (draining && in_flight == 0) {
      for (auto& rp : drained)
        rp.deliver(done);
      drained.clear();
    }
  }
};

caf::error refuse(const std::string& why) {
  return caf::make_error(caf::sec::runtime_error, why);
}

// "Not here, try another node": draining, or a role this node does not host. The head sends
// the job elsewhere without counting a try.
caf::error unavailable(const std::string& why) {
  return caf::make_error(caf::sec::unavailable_or_would_block, why);
}

using node_ptr = msg::node_actor::stateful_pointer<node_state>;

// Hands a job to one of the node's own pools and answers the head with `shape(reply)`, or with
// an error naming the node. Counted in flight until the pool answers (drain waits for it).
template <class Reply, class PoolReply, class Pool, class Atom, class Request, class Shape>
caf::result<Reply> forward_job(node_ptr self, const Pool& pool, Atom atom, job_kind kind,
                               Request req, Shape shape) {
  auto& s = self->state;
  // Before the promise: making it takes the sender out of the current message.
  const auto head = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto rp = self->template make_response_promise<Reply>();
  ++s.in_flight;
  const auto local = s.next_local_id++;
  const auto head_id = req.id;
  s.jobs[local] = job_ref{head, kind, head_id};
  req.id = local;
  self->request(pool, s.opts.job_timeout, atom, std::move(req))
    .then(
      [self, rp, shape, local, head_id](PoolReply& r) mutable {
        r.id = head_id;
        self->state.jobs.erase(local);
        rp.deliver(shape(std::move(r)));
        self->state.finished();
      },
      [self, rp, local](caf::error& e) mutable {
        self->state.jobs.erase(local);
        rp.deliver(caf::make_error(caf::sec::runtime_error, self->state.opts.info.name + ": "
                                                              + msg::error_text(e, self->system())));
        self->state.finished();
      });
  return rp;
}

// Cancels in `pool` the job a head knows as `head_id` (nothing when it already finished).
template <class Pool>
void cancel_job(node_ptr self, const Pool& pool, job_kind kind, std::uint64_t head_id) {
  auto& s = self->state;
  const auto local =
    s.local_id_of(caf::actor_cast<caf::actor_addr>(self->current_sender()), kind, head_id);
  if (pool && local != 0)
    self->send(pool, msg::cancel_atom_v, local);
}

// Why the node cannot take a job of a role now (draining, or the role is not hosted); none when
// it can.
template <class Pool>
std::optional<caf::error> not_taking(node_ptr self, const Pool& pool, const char* role) {
  auto& s = self->state;
  if (s.draining)
    return unavailable(s.opts.info.name + " is draining and takes no new jobs");
  if (!pool)
    return unavailable(s.opts.info.name + " does not " + role + " (node.roles)");
  return std::nullopt;
}

msg::node_actor::behavior_type node_behavior(node_ptr self,
                                             node_options opts) {
  self->state.opts = std::move(opts);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    // Nobody waits for the lost head's jobs any more: cancel them, so a new head (a resumed run)
    // gets the workers at once. Their answers, when they come, go nowhere.
    std::size_t cancelled = 0;
    for (const auto& [local, j] : s.jobs) {
      if (j.head != dm.source)
        continue;
      ++cancelled;
      if (j.kind == job_kind::compile && s.opts.compilers)
        self->send(s.opts.compilers, msg::cancel_atom_v, local);
      else if (j.kind == job_kind::execute && s.opts.executors)
        self->send(s.opts.executors, msg::cancel_atom_v, local);
      else if (j.kind == job_kind::generate && s.opts.generators)
        self->send(s.opts.generators, msg::cancel_atom_v, local);
    }
    s.log("head gone (" + msg::error_text(dm.reason, self->system()) + "); "
          + std::to_string(s.done) + " job(s) done, " + std::to_string(cancelled)
          + " of its job(s) cancelled; waiting for the next head");
  });
  return {
    [self](msg::hello_atom, const msg::build_identity& theirs) -> caf::result<msg::node_info> {
      auto& s = self->state;
      if (auto why = msg::identity_mismatch(s.opts.info.identity, theirs)) {
        s.log("refused a head: " + *why);
        return refuse(s.opts.info.name + " refuses the head: " + *why);
      }
      if (auto head = self->current_sender()) {
        s.log("head connected (node " + to_string(head->node()).substr(0, 12) + "); "
              + std::to_string(s.done) + " job(s) done so far");
        self->monitor(caf::actor_cast<caf::actor_addr>(head));
      }
      return s.opts.info;
    },
    [self](msg::compile_atom, msg::compile_request& req) -> caf::result<msg::compile_reply> {
      if (auto no = not_taking(self, self->state.opts.compilers, "compile"))
        return *no;
      return forward_job<msg::compile_reply, msg::compile_reply>(
        self, self->state.opts.compilers, msg::compile_atom_v, job_kind::compile, std::move(req),
        [](msg::compile_reply r) { return r; });
    },
    [self](msg::exec_atom, msg::exec_request& req) -> caf::result<msg::node_exec_reply> {
      auto& s = self->state;
      if (auto no = not_taking(self, s.opts.executors, "execute"))
        return *no;
      msg::node_exec_reply missing;
      std::error_code ec;
      for (const auto* key : {&req.candidate_build, &req.reference_build})
        if (s.opts.holds_build
              ? !s.opts.holds_build(*key)
              : !std::filesystem::exists(env::build_executable(s.opts.cache_dir, *key), ec))
          missing.missing_builds.push_back(*key);
      if (!missing.missing_builds.empty()) {
        missing.rep.id = req.id;
        return missing;
      }
      return forward_job<msg::node_exec_reply, msg::exec_reply>(
        self, s.opts.executors, msg::exec_atom_v, job_kind::execute, std::move(req),
        [](msg::exec_reply r) {
          // A kept directory is a path on this machine: its files travel as bytes instead, and
          // the directory goes (no local path crosses machines).
          msg::node_exec_reply out;
          if (!r.kept_dir.empty()) {
            std::error_code ec;
            for (auto& e : std::filesystem::directory_iterator(r.kept_dir, ec))
              if (e.is_regular_file(ec))
                if (auto bytes = read_file(e.path().string()))
                  out.kept_files[e.path().filename().string()] = std::move(*bytes);
            std::filesystem::remove_all(r.kept_dir, ec);
            r.kept_dir.clear();
          }
          out.rep = std::move(r);
          return out;
        });
    },
    [self](msg::generate_atom, msg::generate_request& req) -> caf::result<msg::generate_reply> {
      if (auto no = not_taking(self, self->state.opts.generators, "generate"))
        return *no;
      return forward_job<msg::generate_reply, msg::generate_reply>(
        self, self->state.opts.generators, msg::generate_atom_v, job_kind::generate, std::move(req),
        [](msg::generate_reply r) { return r; });
    },
    [self](msg::cancel_atom, msg::generate_atom, std::uint64_t id) {
      cancel_job(self, self->state.opts.generators, job_kind::generate, id);
    },
    [self](msg::weights_atom, msg::weights_update& w) -> caf::result<std::int64_t> {
      auto& s = self->state;
      if (!s.opts.weights)
        return unavailable(s.opts.info.name + " has no generator replicas for weights");
      auto version = w.version;
      s.log("weights version " + std::to_string(version) + " ("
            + std::to_string(w.safetensors.size() / 1024) + " KiB) to the generator replicas");
      self->send(s.opts.weights, msg::weights_atom_v, std::move(w));
      return version;
    },
    [self](msg::cancel_atom, msg::compile_atom, std::uint64_t id) {
      cancel_job(self, self->state.opts.compilers, job_kind::compile, id);
    },
    [self](msg::cancel_atom, msg::exec_atom, std::uint64_t id) {
      cancel_job(self, self->state.opts.executors, job_kind::execute, id);
    },
    [self](msg::stats_atom) -> caf::result<msg::node_stats> {
      auto& s = self->state;
      auto rp = self->make_response_promise<msg::node_stats>();
      auto out = std::make_shared<msg::node_stats>();
      out->info = s.opts.info;
      out->draining = s.draining;
      out->uptime_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
      auto pending = std::make_shared<int>((s.opts.compilers ? 1 : 0) + (s.opts.executors ? 1 : 0)
                                           + (s.opts.generators ? 1 : 0));
      auto one_done = [rp, out, pending]() mutable {
        if (--*pending == 0)
          rp.deliver(*out);
      };
      if (*pending == 0) {
        rp.deliver(*out);
        return rp;
      }
      auto timeout = std::chrono::seconds(5);
      if (s.opts.compilers)
        self->request(s.opts.compilers, timeout, msg::stats_atom_v)
          .then([out, one_done](msg::pool_stats& p) mutable { out->compile = p; one_done(); },
                [one_done](caf::error&) mutable { one_done(); });
      if (s.opts.executors)
        self->request(s.opts.executors, timeout, msg::stats_atom_v)
          .then([out, one_done](msg::pool_stats& p) mutable { out->execute = p; one_done(); },
                [one_done](caf::error&) mutable { one_done(); });
      if (s.opts.generators)
        self->request(s.opts.generators, timeout, msg::stats_atom_v)
          .then([out, one_done](msg::pool_stats& p) mutable { out->generate = p; one_done(); },
                [one_done](caf::error&) mutable { one_done(); });
      return rp;
    },
    [self](msg::drain_atom) -> caf::result<std::uint64_t> {
      auto& s = self->state;
      if (!s.draining)
        s.log("draining: " + std::to_string(s.in_flight) + " job(s) still running");
      s.draining = true;
      if (s.in_flight == 0)
        return s.done;
      auto rp = self->make_response_promise<std::uint64_t>();
      s.drained.push_back(rp);
      return rp;
    },
  };
}

} // namespace

msg::node_actor spawn_node(caf::actor_system& sys, node_options opts) {
  return sys.spawn(node_behavior, std::move(opts));
}

} // namespace leap::actors
