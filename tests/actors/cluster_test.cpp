// The head's cluster dispatcher (actors/cluster.hpp) over in-process nodes (actors/node.hpp):
// each node's pools are supervised pools whose jobs finish on their own threads after a delay
// and record where they ran. Credit bounds what a node holds, an execute goes to the node that
// built its candidate, a lost node's jobs go elsewhere (its builds are made again where they
// run), a job lost with its node fails once it has used its retries, and jobs waiting at the
// head go out in priority order.
#include "actors/cluster.hpp"
#include "actors/node.hpp"
#include "actors/supervised_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace leap;
using namespace std::chrono_literals;

namespace {

// What happened on one node: keys built, builds run, and how many jobs its pools held at once.
struct node_log {
  std::string name;
  std::mutex mtx;
  std::set<std::string> built;
  std::vector<std::string> build_order; // sources in the order their builds finished
  std::vector<std::string> ran;
  int held = 0, max_held = 0;
};

// Counts the jobs a pool holds (queued or running) and remembers the most.
class holding_observer : public actors::pool_observer {
public:
  explicit holding_observer(std::shared_ptr<node_log> log) : log_(std::move(log)) {}
  void on_job(event e, std::uint64_t, std::uint32_t) override {
    std::lock_guard<std::mutex> lk(log_->mtx);
    if (e == event::queued)
      log_->max_held = std::max(log_->max_held, ++log_->held);
    else if (e == event::finished || e == event::withdrawn)
      --log_->held;
  }

private:
  std::shared_ptr<node_log> log_;
};

template <class Request, class Reply, class Finish>
std::shared_ptr<actors::job_runner<Request, Reply>> delayed(std::chrono::milliseconds d,
                                                             Finish finish) {
  using runner_t = actors::job_runner<Request, Reply>;
  auto r = std::make_shared<runner_t>();
  r->start = [d, finish](const Request& req, typename runner_t::done_fn done) {
    std::thread([d, finish, req, done] {
      std::this_thread::sleep_for(d);
      done(finish(req));
    }).detach();
    return typename runner_t::cancel_fn{};
  };
  r->count = [](const Reply&, msg::pool_stats&) {};
  r->retries = 0;
  return r;
}

struct cluster_fixture : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<std::shared_ptr<node_log>> logs;
  std::vector<msg::node_actor> nodes;
  std::vector<caf::actor> parts;

  void SetUp() override {
    msg::register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  void TearDown() override {
    for (auto& p : parts)
      caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
    for (auto& n : nodes)
      caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
  }

  // A node with one compiler and one executor whose jobs take `d`.
  msg::node_actor add_node(const std::string& name, std::chrono::milliseconds d = 30ms) {
    auto log = std::make_shared<node_log>();
    log->name = name;
    auto compile = delayed<msg::compile_request, msg::compile_reply>(
      d, [log](const msg::compile_request& req) -> result<msg::compile_reply> {
        std::lock_guard<std::mutex> lk(log->mtx);
        log->built.insert(req.source);
        log->build_order.push_back(req.source);
        msg::compile_reply r;
        r.id = req.id;
        r.status = env::build_status::ok;
        r.key = req.source;
        return r;
      });
    compile->observer = std::make_shared<holding_observer>(log);
    auto exec = delayed<msg::exec_request, msg::exec_reply>(
      d, [log](const msg::exec_request& req) -> result<msg::exec_reply> {
        std::lock_guard<std::mutex> lk(log->mtx);
        log->ran.push_back(req.candidate_build);
        msg::exec_reply r;
        r.id = req.id;
        r.v.st = env::status::correct;
        return r;
      });
    actors::node_options no;
    no.info.name = name;
    no.info.identity = msg::this_build_identity();
    no.info.compile_workers = 1;
    no.info.execute_workers = 1;
    no.compilers = sys->spawn(
      actors::supervised_pool<msg::compile_atom, msg::compile_request, msg::compile_reply>,
      name + " compile", std::size_t{1}, compile);
    no.executors = sys->spawn(
      actors::supervised_pool<msg::exec_atom, msg::exec_request, msg::exec_reply>,
      name + " execute", std::size_t{1}, exec);
    no.holds_build = [log](const std::string& key) {
      std::lock_guard<std::mutex> lk(log->mtx);
      return key.empty() || log->built.count(key) > 0;
    };
    parts.push_back(caf::actor_cast<caf::actor>(no.compilers));
    parts.push_back(caf::actor_cast<caf::actor>(no.executors));
    logs.push_back(log);
    nodes.push_back(actors::spawn_node(*sys, no));
    return nodes.back();
  }

  actors::cluster_handles cluster(int retries = 1) {
    actors::cluster_options co;
    co.local = nodes;
    co.identity = msg::this_build_identity();
    co.queue_per_worker = 0; // a node holds one job of a kind at a time
    co.heartbeat_seconds = 0.05;
    co.compile_retries = co.exec_retries = retries;
    co.node_wait_seconds = 5;
    auto h = actors::spawn_cluster(*sys, co);
    for (auto a : {caf::actor_cast<caf::actor>(h.dispatcher), caf::actor_cast<caf::actor>(h.compilers),
                   caf::actor_cast<caf::actor>(h.executors), caf::actor_cast<caf::actor>(h.head),
                   caf::actor_cast<caf::actor>(h.generators), caf::actor_cast<caf::actor>(h.weights)})
      parts.push_back(a);
    return h;
  }

  result<msg::compile_reply> compile(const actors::cluster_handles& h, std::uint64_t id,
                                     const std::string& key) {
    caf::scoped_actor self{*sys};
    result<msg::compile_reply> out = make_error("no answer");
    self->request(h.compilers, 10s, msg::compile_atom_v,
                  msg::compile_request{id, "t", key, env::backend::cpu, false})
      .receive([&](msg::compile_reply& r) { out = r; },
               [&](caf::error& e) { out = make_error(msg::error_text(e, *sys)); });
    return out;
  }

  result<msg::exec_reply> execute(const actors::cluster_handles& h, std::uint64_t id,
                                  const std::string& key) {
    caf::scoped_actor self{*sys};
    result<msg::exec_reply> out = make_error("no answer");
    self->request(h.executors, 10s, msg::exec_atom_v,
                  msg::exec_request{id, "t", env::backend::cpu, key, "", false})
      .receive([&](msg::exec_reply& r) { out = r; },
               [&](caf::error& e) { out = make_error(msg::error_text(e, *sys)); });
    return out;
  }

  std::size_t node_of(const std::string& key) {
    for (std::size_t i = 0; i < logs.size(); ++i) {
      std::lock_guard<std::mutex> lk(logs[i]->mtx);
      if (logs[i]->built.count(key))
        return i;
    }
    return logs.size();
  }
};

} // namespace

TEST_F(cluster_fixture, CreditBoundsWhatANodeHoldsAndSpreadsTheJobs) {
  add_node("a");
  add_node("b");
  auto h = cluster();
  // Eight compile jobs at once; each node may hold one (queue_per_worker = 0).
  caf::scoped_actor self{*sys};
  std::vector<decltype(self->request(h.compilers, 10s, msg::compile_atom_v, msg::compile_request{}))> hs;
  for (int i = 0; i < 8; ++i)
    hs.push_back(self->request(h.compilers, 10s, msg::compile_atom_v,
                               msg::compile_request{std::uint64_t(100 + i), "t",
                                                    "k" + std::to_string(i), env::backend::cpu,
                                                    false}));
  int ok = 0;
  for (std::size_t i = 0; i < hs.size(); ++i)
    hs[i].receive(
      [&, i](msg::compile_reply& r) {
        EXPECT_EQ(r.id, 100u + i); // the requester's id comes back
        EXPECT_EQ(r.key, "k" + std::to_string(i));
        ++ok;
      },
      [&](caf::error& e) { ADD_FAILURE() << msg::error_text(e, *sys); });
  EXPECT_EQ(ok, 8);
  for (auto& log : logs) {
    std::lock_guard<std::mutex> lk(log->mtx);
    EXPECT_EQ(log->max_held, 1) << log->name << " held more than its credit";
    EXPECT_GE(log->built.size(), 1u) << log->name << " got no job";
  }
}

// Jobs wait at the head in the order of their priority (lower first, then arrival), as in a
// local pool: the training pipeline's oldest groups go out first.
TEST_F(cluster_fixture, JobsWaitingAtTheHeadGoOutInPriorityOrder) {
  add_node("a", 100ms);
  auto h = cluster();
  ASSERT_TRUE(compile(h, 99, "warm_up").ok()); // the node is up: the next job starts at once
  caf::scoped_actor self{*sys};
  std::vector<decltype(self->request(h.compilers, 10s, msg::compile_atom_v, msg::compile_request{}))> hs;
  std::uint64_t id = 1;
  for (auto [src, priority] : std::vector<std::pair<std::string, std::uint64_t>>{
         {"running", 7}, {"g5_first", 5}, {"g3_first", 3}, {"g5_second", 5}, {"reference", 0},
         {"g3_second", 3}})
    hs.push_back(self->request(h.compilers, 10s, msg::compile_atom_v,
                               msg::compile_request{id++, "t", src, env::backend::cpu, false,
                                                    priority}));
  for (auto& r : hs)
    r.receive([](msg::compile_reply&) {},
              [&](caf::error& e) { ADD_FAILURE() << msg::error_text(e, *sys); });
  std::lock_guard<std::mutex> lk(logs[0]->mtx);
  EXPECT_EQ(logs[0]->build_order,
            (std::vector<std::string>{"warm_up", "running", "reference", "g3_first", "g3_second",
                                      "g5_first", "g5_second"}));
}

TEST_F(cluster_fixture, AnExecuteGoesToTheNodeThatBuiltIt) {
  add_node("a");
  add_node("b");
  auto h = cluster();
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(compile(h, i + 1, "c" + std::to_string(i)));
  for (int i = 0; i < 6; ++i) {
    auto key = "c" + std::to_string(i);
    auto r = execute(h, 50 + i, key);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r->v.st, env::status::correct);
    auto where = node_of(key);
    ASSERT_LT(where, logs.size());
    std::lock_guard<std::mutex> lk(logs[where]->mtx);
    EXPECT_NE(std::find(logs[where]->ran.begin(), logs[where]->ran.end(), key),
              logs[where]->ran.end())
      << key << " did not run where it was built";
  }
}

TEST_F(cluster_fixture, ALostNodesBuildIsMadeAgainWhereTheExecuteRuns) {
  add_node("a");
  add_node("b");
  auto h = cluster();
  ASSERT_TRUE(compile(h, 1, "kx"));
  auto built_on = node_of("kx");
  ASSERT_LT(built_on, 2u);
  auto other = 1 - built_on;
  // The node that holds the build goes away (its front actor ends: the monitor fires).
  caf::anon_send_exit(nodes[built_on], caf::exit_reason::kill);
  std::this_thread::sleep_for(100ms);
  auto r = execute(h, 2, "kx");
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->v.st, env::status::correct);
  {
    std::lock_guard<std::mutex> lk(logs[other]->mtx);
    EXPECT_TRUE(logs[other]->built.count("kx")) << "not rebuilt on the node that ran it";
    EXPECT_EQ(logs[other]->ran, std::vector<std::string>{"kx"});
  }
  caf::scoped_actor self{*sys};
  self->request(h.dispatcher, 5s, msg::stats_atom_v)
    .receive(
      [&](msg::cluster_status& s) {
        ASSERT_EQ(s.nodes.size(), 2u);
        EXPECT_EQ(s.nodes[built_on].state, msg::node_state::lost);
        EXPECT_EQ(s.nodes[built_on].lost, 1u);
        EXPECT_EQ(s.nodes[other].rebuilt, 1u);
      },
      [&](caf::error& e) { FAIL() << msg::error_text(e, *sys); });
}

// Waits (5 s at most) until node `i`'s pools have taken a job.
void wait_until_held(const std::shared_ptr<node_log>& log) {
  for (int k = 0; k < 500; ++k) {
    {
      std::lock_guard<std::mutex> lk(log->mtx);
      if (log->max_held > 0)
        return;
    }
    std::this_thread::sleep_for(10ms);
  }
}

TEST_F(cluster_fixture, AJobLostWithItsNodeRunsOnAnother) {
  add_node("a", 400ms);
  add_node("b", 30ms);
  auto h = cluster(/*retries=*/1);
  caf::scoped_actor self{*sys};
  // One job each (credit 1); a's is still running when a goes away.
  auto first = self->request(h.compilers, 10s, msg::compile_atom_v,
                             msg::compile_request{7, "t", "k1", env::backend::cpu, false});
  auto second = self->request(h.compilers, 10s, msg::compile_atom_v,
                              msg::compile_request{8, "t", "k2", env::backend::cpu, false});
  wait_until_held(logs[0]);
  caf::anon_send_exit(nodes[0], caf::exit_reason::kill);
  int ok = 0;
  for (auto* p : {&first, &second})
    p->receive([&](msg::compile_reply& r) { ok += r.status == env::build_status::ok; },
               [&](caf::error& e) { ADD_FAILURE() << msg::error_text(e, *sys); });
  EXPECT_EQ(ok, 2);
  std::lock_guard<std::mutex> lk(logs[1]->mtx);
  EXPECT_EQ(logs[1]->built, (std::set<std::string>{"k1", "k2"})) << "a's job did not move to b";
}

TEST_F(cluster_fixture, AJobLostWithItsOnlyNodeFailsOnceItUsedItsRetries) {
  add_node("slow", 400ms);
  auto h = cluster(/*retries=*/0);
  caf::scoped_actor self{*sys};
  auto pending = self->request(h.compilers, 10s, msg::compile_atom_v,
                               msg::compile_request{7, "t", "ky", env::backend::cpu, false});
  wait_until_held(logs[0]); // it is on the node now
  caf::anon_send_exit(nodes[0], caf::exit_reason::kill);
  std::string failure;
  pending.receive([&](msg::compile_reply&) { failure = "answered"; },
                  [&](caf::error& e) { failure = msg::error_text(e, *sys); });
  EXPECT_NE(failure.find("was lost"), std::string::npos) << failure;
  EXPECT_NE(failure.find("1 tries"), std::string::npos) << failure;
}

TEST_F(cluster_fixture, ANodeOfAnotherBuildIsRefused) {
  actors::node_options no;
  no.info.name = "stranger";
  no.info.identity = {"9.9.9", "ffffffffffffffff"};
  nodes.push_back(actors::spawn_node(*sys, no));
  auto h = cluster();
  caf::scoped_actor self{*sys};
  msg::cluster_status st;
  for (int k = 0; k < 100; ++k) { // until the hello has been answered (5 s at most)
    self->request(h.dispatcher, 5s, msg::stats_atom_v)
      .receive([&](msg::cluster_status& s) { st = s; },
               [&](caf::error& e) { FAIL() << msg::error_text(e, *sys); });
    if (!st.nodes.empty() && st.nodes[0].state != msg::node_state::connecting)
      break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(st.nodes.size(), 1u);
  EXPECT_EQ(st.nodes[0].state, msg::node_state::refused);
  EXPECT_NE(st.nodes[0].problem.find("9.9.9"), std::string::npos) << st.nodes[0].problem;
}

// A node cancels the jobs of a head that is gone (a killed head's work would only hold the
// workers the next head needs). The head here says hello, hands the node two compile jobs (one
// runs, one queues behind it on the single worker) and is killed: the node's compile pool counts
// them cancelled.
TEST_F(cluster_fixture, ANodeCancelsTheJobsOfAHeadThatIsGone) {
  auto node = add_node("n", 2000ms);
  auto compilers = caf::actor_cast<msg::compiler_pool_actor>(parts[parts.size() - 2]);
  auto sent = std::make_shared<std::atomic<int>>(0);
  auto head = sys->spawn([node, sent](caf::event_based_actor* self) -> caf::behavior {
    self->request(node, caf::infinite, msg::hello_atom_v, msg::this_build_identity())
      .then([self, node, sent](msg::node_info&) {
        for (std::uint64_t id : {1u, 2u}) {
          msg::compile_request r;
          r.id = id;
          r.source = "s" + std::to_string(id);
          self->request(node, caf::infinite, msg::compile_atom_v, r)
            .then([](msg::compile_reply&) {}, [](caf::error&) {});
          ++*sent;
        }
      });
    return {[](int) {}};
  });
  caf::scoped_actor self{*sys};
  auto stats = [&] {
    msg::pool_stats out;
    self->request(compilers, 5s, msg::stats_atom_v)
      .receive([&](msg::pool_stats& s) { out = s; }, [](caf::error&) {});
    return out;
  };
  for (int k = 0; k < 100 && (*sent < 2 || stats().busy == 0); ++k)
    std::this_thread::sleep_for(20ms);
  ASSERT_EQ(*sent, 2);
  ASSERT_EQ(stats().busy, 1u);
  caf::anon_send_exit(head, caf::exit_reason::kill);
  std::uint64_t cancelled = 0;
  for (int k = 0; k < 50 && cancelled < 2; ++k) {
    std::this_thread::sleep_for(20ms);
    cancelled = stats().cancelled;
  }
  EXPECT_EQ(cancelled, 2u) << "the gone head's running and queued jobs were not cancelled";
}
