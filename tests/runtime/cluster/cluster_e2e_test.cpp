// The cluster end to end on loopback: `leap node` processes serving `leap check` and `leap train`
// (real nvcc + the CPU emulation), a node killed with SIGKILL in the middle of a run and started
// again, TLS with mutual authentication (certificates made by the openssl CLI at test time) and
// the names they carry, and a node of a different message set refused with both versions named.
// Every process is bounded in time and none is left behind.
#include "actors/node.hpp"
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "messages/build_identity.hpp"
#include "runtime/cluster/transport.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/cluster/test_pki.hpp"
#include "tests/runtime/commands/jsonl.hpp"
#include "tests/runtime/commands/process_killer.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/prctl.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <regex>
#include <thread>

namespace fs = std::filesystem;
using namespace leap;
using test::leap_process;
using test::make_pki;

namespace {

const std::string candidates = std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/";

struct cluster_fixture : ::testing::Test {
  std::string root;
  std::vector<std::unique_ptr<leap_process>> procs;

  void SetUp() override {
    // Orphans of the test's processes come here, so anything left behind is seen in TearDown.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    root = *make_temp_dir(temp_root(), "leap-cluster-");
    // The nodes' work directories live in here (TearDown kills them, so they cannot remove
    // their own): the sandbox's uid must be able to pass through.
    fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  }
  void TearDown() override {
    for (auto& p : procs)
      p->kill(SIGKILL);
    procs.clear();
    int status = 0;
    while (::waitpid(-1, &status, WNOHANG) > 0) {
    }
    auto left = test::descendants(::getpid(), {});
    std::string names;
    for (auto& p : left)
      names += p.comm + " ";
    EXPECT_TRUE(left.empty()) << "left behind: " << names;
    std::error_code ec;
    fs::remove_all(root, ec);
  }

  leap_process& start(const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), LEAP_BINARY);
    procs.push_back(std::make_unique<leap_process>(args, root + "/" + name));
    return *procs.back();
  }

  // A `leap node` with its own build cache; returns its HOST:PORT once it is ready.
  std::string start_node(const std::string& name, std::vector<std::string> extra = {},
                         const std::string& listen = "127.0.0.1:0",
                         const std::string& join = "") {
    std::vector<std::string> args = {"--set", "environment.backend=cpu",
                                     "--set", "environment.cache_dir=" + root + "/cache-" + name,
                                     "--set", "environment.work_dir=" + root + "/work-" + name,
                                     "--set", "compiler.workers=1", "--set", "executor.workers=1",
                                     "--set", "executor.seed=7"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"node", "--listen", listen});
    if (!join.empty())
      args.insert(args.end(), {"--join", join});
    auto& p = start(name, args);
    auto addr = p.wait_for("node ready on ([0-9.]+:[0-9]+)", std::chrono::seconds(60));
    EXPECT_TRUE(addr) << name << " not ready:\n" << p.out() << p.err();
    return addr ? *addr : std::string();
  }

  // `leap check --json` of one candidate; the verdict, or the stderr text on failure.
  nlohmann::json check(const std::string& name, const std::string& source,
                       std::vector<std::string> extra) {
    return verdict(start_check(name, source, std::move(extra)));
  }

  // check() in two halves, so independent checks (the single-process verdicts a test compares
  // with) can run at once: start_check starts `leap check`, verdict waits for its answer.
  leap_process& start_check(const std::string& name, const std::string& source,
                            std::vector<std::string> extra) {
    std::vector<std::string> args = {"--set", "environment.backend=cpu",
                                     "--set", "environment.cache_dir=" + root + "/cache-" + name,
                                     "--set", "executor.seed=7"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"check", "--task", "vector_add", "--source", source, "--json"});
    return start(name, args);
  }
  static nlohmann::json verdict(leap_process& p) {
    if (!p.exited(std::chrono::seconds(120))) {
      p.kill(SIGKILL);
      return {{"failure", "timed out"}};
    }
    if (!p.exited_ok())
      return {{"failure", p.err()}};
    return nlohmann::json::parse(p.out());
  }

  // `leap train` of the tiny model from `warm` into root/run through `nodes`: the head's own
  // cache, a 0.2 s heartbeat, then `sets` (more --set values).
  std::vector<std::string> train_args(const std::string& warm, const std::vector<std::string>& nodes,
                                      const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"--set", "train.warm_start=" + warm};
    for (auto& s : test::tiny)
      args.insert(args.end(), {"--set", s});
    for (const auto& s : std::vector<std::string>{"environment.cache_dir=" + root + "/cache-head",
                                                  "cluster.heartbeat_seconds=0.2", nodes_key(nodes)})
      args.insert(args.end(), {"--set", s});
    for (const auto& s : sets)
      args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"train", "--out", root + "/run"});
    return args;
  }

  // Waits until the run in root/run has written `rows` steps, `head` exited or `limit` passed;
  // returns the steps written.
  std::size_t wait_for_steps(std::size_t rows, leap_process& head, std::chrono::seconds limit) {
    const auto t0 = std::chrono::steady_clock::now();
    while (test::read_jsonl(root + "/run/metrics.jsonl").size() < rows
           && std::chrono::steady_clock::now() - t0 < limit && !head.exited(std::chrono::milliseconds(0)))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return test::read_jsonl(root + "/run/metrics.jsonl").size();
  }

  static std::string nodes_key(const std::vector<std::string>& addrs) {
    std::string v;
    for (auto& a : addrs)
      v += (v.empty() ? "\"" : ", \"") + a + "\"";
    return "cluster.nodes=[" + v + "]";
  }
};

TEST_F(cluster_fixture, CheckThroughTwoNodesGivesTheSingleProcessVerdicts) {
  auto a = start_node("node-a");
  auto b = start_node("node-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const std::vector<std::string> files = {"grid_stride.cu", "float4_gridstride.cu", "compile_error.cu",
                                          "wrong_answer.cu", "null_deref.cu", "no_entry.cu", "oob_write.cu"};
  // The single-process verdicts, all at once (each its own process and cache, no node involved)
  // and all finished before the first head: then each candidate through the nodes, one head
  // after another, with nothing else of the test's running.
  std::vector<leap_process*> started;
  for (std::size_t n = 0; n < files.size(); ++n)
    started.push_back(&start_check("local-" + std::to_string(n), candidates + files[n], {}));
  std::vector<nlohmann::json> locals;
  for (auto* p : started)
    locals.push_back(verdict(*p));
  for (std::size_t n = 0; n < files.size(); ++n) {
    const auto& file = files[n];
    const auto& local = locals[n];
    auto remote = check("head-" + std::to_string(n), candidates + file,
                        {"--set", nodes_key({a, b})});
    ASSERT_FALSE(local.contains("failure")) << file << ": " << local.dump();
    ASSERT_FALSE(remote.contains("failure")) << file << ": " << remote.dump();
    for (auto key : {"status", "reason", "trials_run", "trials_passed", "max_abs_error",
                     "mismatch_index", "emulation_unsupported"})
      EXPECT_EQ(local[key], remote[key]) << file << " " << key;
    EXPECT_EQ(remote["cached"], false) << file;
  }
  // `leap tasks verify` through the nodes: the reference runs' kept inputs and outputs come back
  // as bytes and are compared with the LibTorch oracles here.
  auto& verify = start("verify", {"--set", "environment.backend=cpu",
                                  "--set", "environment.cache_dir=" + root + "/cache-verify",
                                  "--set", nodes_key({a, b}), "tasks", "verify", "--task",
                                  "vector_add", "--task", "relu"});
  ASSERT_TRUE(verify.exited(std::chrono::seconds(120)));
  EXPECT_TRUE(verify.exited_ok()) << verify.out() << verify.err();
  EXPECT_NE(verify.out().find("2 passed, 0 failed"), std::string::npos) << verify.out();
  // Both nodes did work: the node that did not compile a candidate built what it ran.
  for (auto& p : procs) {
    if (p->out().find("node ready") != std::string::npos) {
      EXPECT_NE(p->err().find("head connected"), std::string::npos) << p->err();
    }
  }
  // SIGTERM drains each node: it exits 0 and says how many jobs it did.
  for (auto& p : procs) {
    if (p->out().find("node ready") == std::string::npos)
      continue;
    p->kill(SIGTERM);
    ASSERT_TRUE(p->exited(std::chrono::seconds(30)));
    EXPECT_TRUE(p->exited_ok()) << p->err();
    EXPECT_NE(p->err().find("stopped after"), std::string::npos) << p->err();
  }
}

TEST_F(cluster_fixture, TrainSurvivesANodeKilledMidRunAndUsesItAgainWhenItReturns) {
  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  auto a = start_node("node-a");
  auto b = start_node("node-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const int steps = 10, groups_per_step = 2, g = 4;
  const std::string out = root + "/run";
  auto& head = start("head", train_args(warm, {a, b},
                                        {"train.steps=" + std::to_string(steps),
                                         "train.group_size=" + std::to_string(g), "compiler.retries=2",
                                         "executor.retries=2", "cluster.local_roles=[\"generate\"]"}));
  // After the first step, node a dies as the OOM killer would take it.
  ASSERT_GE(wait_for_steps(1, head, std::chrono::seconds(120)), 1u) << head.err();
  // Frozen first for 0.3 s (less than the 0.6 s the heartbeat allows), so jobs sent to it are
  // still on it when it dies.
  procs[0]->kill(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  procs[0]->kill(SIGKILL);
  auto t_kill = std::chrono::steady_clock::now();
  ASSERT_TRUE(head.wait_for("node " + a + " lost", std::chrono::seconds(30), true)) << head.err();
  double lost_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_kill).count();
  // It comes back on the same address.
  auto again = start_node("node-a2", {}, a);
  ASSERT_EQ(again, a);
  bool rejoined = head.wait_for("node " + a + " rejoined", std::chrono::seconds(60), true).has_value();
  // Node b freezes (a hung machine: its connection stays open) longer than the heartbeat allows
  // (3 x 0.2 s): it is lost by the heartbeat, and used again once it answers.
  bool froze = false;
  if (!head.exited(std::chrono::milliseconds(0))) {
    procs[1]->kill(SIGSTOP);
    froze = head.wait_for("node " + b + " lost \\(heartbeat", std::chrono::seconds(10), true)
              .has_value();
    procs[1]->kill(SIGCONT);
  }
  ASSERT_TRUE(head.exited(std::chrono::seconds(600))) << "leap train did not finish";
  ASSERT_TRUE(head.exited_ok()) << head.err() << head.out();
  EXPECT_TRUE(rejoined) << "the restarted node was not used again:\n" << head.err();
  EXPECT_TRUE(froze) << "the frozen node was not lost by the heartbeat:\n" << head.err();

  auto metrics = test::read_jsonl(out + "/metrics.jsonl");
  ASSERT_EQ(metrics.size(), static_cast<std::size_t>(steps));
  // Every group accounts for all G attempts.
  auto groups = test::read_jsonl(out + "/groups.jsonl");
  ASSERT_EQ(groups.size(), static_cast<std::size_t>(steps * groups_per_step));
  int dropped = 0;
  for (auto& grp : groups) {
    ASSERT_EQ(grp["attempts"].size(), static_cast<std::size_t>(g)) << grp.dump();
    for (auto& at : grp["attempts"])
      dropped += at["dropped"].get<bool>() ? 1 : 0;
  }
  // The per-node figures: node a lost once and back, its jobs re-run elsewhere.
  auto& last = metrics.back();
  ASSERT_TRUE(last.contains("nodes")) << last.dump();
  nlohmann::json node_a;
  for (auto& nd : last["nodes"])
    if (nd["node"] == a)
      node_a = nd;
  ASSERT_FALSE(node_a.is_null()) << last.dump();
  EXPECT_GE(node_a["lost"].get<int>(), 1);
  EXPECT_GE(node_a["rejoined"].get<int>(), 1);
  EXPECT_GE(node_a["rerun"].get<int>(), 1) << "no job was on the node when it died";
  int rebuilt = 0;
  for (auto& nd : last["nodes"])
    rebuilt += nd["rebuilt"].get<int>();
  // The per-step "infra" figures add up to the run's: attempts lost, nodes lost and back, jobs
  // re-run elsewhere.
  long long step_lost = 0, step_rejoined = 0, step_rerun = 0, step_dropped = 0;
  for (auto& row : metrics) {
    ASSERT_TRUE(row.contains("infra")) << row.dump();
    step_lost += row["infra"]["nodes_lost"].get<long long>();
    step_rejoined += row["infra"]["nodes_rejoined"].get<long long>();
    step_rerun += row["infra"]["jobs_rerun"].get<long long>();
    step_dropped += row["infra"]["attempts_lost"].get<long long>();
    EXPECT_EQ(row["infra"]["attempts_lost"], row["dropped"]) << row.dump();
  }
  long long run_lost = 0, run_rejoined = 0, run_rerun = 0;
  for (auto& nd : last["nodes"]) {
    run_lost += nd["lost"].get<long long>();
    run_rejoined += nd["rejoined"].get<long long>();
    run_rerun += nd["rerun"].get<long long>();
  }
  EXPECT_EQ(step_lost, run_lost);
  EXPECT_EQ(step_rejoined, run_rejoined);
  EXPECT_EQ(step_rerun, run_rerun);
  EXPECT_EQ(step_dropped, dropped);
  std::printf("[ cluster ] node lost %.2f s after SIGKILL; %d jobs re-run elsewhere; %d builds "
              "made again on the node that ran them; %d of %d attempts dropped; node a did %d "
              "jobs in its two lives\n",
              lost_after, node_a["rerun"].get<int>(), rebuilt, dropped,
              steps * groups_per_step * g, node_a["done"].get<int>());
  EXPECT_NE(head.out().find("nodes:"), std::string::npos) << head.out();
  for (auto& p : procs)
    p->kill(SIGTERM);
  for (auto& p : procs)
    EXPECT_TRUE(p->exited(std::chrono::seconds(30)));
}

// The --set values of a TLS identity: dir/who.pem and .key, trusting dir/ca.pem.
std::vector<std::string> tls(const std::string& dir, const std::string& who,
                             const std::string& ca = "ca") {
  return {"--set", "cluster.tls_cert=" + dir + "/" + who + ".pem",
          "--set", "cluster.tls_key=" + dir + "/" + who + ".key",
          "--set", "cluster.tls_ca=" + dir + "/" + ca + ".pem"};
}

// Joining over TLS, the way a cluster off loopback runs: the head (certificate DNS:head.example)
// dials its listed node and the joining node back by address (their certificates name
// 127.0.0.1); the joining node and `leap cluster status` dial the head by address and accept
// its certificate through cluster.tls_peer_names. A node whose certificate another CA signed
// cannot join: it says so and keeps trying, and the head never lists it.
TEST_F(cluster_fixture, ANodeThatJoinsARunningHeadOverTlsIsUsedAndClusterStatusShowsIt) {
  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  const std::string pki = root + "/pki";
  fs::create_directories(pki);
  ASSERT_TRUE(make_pki(pki)) << "the openssl CLI could not make test certificates";
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::string> head_name = {"--set", "cluster.tls_peer_names=[\"head.example\"]"};
  auto a = start_node("node-a", tls(pki, "node"));
  ASSERT_FALSE(a.empty());
  auto port = runtime::free_port("127.0.0.1");
  ASSERT_TRUE(port) << port.message();
  const std::string listen = "127.0.0.1:" + std::to_string(*port);
  const std::string out = root + "/run";
  std::vector<std::string> head_args = tls(pki, "head");
  // A 1 s heartbeat, not the fixture's 0.2 s: with a stranger failing TLS handshakes every 3 s
  // on the head, 0.2 s beats were missed on a loaded 2-core machine and the nodes counted lost.
  for (auto& kv : train_args(warm, {a}, {"train.steps=8", "train.group_size=4", "cluster.listen=" + listen,
                                         "cluster.heartbeat_seconds=1"}))
    head_args.push_back(kv);
  auto& head = start("head", head_args);
  ASSERT_TRUE(head.wait_for("nodes may join at", std::chrono::seconds(120), true)) << head.err();
  // A node that was never listed asks to be used; it also generates (the head does not: its
  // cluster.local_roles is empty), from the head's weights, which reach it at every step.
  auto c = start_node("node-c",
                      with(with(tls(pki, "node"), head_name),
                           {"--set", "node.roles=[\"compile\", \"execute\", \"generate\"]",
                            "--set", "node.checkpoint=" + warm, "--set", "train.generators=1"}),
                      "127.0.0.1:0", listen);
  ASSERT_FALSE(c.empty());
  auto& jn = *procs.back();
  ASSERT_TRUE(head.wait_for("node " + c + " joined", std::chrono::seconds(30), true))
    << head.err() << jn.err();
  // A stranger: a certificate of another CA. Its join fails at the handshake and it says so.
  auto rogue = start_node("node-rogue", with(tls(pki, "rogue"), head_name),
                          "127.0.0.1:0", listen);
  ASSERT_FALSE(rogue.empty());
  auto& rg = *procs.back();
  EXPECT_TRUE(rg.wait_for("join: ", std::chrono::seconds(30), true)) << rg.err();
  // `leap cluster status` asks the running head, over TLS (again, a few times at most, while the
  // joined node is between a lost heartbeat and its rejoining: on a loaded 2-core machine a
  // generating node has stayed lost for over 10 s, so up to 20 s, and not after the head ends).
  nlohmann::json status;
  bool c_up = false;
  for (int attempt = 0; attempt < 10 && !c_up; ++attempt) {
    if (attempt > 0)
      std::this_thread::sleep_for(std::chrono::seconds(2));
    if (head.exited(std::chrono::milliseconds(0)))
      break;
    auto& st = start("status" + std::to_string(attempt),
                     with(with(tls(pki, "node"), head_name), {"cluster", "status", "--head", listen, "--json"}));
    ASSERT_TRUE(st.exited(std::chrono::seconds(30)));
    ASSERT_TRUE(st.exited_ok()) << st.err();
    status = nlohmann::json::parse(st.out());
    ASSERT_EQ(status["nodes"].size(), 2u) << status.dump();
    for (auto& n : status["nodes"]) {
      c_up = c_up || (n["node"] == c && n["state"] == "up");
      EXPECT_NE(n["node"], rogue) << status.dump();
    }
  }
  EXPECT_TRUE(c_up) << status.dump();
  EXPECT_EQ(rg.err().find("joined the head"), std::string::npos) << rg.err();
  ASSERT_TRUE(head.exited(std::chrono::seconds(600)));
  ASSERT_TRUE(head.exited_ok()) << head.err();
  EXPECT_NE(jn.err().find("joined the head"), std::string::npos) << jn.err();
  // Every learner step's weights reached the generating node (its log); the last step's row
  // says how big and how fast the latest one the head had seen acknowledged was (the row is
  // written from the cluster's status of the last heartbeat, so it may lag a version or two).
  auto metrics = test::read_jsonl(out + "/metrics.jsonl");
  ASSERT_EQ(metrics.size(), 8u);
  auto& w = metrics.back()["weights_to_nodes"];
  ASSERT_TRUE(w.is_object()) << metrics.back().dump();
  EXPECT_GE(w["version"].get<int>(), 1);
  EXPECT_GT(w["bytes"].get<double>(), 0);
  EXPECT_EQ(w["nodes"].get<int>(), 1);
  EXPECT_NE(jn.err().find("weights version 7"), std::string::npos) << jn.err();
  std::printf("[ cluster ] weights update v%d: %.0f bytes to %d node(s) in %.2f ms\n",
              w["version"].get<int>(), w["bytes"].get<double>(), w["nodes"].get<int>(),
              w["ms"].get<double>());
  for (auto& p : procs)
    p->kill(SIGTERM);
  for (auto& p : procs)
    EXPECT_TRUE(p->exited(std::chrono::seconds(30)));
}

// train.max_lost_steps on a cluster: the run starts, since its
// only compile and execute node is up, and that node dies after the first step. With no retries
// and a short cluster.node_wait_seconds every attempt of the next step is lost to the
// infrastructure, and the run stops with an error naming the key and exit 1.
TEST_F(cluster_fixture, ARunWhoseOnlyNodeDiesStopsOnMaxLostSteps) {
  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  auto a = start_node("node-only");
  ASSERT_FALSE(a.empty());
  const std::string out = root + "/run";
  auto& head = start("head", train_args(warm, {a},
                                        {"train.steps=20", "cluster.node_wait_seconds=1",
                                         "compiler.retries=0", "executor.retries=0",
                                         "cluster.local_roles=[\"generate\"]"}));
  ASSERT_GE(wait_for_steps(1, head, std::chrono::seconds(120)), 1u) << head.err();
  procs[0]->kill(SIGKILL);
  ASSERT_TRUE(head.exited(std::chrono::seconds(180))) << "leap train did not stop:\n" << head.err();
  EXPECT_EQ(WEXITSTATUS(head.status()), 1) << head.err();
  EXPECT_NE(head.err().find("train.max_lost_steps"), std::string::npos) << head.err();
  auto m = test::read_jsonl(out + "/metrics.jsonl");
  ASSERT_GE(m.size(), 2u) << head.err();
  EXPECT_LT(m.size(), 20u);
  EXPECT_EQ(m.back()["dropped"], m.back()["attempts"]) << m.back().dump();
}

TEST_F(cluster_fixture, TlsWithMutualAuthenticationRefusesStrangers) {
  const std::string pki = root + "/pki";
  fs::create_directories(pki);
  ASSERT_TRUE(make_pki(pki)) << "the openssl CLI could not make test certificates";
  auto node = start_node("node-tls", tls(pki, "node"));
  ASSERT_FALSE(node.empty());
  EXPECT_NE(procs[0]->out().find("TLS"), std::string::npos) << procs[0]->out();
  auto wait = std::vector<std::string>{"--set", "cluster.node_wait_seconds=3"};
  auto with = [&](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  auto ok = check("head-tls", candidates + "grid_stride.cu",
                  with(tls(pki, "head"), {"--set", nodes_key({node})}));
  EXPECT_EQ(ok["status"], "correct") << ok.dump();
  // A head without a certificate, and one whose certificate another CA signed, get nothing.
  auto plain = check("head-plain", candidates + "grid_stride.cu",
                     with(wait, {"--set", nodes_key({node})}));
  ASSERT_TRUE(plain.contains("failure")) << plain.dump();
  EXPECT_NE(plain["failure"].get<std::string>().find("no node that can compile"), std::string::npos)
    << plain.dump();
  auto rogue = check("head-rogue", candidates + "grid_stride.cu",
                     with(with(wait, tls(pki, "rogue")), {"--set", nodes_key({node})}));
  ASSERT_TRUE(rogue.contains("failure")) << rogue.dump();
  EXPECT_NE(rogue["failure"].get<std::string>().find("cannot connect"), std::string::npos)
    << rogue.dump();
  // The node is unharmed and still serves its own CA's head.
  auto again = check("head-tls2", candidates + "wrong_answer.cu",
                     with(tls(pki, "head"), {"--set", nodes_key({node})}));
  EXPECT_EQ(again["status"], "wrong_answer") << again.dump();
  // Plain TCP off loopback is refused before anything listens.
  auto& open = start("node-open", {"--set", "environment.backend=cpu",
                                   "--set", "environment.cache_dir=" + root + "/cache-open",
                                   "node", "--listen", "0.0.0.0:0"});
  ASSERT_TRUE(open.exited(std::chrono::seconds(60)));
  EXPECT_EQ(WEXITSTATUS(open.status()), 2);
  EXPECT_NE(open.err().find("cluster.insecure"), std::string::npos) << open.err();
}


// Names in certificates: a head accepts a node only when the node's
// certificate names the host it dialled (or one of cluster.tls_peer_names); a node with
// cluster.tls_peer_names accepts only heads whose certificate names one of them. A certificate
// of the same CA for another name is refused with a message naming both, and `leap check`
// through such a node ends with that problem instead of waiting.
TEST_F(cluster_fixture, TlsCertificatesMustNameThePeer) {
  const std::string pki = root + "/pki";
  fs::create_directories(pki);
  ASSERT_TRUE(make_pki(pki)) << "the openssl CLI could not make test certificates";
  auto with = [&](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::string> wait = {"--set", "cluster.node_wait_seconds=3"};
  // node: IP:127.0.0.1, and it takes heads named head.example only. other: DNS:other.example.
  auto node = start_node("node-named", with(tls(pki, "node"),
                                            {"--set", "cluster.tls_peer_names=[\"head.example\"]"}));
  auto other = start_node("node-other", tls(pki, "other"));
  ASSERT_FALSE(node.empty());
  ASSERT_FALSE(other.empty());
  auto& node_proc = *procs[0];

  auto ok = check("head-ok", candidates + "grid_stride.cu",
                  with(tls(pki, "head"), {"--set", nodes_key({node})}));
  EXPECT_EQ(ok["status"], "correct") << ok.dump();

  // The node dialled as 127.0.0.1 presents DNS:other.example: refused, and check says why.
  auto t0 = std::chrono::steady_clock::now();
  auto refused = check("head-refused", candidates + "grid_stride.cu",
                       with(with(wait, tls(pki, "head")), {"--set", nodes_key({other})}));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(refused.contains("failure")) << refused.dump();
  auto why = refused["failure"].get<std::string>();
  EXPECT_NE(why.find("names DNS:other.example"), std::string::npos) << why;
  EXPECT_NE(why.find("not 127.0.0.1 (the host dialled)"), std::string::npos) << why;
  EXPECT_LT(took, 30.0) << "leap check took " << took << " s";

  // The same node is accepted once the head names it in cluster.tls_peer_names.
  auto named = check("head-names-it", candidates + "wrong_answer.cu",
                     with(tls(pki, "head"), {"--set", nodes_key({other}), "--set",
                                             "cluster.tls_peer_names=[\"other.example\"]"}));
  EXPECT_EQ(named["status"], "wrong_answer") << named.dump();

  // A head whose certificate (same CA) names other.example is refused by the node that takes
  // head.example only; the node logs whom it refused and why, and serves the right head after.
  auto stranger = check("head-stranger", candidates + "grid_stride.cu",
                        with(with(wait, tls(pki, "other")), {"--set", nodes_key({node})}));
  ASSERT_TRUE(stranger.contains("failure")) << stranger.dump();
  EXPECT_NE(stranger["failure"].get<std::string>().find("handshake"), std::string::npos)
    << stranger.dump();
  EXPECT_NE(node_proc.err().find("refused a connection from 127.0.0.1:"), std::string::npos)
    << node_proc.err();
  EXPECT_NE(node_proc.err().find("its certificate names DNS:other.example"), std::string::npos)
    << node_proc.err();
  EXPECT_NE(node_proc.err().find("cluster.tls_peer_names = [\"head.example\"]"),
            std::string::npos)
    << node_proc.err();
  auto again = check("head-ok2", candidates + "wrong_answer.cu",
                     with(tls(pki, "head"), {"--set", nodes_key({node})}));
  EXPECT_EQ(again["status"], "wrong_answer") << again.dump();
}


// CPU time a process's threads have run, in seconds: the sum of /proc/<pid>/task/*/schedstat
// (nanoseconds, exact; /proc/<pid>/stat counts 10 ms ticks, too coarse for a 1% bound over a
// few seconds). Negative when the process is gone.
double cpu_seconds(pid_t pid) {
  std::error_code ec;
  double total = 0;
  bool any = false;
  for (auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    auto text = read_file(t.path().string() + "/schedstat");
    if (!text)
      continue;
    total += std::stod(text->substr(0, text->find(' '))) / 1e9;
    any = true;
  }
  return any ? total : -1;
}

// The share of one core each process used over the same `window`.
std::vector<double> core_shares(const std::vector<pid_t>& pids, std::chrono::milliseconds window) {
  std::vector<double> c0;
  for (auto p : pids)
    c0.push_back(cpu_seconds(p));
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(window);
  std::vector<double> out;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    auto c1 = cpu_seconds(pids[i]);
    out.push_back(c0[i] < 0 || c1 < 0
                    ? -1
                    : (c1 - c0[i]) / std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

// vector_add candidates that leave NaN or infinities in their output: verdicts with non-finite
// floats in them.
const std::vector<std::pair<std::string, std::string>>& non_finite_candidates() {
  static const std::vector<std::pair<std::string, std::string>> c = {
    {"unwritten", "extern \"C\" void solution(const float* a, const float* b, float* c, int n) {}\n"},
    {"partly_written",
     "#include <cuda_runtime.h>\n"
     "__global__ void k(const float* a, const float* b, float* c, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n / 2) c[i] = a[i] + b[i];\n"
     "}\n"
     "extern \"C\" void solution(const float* a, const float* b, float* c, int n) {\n"
     "  if (n <= 0) return;\n"
     "  k<<<(n + 255) / 256, 256>>>(a, b, c, n);\n"
     "  cudaDeviceSynchronize();\n"
     "}\n"},
    {"writes_nan",
     "#include <cuda_runtime.h>\n"
     "__global__ void k(const float* a, const float* b, float* c, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) c[i] = (a[i] - a[i]) / (b[i] - b[i]);\n"
     "}\n"
     "extern \"C\" void solution(const float* a, const float* b, float* c, int n) {\n"
     "  if (n <= 0) return;\n"
     "  k<<<(n + 255) / 256, 256>>>(a, b, c, n);\n"
     "  cudaDeviceSynchronize();\n"
     "}\n"},
    {"writes_inf",
     "#include <cuda_runtime.h>\n"
     "__global__ void k(const float* a, const float* b, float* c, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) c[i] = (i % 2 ? 1.0f : -1.0f) / (a[i] - a[i]);\n"
     "}\n"
     "extern \"C\" void solution(const float* a, const float* b, float* c, int n) {\n"
     "  if (n <= 0) return;\n"
     "  k<<<(n + 255) / 256, 256>>>(a, b, c, n);\n"
     "  cudaDeviceSynchronize();\n"
     "}\n"},
  };
  return c;
}

// A verdict holding NaN or an infinity (an output left unwritten holds the harness's
// NaN poison) comes back through a node like any other, from heads one after another and at
// once; the node idles between heads, and SIGTERM ends the process.
TEST_F(cluster_fixture, NonFiniteOutputsGetVerdictsThroughNodesThatThenIdleAndStop) {
  auto a = start_node("node-a");
  auto b = start_node("node-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  leap_process* node_a = procs[0].get();
  leap_process* node_b = procs[1].get();
  std::map<std::string, std::string> files;
  for (auto& [name, source] : non_finite_candidates()) {
    files[name] = root + "/" + name + ".cu";
    ASSERT_TRUE(write_file_atomic(files[name], source));
  }
  auto same_verdict = [](const nlohmann::json& local, const nlohmann::json& remote,
                         const std::string& name) {
    ASSERT_FALSE(local.contains("failure")) << name << ": " << local.dump();
    ASSERT_FALSE(remote.contains("failure")) << name << ": " << remote.dump();
    EXPECT_EQ(remote["status"], "wrong_answer") << name << ": " << remote.dump();
    for (auto key : {"status", "reason", "trials_run", "trials_passed", "max_abs_error",
                     "max_rel_error", "mismatch_index", "mismatch_output", "expected", "actual",
                     "mismatches", "feedback"})
      EXPECT_EQ(local[key], remote[key]) << name << " " << key;
  };
  auto idle = [&](const char* when) {
    // Between heads. The first seconds after a head leaves still see its requests' timeouts
    // fire (the heartbeat's 5 s statistics requests); then the node's own share of a core.
    // Measured on the 2-core machine: 0.2% at rest (a spinning multiplexer is 100%).
    std::this_thread::sleep_for(std::chrono::seconds(4));
    auto shares = core_shares({node_a->pid(), node_b->pid()}, std::chrono::seconds(3));
    for (auto share : shares) {
      std::fprintf(stderr, "[ idle node ] %s: a node used %.2f%% of a core\n", when, 100 * share);
      EXPECT_GE(share, 0) << when << ": a node is gone";
      EXPECT_LT(share, 0.01) << when << ": a node used " << 100 * share
                             << "% of a core while no head was connected";
    }
  };

  // Heads one after another: each candidate in one process (these all at once, finished before
  // the first head: no node is involved), then through the two nodes.
  std::map<std::string, leap_process*> local_procs;
  for (auto& [name, source] : non_finite_candidates())
    local_procs[name] = &start_check("local-" + name, files[name], {});
  std::map<std::string, nlohmann::json> local;
  for (auto& [name, source] : non_finite_candidates())
    local[name] = verdict(*local_procs[name]);
  for (auto& [name, source] : non_finite_candidates()) {
    auto t0 = std::chrono::steady_clock::now();
    auto remote = check("head-" + name, files[name],
                        {"--set", nodes_key({a, b}), "--set", "cluster.heartbeat_seconds=0.5"});
    std::fprintf(stderr, "[ remote check ] %s through the nodes: %.2f s\n", name.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    same_verdict(local[name], remote, name);
    EXPECT_TRUE(remote["max_abs_error"].is_null()) << name << ": " << remote.dump();
  }
  idle("after sequential heads");

  // Heads at once, every candidate and a correct one, over the same nodes.
  std::vector<std::pair<std::string, leap_process*>> heads;
  int n = 0;
  for (auto& [name, source] : non_finite_candidates())
    for (int copy = 0; copy < 2; ++copy) {
      auto& p = start("concurrent-" + std::to_string(n++),
                      {"--set", "environment.backend=cpu",
                       "--set", "environment.cache_dir=" + root + "/cache-c" + std::to_string(n),
                       "--set", "executor.seed=7", "--set", nodes_key({a, b}),
                       "--set", "cluster.heartbeat_seconds=0.5",
                       "check", "--task", "vector_add", "--source", files[name], "--json"});
      heads.emplace_back(name, &p);
    }
  auto& good = start("concurrent-good", {"--set", "environment.backend=cpu",
                                         "--set", "environment.cache_dir=" + root + "/cache-good",
                                         "--set", "executor.seed=7", "--set", nodes_key({a, b}),
                                         "check", "--task", "vector_add", "--source",
                                         candidates + "grid_stride.cu", "--json"});
  for (auto& [name, p] : heads) {
    ASSERT_TRUE(p->exited(std::chrono::seconds(120))) << name << " did not finish";
    ASSERT_TRUE(p->exited_ok()) << name << ": " << p->err();
    same_verdict(local[name], nlohmann::json::parse(p->out()), name);
  }
  ASSERT_TRUE(good.exited(std::chrono::seconds(120)));
  ASSERT_TRUE(good.exited_ok()) << good.err();
  EXPECT_EQ(nlohmann::json::parse(good.out())["status"], "correct");
  idle("after concurrent heads");

  // SIGTERM: the node drains, says it stopped, and is gone.
  for (auto* p : {node_a, node_b}) {
    p->kill(SIGTERM);
    EXPECT_TRUE(p->exited(std::chrono::seconds(30))) << "a node still runs 30 s after SIGTERM:\n"
                                                     << p->err();
    EXPECT_TRUE(p->exited_ok()) << p->err();
    EXPECT_NE(p->err().find("stopped after"), std::string::npos) << p->err();
  }
}

TEST_F(cluster_fixture, ANodeOfAnotherMessageSetIsRefusedNamingBothVersions) {
  // A node whose build identity differs (as a node built from other message types would be).
  caf::actor_system_config cfg;
  msg::register_message_types(cfg);
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  actors::node_options no;
  no.info.name = "stranger";
  no.info.identity = {"0.0.9-other", "0123456789abcdef"};
  auto node = actors::spawn_node(sys, no);
  auto port = runtime::free_port("127.0.0.1");
  ASSERT_TRUE(port) << port.message();
  ASSERT_TRUE(runtime::publish_node(sys, node, {"127.0.0.1", *port}, false));
  auto out = check("head", candidates + "grid_stride.cu",
                   {"--set", "cluster.node_wait_seconds=3",
                    "--set", nodes_key({"127.0.0.1:" + std::to_string(*port)})});
  ASSERT_TRUE(out.contains("failure")) << out.dump();
  auto text = out["failure"].get<std::string>();
  EXPECT_NE(text.find("0.0.9-other"), std::string::npos) << text;
  EXPECT_NE(text.find(msg::this_build_identity().version), std::string::npos) << text;
  EXPECT_NE(text.find("refuse"), std::string::npos) << text;
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

} // namespace

// A head can die: `leap train` through two nodes is killed with SIGKILL mid-step, and `leap train
// --resume` in a new head process with the same cluster.nodes finishes the run. The nodes stay up,
// cancel the dead head's jobs and serve the new head; at most the step in flight is redone, and
// metrics.jsonl holds every step exactly once, in order (nothing trained twice).
TEST_F(cluster_fixture, ANewHeadResumesARunWhoseHeadWasKilledMidStep) {
  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  auto a = start_node("node-a");
  auto b = start_node("node-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const int steps = 6;
  const std::string out = root + "/run";
  auto args = train_args(warm, {a, b},
                         {"train.steps=" + std::to_string(steps), "train.checkpoint_every=1",
                          "cluster.local_roles=[\"generate\"]"});
  auto& first = start("head-1", args);
  const auto written = wait_for_steps(2, first, std::chrono::seconds(180));
  ASSERT_GE(written, 2u) << first.err();
  ASSERT_LT(written, static_cast<std::size_t>(steps)) << "the run ended before it could be killed";
  first.kill(SIGKILL);
  ASSERT_TRUE(first.exited(std::chrono::seconds(10)));
  const auto reported = test::read_jsonl(out + "/metrics.jsonl").size();
  // The nodes notice the head is gone and cancel its jobs.
  for (std::size_t k = 0; k < 2; ++k) {
    auto gone = procs[k]->wait_for("(head gone[^\n]*)", std::chrono::seconds(30), true);
    EXPECT_TRUE(gone) << procs[k]->err();
    if (gone)
      std::printf("[ cluster ] after %zu reported step(s), node %zu: %s\n", reported, k, gone->c_str());
  }

  args.push_back("--resume");
  auto& second = start("head-2", args);
  ASSERT_TRUE(second.exited(std::chrono::seconds(300))) << second.err();
  EXPECT_TRUE(second.exited_ok()) << second.err();
  auto m = test::read_jsonl(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), static_cast<std::size_t>(steps));
  for (std::size_t i = 0; i < m.size(); ++i)
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1)) << "a step trained twice or skipped";
  // The resumed head started from the checkpoint of the last step the first head had reported
  // (checkpoint_every = 1): at most the step in flight was redone.
  std::smatch at;
  const std::string said = second.out();
  ASSERT_TRUE(std::regex_search(said, at, std::regex("resuming at step ([0-9]+)"))) << said;
  const auto start_step = std::stoul(at[1].str());
  EXPECT_LE(start_step, reported);
  EXPECT_GE(start_step + 1, reported);
  // Both nodes outlived the first head and served the second (each logs every head that connects).
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_FALSE(procs[k]->exited(std::chrono::milliseconds(0))) << procs[k]->err();
    const std::string log = procs[k]->err() + procs[k]->out();
    std::size_t heads = 0;
    for (auto p = log.find("head connected"); p != std::string::npos; p = log.find("head connected", p + 1))
      ++heads;
    EXPECT_GE(heads, 2u) << log;
  }
  for (std::size_t k = 0; k < 2; ++k)
    procs[k]->kill(SIGTERM);
  for (std::size_t k = 0; k < 2; ++k)
    EXPECT_TRUE(procs[k]->exited(std::chrono::seconds(30)));
}
