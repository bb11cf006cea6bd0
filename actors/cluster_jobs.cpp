#include "actors/cluster_state.hpp"

#include "common/fs.hpp"
#include "messages/error_text.hpp"

namespace leap::actors::cluster_detail {

// Takes the job off its node's books (its credit comes back).
void release(self_ptr self, job& j) {
  if (!j.node)
    return;
  auto& n = self->state.nodes[*j.node];
  if (n.in[j.k()] > 0)
    --n.in[j.k()];
  n.row.busy = n.in[0] + n.in[1] + n.in[2];
  n.row.busy_seconds += std::chrono::duration<double>(clock::now() - j.sent).count();
  j.node.reset();
}

namespace {

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
  s.by_gate[j.k()].erase(j.gate_id);
  s.jobs.erase(j.id);
}

} // namespace

void fail(self_ptr self, std::shared_ptr<job> j, const std::string& why) {
  auto text = "cluster " + kind_name(j->k()) + " job " + std::to_string(j->gate_id) + ": " + why;
  auto e = caf::make_error(caf::sec::runtime_error, text);
  std::visit([&e](auto& w) { w.rp.deliver(e); }, j->w);
  forget(self, *j);
}

void retry_or_fail(self_ptr self, std::shared_ptr<job> j, const std::string& why, bool counts) {
  auto& s = self->state;
  if (j->cancelled) {
    fail(self, j, "cancelled");
    return;
  }
  // Generation has no retry key of its own: it follows the compiler's.
  int retries = j->k() == execute_kind ? s.opts.exec_retries : s.opts.compile_retries;
  if (!counts)
    --j->tries;
  if (j->tries <= std::max(0, retries)) {
    if (counts)
      ++s.stats[j->k()].retried;
    j->queued = clock::now();
    s.queue[j->k()].push_front(j->id);
    return;
  }
  ++s.stats[j->k()].failed;
  fail(self, j, "failed on " + std::to_string(j->tries) + " tries: " + why);
}

namespace {

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
    return s.limit(a, j.k()) - a.in[j.k()] > s.limit(b, j.k()) - b.in[j.k()];
  };
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    auto& n = s.nodes[i];
    if (!s.usable(n, j.k()))
      continue;
    bool holds = j.k() == execute_kind && n.builds.count(j.as<exec_work>().req.candidate_build);
    holder_up = holder_up || holds;
    if (n.in[j.k()] >= s.limit(n, j.k()))
      continue;
    if (holds && better(best_holder, i))
      best_holder = i;
    if (better(best, i))
      best = i;
  }
  if (j.k() != execute_kind)
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
    s.remember(r.key, j->as<compile_work>().req);
  }
  r.id = j->gate_id;
  r.attempts = std::max(r.attempts, j->tries);
  j->as<compile_work>().rp.deliver(std::move(r));
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
    ++s.stats[j->k()].failed;
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
  j->as<exec_work>().rp.deliver(std::move(r.rep));
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
  j->as<generate_work>().rp.deliver(std::move(r));
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
  ++n.in[j->k()];
  n.row.busy = n.in[0] + n.in[1] + n.in[2];
  auto id = j->id;
  auto epoch = n.epoch;
  if (j->k() == generate_kind) {
    auto req = j->as<generate_work>().req;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::generate_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::generate_reply& r) { on_generate_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  } else if (j->k() == compile_kind) {
    auto req = j->as<compile_work>().req;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::compile_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::compile_reply& r) { on_compile_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  } else {
    auto req = j->as<exec_work>().req;
    req.id = id;
    self->request(n.handle, s.opts.job_timeout, msg::exec_atom_v, std::move(req))
      .then([self, id, slot, epoch](msg::node_exec_reply& r) { on_exec_reply(self, id, slot, epoch, r); },
            [self, id, slot, epoch](caf::error& e) { on_job_error(self, id, slot, epoch, e); });
  }
}

} // namespace

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

} // namespace leap::actors::cluster_detail
