// A supervised pool of worker actors, shared by the compiler pool and the executor pool.
// The pool (typed, see messages/interfaces.hpp) queues jobs, hands each to an idle worker, and
// monitors its workers: a dead worker is replaced, and its job retried once on the replacement,
// then failed with a clear reason. A worker runs one job at a time without blocking its thread:
// the job's work happens in child processes (env::process_runner) and its completion comes back
// as a message. Included only by actors/*.cpp (it pulls in CAF).
#pragma once

#include "actors/job_trace.hpp"
#include "messages/interfaces.hpp"

#include <caf/all.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace leap::actors {

// How a pool runs one job: start it, and report `done(reply, error_text)` exactly once from
// any thread; the returned function cancels it (kills its processes).
template <class Request, class Reply>
struct job_runner {
  using done_fn = std::function<void(Reply, std::string)>;
  using cancel_fn = std::function<void()>;
  std::function<cancel_fn(const Request&, done_fn)> start;
  // Classifies replies for the statistics.
  std::function<void(const Reply&, msg::pool_stats&)> count;
  // Optional: records queueing, start and end of every job (benchmarks).
  std::shared_ptr<job_trace> trace;
};

namespace detail {

// Where the jobs of one worker report their completion. Jobs finish on foreign threads (the
// process runner's I/O thread), which must never own a reference to the worker actor: dropping
// the last one there would run the actor's cleanup on that thread, after which the actor system
// may already be gone (a crash at shutdown). So only this mailbox holds the worker, and the
// worker closes it when it terminates; the lock makes a send in progress finish first, and no
// send starts afterwards. The worker is terminated explicitly by its pool (it can never become
// unreachable while this holds it).
struct reply_mailbox {
  std::mutex mtx;
  caf::actor worker; // guarded by mtx; empty once closed
  template <class... Ts>
  void send(Ts&&... xs) {
    std::lock_guard<std::mutex> lk(mtx);
    if (worker)
      caf::anon_send(worker, std::forward<Ts>(xs)...);
  }
  void close() {
    caf::actor gone;
    {
      std::lock_guard<std::mutex> lk(mtx);
      gone.swap(worker);
    }
  }
};

template <class Request, class Reply>
struct worker_state {
  std::shared_ptr<job_runner<Request, Reply>> runner;
  std::shared_ptr<reply_mailbox> mailbox = std::make_shared<reply_mailbox>();
  std::map<std::uint64_t, std::function<void()>> cancels; // running job -> cancel
  std::map<std::uint64_t, caf::response_promise> promises;
  ~worker_state() {
    // Late completions go nowhere; the worker's own thread releases it.
    mailbox->close();
    // A dying worker takes its child processes with it.
    for (auto& kv : cancels)
      if (kv.second)
        kv.second();
  }
};

template <class Atom, class Request, class Reply>
caf::behavior pool_worker(caf::stateful_actor<worker_state<Request, Reply>>* self,
                          std::shared_ptr<job_runner<Request, Reply>> runner) {
  self->state.runner = std::move(runner);
  self->state.mailbox->worker = caf::actor_cast<caf::actor>(self);
  return {
    [=](Atom, const Request& req) -> caf::result<Reply> {
      auto rp = self->make_response_promise();
      auto id = req.id;
      self->state.promises.emplace(id, rp);
      self->state.cancels[id] = self->state.runner->start(
        req, [mb = self->state.mailbox, id](Reply r, std::string err) {
          mb->send(msg::done_atom_v, id, std::move(r), std::move(err));
        });
      return caf::delegated<Reply>();
    },
    [=](msg::done_atom, std::uint64_t id, Reply& r, std::string& err) {
      auto it = self->state.promises.find(id);
      if (it == self->state.promises.end())
        return;
      if (err.empty())
        it->second.deliver(std::move(r));
      else
        it->second.deliver(caf::make_error(caf::sec::runtime_error, std::move(err)));
      self->state.promises.erase(it);
      self->state.cancels.erase(id);
    },
    [=](msg::cancel_atom, std::uint64_t id) {
      auto it = self->state.cancels.find(id);
      if (it != self->state.cancels.end() && it->second)
        it->second();
    },
    [=](msg::crash_atom) {
      throw std::runtime_error("fault injected into a pool worker");
    },
  };
}

} // namespace detail

template <class Atom, class Request, class Reply>
struct pool_state {
  struct job {
    Request req;
    caf::typed_response_promise<Reply> rp;
    int attempts = 0;
  };
  std::string name;
  std::shared_ptr<job_runner<Request, Reply>> runner;
  std::vector<caf::actor> workers;
  std::vector<bool> busy;
  std::map<std::uint64_t, std::size_t> running; // job id -> worker slot
  std::map<std::uint64_t, std::shared_ptr<job>> inflight;
  std::deque<job> queue;
  msg::pool_stats stats;
  ~pool_state() {
    // Workers live exactly as long as their pool (see reply_mailbox): they end on their own
    // threads, cancelling their jobs, before the actor system can go away.
    for (auto& w : workers)
      if (w)
        caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
};

template <class Atom, class Request, class Reply>
using pool_handle = msg::pool_actor<Atom, Request, Reply>;

template <class Atom, class Request, class Reply>
typename pool_handle<Atom, Request, Reply>::behavior_type
supervised_pool(typename pool_handle<Atom, Request, Reply>::template stateful_pointer<
                  pool_state<Atom, Request, Reply>> self,
                std::string name, std::size_t size,
                std::shared_ptr<job_runner<Request, Reply>> runner) {
  using state_t = pool_state<Atom, Request, Reply>;
  using job_t = typename state_t::job;
  auto& st = self->state;
  st.name = name;
  st.runner = runner;
  st.stats.pool = name;
  auto spawn_worker = [self] {
    auto w = self->spawn(detail::pool_worker<Atom, Request, Reply>, self->state.runner);
    self->monitor(w);
    return w;
  };
  for (std::size_t i = 0; i < std::max<std::size_t>(size, 1); ++i) {
    st.workers.push_back(spawn_worker());
    st.busy.push_back(false);
  }
  st.stats.workers = static_cast<std::uint32_t>(st.workers.size());
  // A job whose worker died: retry it once on a fresh worker, then fail it with a reason.
  auto retry_or_fail = [self](std::shared_ptr<job_t> j) {
    auto& s = self->state;
    if (j->attempts < 2) {
      ++s.stats.retried;
      s.queue.push_front(std::move(*j));
    } else {
      ++s.stats.failed;
      j->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                    s.name + ": job " + std::to_string(j->req.id)
                                      + " failed: its worker died twice (retried once)"));
    }
  };
  // Hands queued jobs to idle workers. It refers to itself weakly (the pool's handlers own it).
  auto dispatch = std::make_shared<std::function<void()>>();
  *dispatch = [self, weak_dispatch = std::weak_ptr<std::function<void()>>(dispatch), retry_or_fail] {
    auto dispatch = weak_dispatch.lock();
    if (!dispatch)
      return;
    auto& s = self->state;
    for (std::size_t slot = 0; slot < s.workers.size() && !s.queue.empty(); ++slot) {
      if (s.busy[slot])
        continue;
      auto j = std::make_shared<job_t>(std::move(s.queue.front()));
      s.queue.pop_front();
      ++j->attempts;
      auto id = j->req.id;
      s.busy[slot] = true;
      s.running[id] = slot;
      s.inflight[id] = j;
      if (s.runner->trace)
        s.runner->trace->record(job_event::kind::started, id, static_cast<std::uint32_t>(slot));
      // The worker either replies, or dies (down_msg below takes the job over).
      self->request(s.workers[slot], caf::infinite, Atom::value, j->req)
        .then(
          [self, dispatch, id, slot](Reply& r) {
            auto& s = self->state;
            auto it = s.inflight.find(id);
            if (it == s.inflight.end())
              return;
            auto job = it->second;
            s.inflight.erase(it);
            s.running.erase(id);
            s.busy[slot] = false;
            if (s.runner->trace)
              s.runner->trace->record(job_event::kind::finished, id, static_cast<std::uint32_t>(slot));
            ++s.stats.completed;
            s.runner->count(r, s.stats);
            job->rp.deliver(std::move(r));
            (*dispatch)();
          },
          [self, dispatch, retry_or_fail, id, slot](caf::error& e) {
            auto& s = self->state;
            auto it = s.inflight.find(id);
            if (it == s.inflight.end())
              return;
            auto job = it->second;
            s.inflight.erase(it);
            s.running.erase(id);
            if (s.runner->trace)
              s.runner->trace->record(job_event::kind::finished, id, static_cast<std::uint32_t>(slot));
            if (e == caf::sec::request_receiver_down) {
              retry_or_fail(job); // the slot is freed when down_msg replaces the worker
            } else {
              s.busy[slot] = false;
              ++s.stats.failed;
              job->rp.deliver(std::move(e));
            }
            (*dispatch)();
          });
    }
  };
  self->set_down_handler([self, spawn_worker, dispatch, retry_or_fail](caf::down_msg& dm) {
    auto& s = self->state;
    for (std::size_t slot = 0; slot < s.workers.size(); ++slot) {
      if (s.workers[slot].address() != dm.source)
        continue;
      std::vector<std::uint64_t> lost;
      for (auto& [id, sl] : s.running)
        if (sl == slot)
          lost.push_back(id);
      for (auto id : lost) {
        s.running.erase(id);
        if (s.runner->trace)
          s.runner->trace->record(job_event::kind::finished, id, static_cast<std::uint32_t>(slot));
        auto it = s.inflight.find(id);
        if (it != s.inflight.end()) {
          auto job = it->second;
          s.inflight.erase(it);
          retry_or_fail(job);
        }
      }
      s.workers[slot] = spawn_worker();
      s.busy[slot] = false;
      ++s.stats.worker_restarts;
      (*dispatch)();
      return;
    }
  });
  return {
    [self, dispatch](Atom, Request req) -> caf::result<Reply> {
      auto rp = self->template make_response_promise<Reply>();
      if (self->state.runner->trace)
        self->state.runner->trace->record(job_event::kind::queued, req.id);
      self->state.queue.push_back(job_t{std::move(req), rp, 0});
      (*dispatch)();
      return rp;
    },
    [self](msg::cancel_atom, std::uint64_t id) {
      auto& s = self->state;
      for (auto it = s.queue.begin(); it != s.queue.end(); ++it) {
        if (it->req.id == id) {
          ++s.stats.cancelled;
          if (s.runner->trace)
            s.runner->trace->record(job_event::kind::withdrawn, id);
          it->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                         s.name + ": job " + std::to_string(id)
                                           + " was cancelled before it started"));
          s.queue.erase(it);
          return;
        }
      }
      if (auto r = s.running.find(id); r != s.running.end()) {
        ++s.stats.cancelled;
        caf::anon_send(s.workers[r->second], msg::cancel_atom_v, id);
      }
    },
    [self](msg::stats_atom) -> msg::pool_stats {
      auto& s = self->state;
      auto out = s.stats;
      out.queued = static_cast<std::uint32_t>(s.queue.size());
      out.busy = static_cast<std::uint32_t>(std::count(s.busy.begin(), s.busy.end(), true));
      return out;
    },
    [self](msg::crash_atom, std::uint32_t slot) {
      auto& s = self->state;
      if (slot < s.workers.size())
        caf::anon_send(s.workers[slot], msg::crash_atom_v);
    },
  };
}

} // namespace leap::actors
