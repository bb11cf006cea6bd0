// A supervised pool of worker actors, shared by the compiler, executor and generator pools.
// The pool (typed, msg::pool_actor) queues jobs, hands each to an idle worker, and monitors its
// workers: a dead worker is replaced. One retry rule covers every infrastructure failure of a
// job, a worker that died under it or a job the runner reports failed (an error, not a reply:
// a tool that would not start, a compiler stage killed by a signal, the reference crashing):
// the job runs up to `retries` more times, then its request fails with an error naming the pool,
// the job and the last reason. A cancelled job is never retried. Queued jobs start in the order
// of their request's `priority` (lower first, then arrival; a retry goes first). A worker runs
// one job at a time without blocking its thread: the job's work happens in child processes or on
// the generation engine's threads, and its completion comes back as a message. Included only by actors/*.cpp,
// bench/ and tests/ (it pulls in CAF).
#pragma once

#include "actors/pool_options.hpp"
#include "actors/queue_order.hpp"
#include "common/result.hpp"
#include "messages/error_text.hpp"
#include "messages/interfaces.hpp"

#include <caf/all.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace leap::actors {

// How a pool runs one job: start it, and report `done` exactly once from any thread, with the
// reply or with an error (a failure inside leap, which the pool retries); the returned function
// cancels it (kills its processes).
template <class Request, class Reply>
struct job_runner {
  using done_fn = std::function<void(result<Reply>)>;
  using cancel_fn = std::function<void()>;
  std::function<cancel_fn(const Request&, done_fn)> start;
  // Classifies replies for the statistics.
  std::function<void(const Reply&, msg::pool_stats&)> count;
  // Optional: sees queueing, start and end of every job (benchmarks).
  std::shared_ptr<pool_observer> observer;
  // More tries after an infrastructure failure (compiler.retries, executor.retries).
  int retries = 1;
};

namespace detail {

// Replies that say how many tries they took.
template <class Reply, class = void>
struct has_attempts : std::false_type {};
template <class Reply>
struct has_attempts<Reply, std::void_t<decltype(std::declval<Reply&>().attempts)>>
  : std::true_type {};

// The queue order of a request: its `priority` field (see msg::compile_request), 0 for
// request types without one.
template <class Request, class = void>
struct has_priority : std::false_type {};
template <class Request>
struct has_priority<Request, std::void_t<decltype(std::declval<Request&>().priority)>>
  : std::true_type {};
template <class Request>
std::uint64_t priority_of(const Request& r) {
  if constexpr (has_priority<Request>::value)
    return r.priority;
  else
    return 0;
}

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

// A worker: runs one job at a time for its pool. An exception from the runner kills the worker
// (the pool replaces it and retries the job).
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
        req, [mb = self->state.mailbox, id](result<Reply> r) {
          if (r)
            mb->send(msg::done_atom_v, id, std::move(*r));
          else
            mb->send(msg::done_atom_v, id, r.message());
        });
      return caf::delegated<Reply>();
    },
    [=](msg::done_atom, std::uint64_t id, Reply& r) {
      auto it = self->state.promises.find(id);
      if (it == self->state.promises.end())
        return;
      it->second.deliver(std::move(r));
      self->state.promises.erase(it);
      self->state.cancels.erase(id);
    },
    [=](msg::done_atom, std::uint64_t id, std::string& failure) {
      auto it = self->state.promises.find(id);
      if (it == self->state.promises.end())
        return;
      it->second.deliver(caf::make_error(caf::sec::runtime_error, std::move(failure)));
      self->state.promises.erase(it);
      self->state.cancels.erase(id);
    },
    [=](msg::cancel_atom, std::uint64_t id) {
      auto it = self->state.cancels.find(id);
      if (it != self->state.cancels.end() && it->second)
        it->second();
    },
  };
}

} // namespace detail

template <class Atom, class Request, class Reply>
struct pool_state {
  struct job {
    Request req;
    caf::typed_response_promise<Reply> rp;
    int attempts = 0;        // tries started
    bool cancelled = false;  // cancelled while running: its outcome is delivered, never retried
  };
  std::string name;
  std::shared_ptr<job_runner<Request, Reply>> runner;
  std::vector<caf::actor> workers;
  std::vector<bool> busy;
  std::map<std::uint64_t, std::size_t> running; // job id -> worker slot
  std::map<std::uint64_t, std::shared_ptr<job>> inflight;
  std::deque<job> queue;
  msg::pool_stats stats;
  void observe(pool_observer::event e, std::uint64_t id, std::size_t slot = 0) {
    if (runner->observer)
      runner->observer->on_job(e, id, static_cast<std::uint32_t>(slot));
  }
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
  using event = pool_observer::event;
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
  // An infrastructure failure of a try: run the job again (first in line), or fail it once it
  // used its retries.
  auto retry_or_fail = [self](std::shared_ptr<job_t> j, const std::string& why) {
    auto& s = self->state;
    if (j->cancelled) {
      j->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                    s.name + ": job " + std::to_string(j->req.id)
                                      + " was cancelled"));
      return;
    }
    if (j->attempts <= std::max(0, s.runner->retries)) {
      ++s.stats.retried;
      s.queue.push_front(std::move(*j));
    } else {
      ++s.stats.failed;
      j->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                    s.name + ": job " + std::to_string(j->req.id) + " failed on "
                                      + std::to_string(j->attempts) + " tries: " + why));
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
      s.observe(event::started, id, slot);
      // The worker either replies, fails the job, or dies (down_msg below frees its slot).
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
            s.observe(event::finished, id, slot);
            ++s.stats.completed;
            s.runner->count(r, s.stats);
            if constexpr (detail::has_attempts<Reply>::value)
              r.attempts = job->attempts;
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
            s.observe(event::finished, id, slot);
            if (e == caf::sec::request_receiver_down) {
              retry_or_fail(job, "its worker died"); // the slot is freed when down_msg replaces it
            } else {
              s.busy[slot] = false;
              retry_or_fail(job, msg::error_text(e, self->system()));
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
        s.observe(event::finished, id, slot);
        auto it = s.inflight.find(id);
        if (it != s.inflight.end()) {
          auto job = it->second;
          s.inflight.erase(it);
          retry_or_fail(job, "its worker died");
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
      self->state.observe(event::queued, req.id);
      insert_by_priority(self->state.queue, job_t{std::move(req), rp, 0, false},
                         [](const job_t& j) { return detail::priority_of(j.req); });
      (*dispatch)();
      return rp;
    },
    [self](msg::cancel_atom, std::uint64_t id) {
      auto& s = self->state;
      for (auto it = s.queue.begin(); it != s.queue.end(); ++it) {
        if (it->req.id == id) {
          ++s.stats.cancelled;
          s.observe(event::withdrawn, id);
          it->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                         s.name + ": job " + std::to_string(id)
                                           + " was cancelled before it started"));
          s.queue.erase(it);
          return;
        }
      }
      if (auto r = s.running.find(id); r != s.running.end()) {
        ++s.stats.cancelled;
        if (auto j = s.inflight.find(id); j != s.inflight.end())
          j->second->cancelled = true;
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
  };
}

} // namespace leap::actors
