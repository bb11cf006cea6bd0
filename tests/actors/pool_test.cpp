// Supervision and scheduling of the supervised pool (used by the compiler, executor and
// generator pools), driven by a test-only job runner whose jobs finish on their own threads
// after a delay, like child processes do, and which fails on demand: bounded concurrency, a
// worker that dies is replaced and its job retried, a job that fails inside leap is retried and
// then fails its request with the last reason, a cancelled job is never retried, queued jobs
// cancelled before they start never run, queued jobs start in priority order.
#include "actors/queue_order.hpp"
#include "actors/supervised_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace leap;
using namespace std::chrono_literals;

namespace {

using runner_t = actors::job_runner<msg::compile_request, msg::compile_reply>;
using pool_t = msg::compiler_pool_actor;

struct counters {
  std::atomic<int> started{0};
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::mutex mtx;
  std::vector<std::string> order; // sources in the order their jobs started (guarded by mtx)
};

// Sources that fail on demand: "die_once" / "die_always" throw from the job's start on the
// first / every try (the worker dies), "fail_once" / "fail_always" report a failure inside leap.
std::shared_ptr<runner_t> delayed_runner(std::shared_ptr<counters> c, std::chrono::milliseconds d,
                                         int retries = 1) {
  auto r = std::make_shared<runner_t>();
  struct tries_t {
    std::mutex mtx;
    std::map<std::uint64_t, int> n;
  };
  auto tries = std::make_shared<tries_t>(); // workers start jobs on several threads
  r->start = [c, d, tries](const msg::compile_request& req,
                           runner_t::done_fn done) -> runner_t::cancel_fn {
    ++c->started;
    {
      std::lock_guard<std::mutex> lk(c->mtx);
      c->order.push_back(req.source);
    }
    int k = 0;
    {
      std::lock_guard<std::mutex> lk(tries->mtx);
      k = ++tries->n[req.id];
    }
    if (req.source == "die_always" || (req.source == "die_once" && k == 1))
      throw std::runtime_error("the worker dies on demand");
    int now = ++c->running;
    int prev = c->max_running.load();
    while (now > prev && !c->max_running.compare_exchange_weak(prev, now)) {
    }
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    std::thread([c, d, req, done, cancelled, k] {
      std::this_thread::sleep_for(d);
      --c->running;
      if (cancelled->load()) {
        done(make_error("cancelled"));
        return;
      }
      if (req.source == "fail_always" || (req.source == "fail_once" && k == 1)) {
        done(make_error("failing on demand (try " + std::to_string(k) + ")"));
        return;
      }
      msg::compile_reply rep;
      rep.id = req.id;
      rep.status = env::build_status::ok;
      rep.key = req.source;
      done(rep);
    }).detach();
    return [cancelled] { *cancelled = true; };
  };
  r->retries = retries;
  r->count = [](const msg::compile_reply& r, msg::pool_stats& s) {
    if (r.cached)
      ++s.cache_hits;
  };
  return r;
}

struct pool_fixture : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  void SetUp() override {
    msg::register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  pool_t spawn(std::size_t n, std::shared_ptr<runner_t> r) {
    return sys->spawn(actors::supervised_pool<msg::compile_atom, msg::compile_request, msg::compile_reply>,
                      std::string("test_pool"), n, r);
  }
};

} // namespace

TEST_F(pool_fixture, BoundsConcurrencyAndAnswersEveryJob) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(2, delayed_runner(c, 30ms));
  caf::scoped_actor self{*sys};
  std::vector<decltype(self->request(pool, 5s, msg::compile_atom_v, msg::compile_request{}))> hs;
  for (std::uint64_t i = 1; i <= 6; ++i)
    hs.push_back(self->request(pool, 5s, msg::compile_atom_v,
                               msg::compile_request{i, "t", "src" + std::to_string(i), env::backend::cpu, false}));
  for (std::size_t i = 0; i < hs.size(); ++i)
    hs[i].receive([&](msg::compile_reply& r) { EXPECT_EQ(r.key, "src" + std::to_string(i + 1)); },
                  [&](caf::error& e) { FAIL() << sys->render(e); });
  EXPECT_EQ(c->started, 6);
  EXPECT_LE(c->max_running, 2);
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) {
      EXPECT_EQ(s.completed, 6u);
      EXPECT_EQ(s.workers, 2u);
      EXPECT_EQ(s.busy, 0u);
    },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST(queue_order, LowerPriorityFirstThenArrivalAndAFrontEntryStaysInFront) {
  using item = std::pair<std::uint64_t, char>; // priority, name
  std::deque<item> q;
  auto prio = [](const item& i) { return i.first; };
  for (item i : {item{5, 'a'}, item{3, 'b'}, item{5, 'c'}, item{1, 'd'}, item{3, 'e'}})
    actors::insert_by_priority(q, i, prio);
  std::string names;
  for (auto& i : q)
    names += i.second;
  EXPECT_EQ(names, "dbeac");
  // A retry is put in front whatever its priority; later arrivals go behind it unless their
  // priority value is lower than the retry's.
  q.push_front(item{2, 'r'});
  actors::insert_by_priority(q, item{0, 'z'}, prio);
  actors::insert_by_priority(q, item{4, 'y'}, prio);
  names.clear();
  for (auto& i : q)
    names += i.second;
  EXPECT_EQ(names, "zrdbeyac");
}

// The training pipeline sends each job with its group id as priority, so the groups the learner
// waits for are built and run before newer ones (actors/gatekeeper.cpp).
TEST_F(pool_fixture, QueuedJobsStartInPriorityOrderThenArrival) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 100ms));
  caf::scoped_actor self{*sys};
  std::vector<decltype(self->request(pool, 5s, msg::compile_atom_v, msg::compile_request{}))> hs;
  auto send = [&](std::uint64_t id, const char* src, std::uint64_t priority) {
    msg::compile_request r{id, "t", src, env::backend::cpu, false, priority};
    hs.push_back(self->request(pool, 10s, msg::compile_atom_v, std::move(r)));
  };
  send(1, "running", 7); // starts at once: the only worker is idle
  send(2, "g5_first", 5);
  send(3, "g3_first", 3);
  send(4, "g5_second", 5);
  send(5, "reference", 0);
  send(6, "g3_second", 3);
  for (auto& h : hs)
    h.receive([](msg::compile_reply&) {}, [&](caf::error& e) { FAIL() << sys->render(e); });
  std::lock_guard<std::mutex> lk(c->mtx);
  EXPECT_EQ(c->order, (std::vector<std::string>{"running", "reference", "g3_first", "g3_second",
                                                "g5_first", "g5_second"}));
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_F(pool_fixture, DeadWorkerIsReplacedAndItsJobRetriedOnce) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 50ms));
  caf::scoped_actor self{*sys};
  self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{1, "t", "die_once", env::backend::cpu, false})
    .receive(
      [&](msg::compile_reply& r) {
        EXPECT_EQ(r.key, "die_once");
        EXPECT_EQ(r.attempts, 2);
      },
      [&](caf::error& e) { FAIL() << sys->render(e); });
  EXPECT_EQ(c->started, 2); // the try that killed its worker and the retry
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) {
      EXPECT_EQ(s.worker_restarts, 1u);
      EXPECT_EQ(s.retried, 1u);
      EXPECT_EQ(s.completed, 1u);
    },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_F(pool_fixture, JobFailsWithReasonWhenItsWorkerDiesOnEveryTry) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 50ms));
  caf::scoped_actor self{*sys};
  self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{1, "t", "die_always", env::backend::cpu, false})
    .receive([&](msg::compile_reply&) { FAIL() << "expected an error"; },
             [&](caf::error& e) {
               auto text = msg::error_text(e, *sys);
               EXPECT_EQ(text, "test_pool: job 1 failed on 2 tries: its worker died");
             });
  // The pool keeps serving after both restarts.
  self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{2, "t", "b", env::backend::cpu, false})
    .receive([&](msg::compile_reply& r) { EXPECT_EQ(r.key, "b"); },
             [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) {
      EXPECT_EQ(s.worker_restarts, 2u);
      EXPECT_EQ(s.failed, 1u);
    },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_F(pool_fixture, FailureInsideLeapIsRetriedThenFailsTheRequestWithItsReason) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 10ms, /*retries=*/2));
  caf::scoped_actor self{*sys};
  self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{1, "t", "fail_once", env::backend::cpu, false})
    .receive([&](msg::compile_reply& r) { EXPECT_EQ(r.attempts, 2); },
             [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{2, "t", "fail_always", env::backend::cpu, false})
    .receive([&](msg::compile_reply&) { FAIL() << "expected an error"; },
             [&](caf::error& e) {
               EXPECT_EQ(msg::error_text(e, *sys),
                         "test_pool: job 2 failed on 3 tries: failing on demand (try 3)");
             });
  EXPECT_EQ(c->started, 2 + 3);
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) {
      EXPECT_EQ(s.retried, 1u + 2u);
      EXPECT_EQ(s.failed, 1u);
      EXPECT_EQ(s.completed, 1u);
      EXPECT_EQ(s.worker_restarts, 0u);
    },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_F(pool_fixture, CancelledRunningJobIsNeverRetried) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 200ms));
  caf::scoped_actor self{*sys};
  auto h = self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{1, "t", "a", env::backend::cpu, false});
  std::this_thread::sleep_for(50ms); // running
  caf::anon_send(pool, msg::cancel_atom_v, std::uint64_t{1});
  h.receive([&](msg::compile_reply&) { FAIL() << "a cancelled job answered"; },
            [&](caf::error& e) {
              EXPECT_EQ(msg::error_text(e, *sys), "test_pool: job 1 was cancelled");
            });
  EXPECT_EQ(c->started, 1);
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) {
      EXPECT_EQ(s.cancelled, 1u);
      EXPECT_EQ(s.retried, 0u);
    },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_F(pool_fixture, QueuedJobCancelledBeforeItStartsNeverRuns) {
  auto c = std::make_shared<counters>();
  auto pool = spawn(1, delayed_runner(c, 200ms));
  caf::scoped_actor self{*sys};
  auto h1 = self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{1, "t", "a", env::backend::cpu, false});
  auto h2 = self->request(pool, 10s, msg::compile_atom_v, msg::compile_request{2, "t", "b", env::backend::cpu, false});
  std::this_thread::sleep_for(50ms);
  caf::anon_send(pool, msg::cancel_atom_v, std::uint64_t{2});
  h1.receive([&](msg::compile_reply& r) { EXPECT_EQ(r.status, env::build_status::ok); },
             [&](caf::error& e) { FAIL() << sys->render(e); });
  h2.receive([&](msg::compile_reply&) { FAIL() << "cancelled job answered"; },
             [&](caf::error& e) { EXPECT_NE(sys->render(e).find("cancelled"), std::string::npos); });
  EXPECT_EQ(c->started, 1);
  self->request(pool, 5s, msg::stats_atom_v).receive(
    [&](msg::pool_stats& s) { EXPECT_EQ(s.cancelled, 1u); },
    [&](caf::error& e) { FAIL() << sys->render(e); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

// The process runner's I/O thread reports a job, then still holds the job's completion callback
// for a moment (unwinding, destroying the job) while the caller, answered, shuts the actor
// system down. That thread must not own the worker: if it did, dropping the last reference
// there would run the worker's cleanup on it while the system is being destroyed (a crash at
// shutdown), and the system would wait for it. A report after the shutdown goes nowhere.
TEST_F(pool_fixture, CompletionCallbackOutlivingTheActorSystemIsHarmless) {
  std::promise<void> system_gone;
  auto gone = system_gone.get_future().share();
  std::promise<std::thread> job_thread_p;
  auto r = std::make_shared<runner_t>();
  r->start = [&job_thread_p, gone](const msg::compile_request& req,
                                   runner_t::done_fn done) -> runner_t::cancel_fn {
    job_thread_p.set_value(std::thread([id = req.id, done = std::move(done), gone]() mutable {
      msg::compile_reply rep;
      rep.id = id;
      rep.status = env::build_status::ok;
      done(rep);
      gone.wait_for(5s); // still holding `done` while the system goes away
      done(rep);         // a late, second report
      done = nullptr;
    }));
    return {};
  };
  r->count = [](const msg::compile_reply&, msg::pool_stats&) {};
  auto pool = spawn(1, r);
  {
    caf::scoped_actor self{*sys};
    self->request(pool, 5s, msg::compile_atom_v, msg::compile_request{1, "t", "a", env::backend::cpu, false})
      .receive([&](msg::compile_reply& rep) { EXPECT_EQ(rep.status, env::build_status::ok); },
               [&](caf::error& e) { FAIL() << sys->render(e); });
  }
  auto job_thread = job_thread_p.get_future().get();
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  pool = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  sys.reset();
  auto took = std::chrono::steady_clock::now() - t0;
  system_gone.set_value();
  job_thread.join();
  EXPECT_LT(took, 3s) << "the actor system's shutdown waited for a thread outside it";
}

// Destroying the pool ends its workers, which cancel their running jobs.
TEST_F(pool_fixture, ShutdownCancelsRunningJobs) {
  auto cancelled = std::make_shared<std::atomic<int>>(0);
  auto r = std::make_shared<runner_t>();
  r->start = [cancelled](const msg::compile_request&, runner_t::done_fn) -> runner_t::cancel_fn {
    return [cancelled] { ++*cancelled; };
  };
  r->count = [](const msg::compile_reply&, msg::pool_stats&) {};
  auto pool = spawn(2, r);
  caf::scoped_actor self{*sys};
  for (std::uint64_t i = 1; i <= 2; ++i)
    self->send(pool, msg::compile_atom_v, msg::compile_request{i, "t", "a", env::backend::cpu, false});
  for (int k = 0; k < 200; ++k) {
    bool busy = false;
    self->request(pool, 5s, msg::stats_atom_v)
      .receive([&](msg::pool_stats& s) { busy = s.busy == 2; }, [&](caf::error&) {});
    if (busy)
      break;
    std::this_thread::sleep_for(10ms);
  }
  self->send_exit(pool, caf::exit_reason::user_shutdown);
  for (int k = 0; k < 500 && cancelled->load() < 2; ++k)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(cancelled->load(), 2);
}
