// `leap train` (tiny model, two tasks, real nvcc + the CPU emulation, a fresh build cache) over
// its own pools and one `leap node`, while the test kills with SIGKILL, as an operator or the
// OOM killer would, the compile and execute child processes of both (nvcc's stages cicc, ptxas,
// cudafe++; the host compiler and linker cc1plus, ld, collect2; the worker processes that run
// candidates and references) and, after the first step, the node itself. Every step still
// completes; every finished group accounts for all its attempts in groups.jsonl; the lost
// node's jobs run again on the head; the kills never enter the build cache; no process is left
// behind (a killed node's children die with it).
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/commands/jsonl.hpp"
#include "tests/runtime/commands/process_killer.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <thread>

extern char** environ;

namespace fs = std::filesystem;
using namespace leap;

using test::read_jsonl;

TEST(ChaosTrainE2E, EveryStepCompletesWhileCompileAndExecuteProcessesAreKilled) {
  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  // Orphans of the run come to this process, so anything left behind is seen below.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  auto root = *make_temp_dir(temp_root(), "leap-chaos-");
  const std::string out = root + "/run", cache = root + "/cache";
  // The node's work directory lives in here: the sandbox's uid must be able to pass through.
  fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  auto node = std::make_unique<test::leap_process>(
    std::vector<std::string>{LEAP_BINARY, "--set", "environment.cache_dir=" + root + "/node-cache",
                             "--set", "environment.backend=cpu", "--set", "compiler.retries=1",
                             "--set", "executor.retries=1", "--set",
                             "environment.work_dir=" + root + "/node-work", "node", "--listen",
                             "127.0.0.1:0"},
    root + "/node");
  auto node_addr = node->wait_for("node ready on ([0-9.]+:[0-9]+)", std::chrono::seconds(60));
  ASSERT_TRUE(node_addr) << node->err();
  const pid_t node_pid = node->pid();
  std::vector<std::string> args = {LEAP_BINARY, "--set", "train.warm_start=" + warm};
  for (auto& s : test::tiny)
    args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--set", "train.steps=4", "--set", "train.group_size=4",
                           "--set", "train.batch_order=admission",
                           "--set", "compiler.retries=1", "--set", "executor.retries=1",
                           "--set", "cluster.nodes=[\"" + *node_addr + "\"]",
                           "--set", "cluster.local_roles=[\"compile\", \"execute\", \"generate\"]",
                           "--set", "environment.cache_dir=" + cache, "train", "--out", out});
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (root + "/stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (root + "/stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);

  // Kill compile and execute processes, a few of each kind, until the run ends (or 10
  // minutes pass: then the run is stopped and the test fails). Short-lived kinds (workers,
  // linkers) come first whenever one is there; a kill of the compile kinds waits 0.1 s after the
  // last, so the run gets on with its work in between.
  const std::vector<std::set<std::string>> kinds{
    {"worker"}, {"ld", "ld.gold", "collect2"}, {"cicc", "ptxas", "cudafe++"}, {"cc1plus"}};
  const std::vector<int> cap{4, 3, 3, 2};
  std::vector<int> per_kind(kinds.size(), 0);
  std::map<std::string, int> kills;
  int total = 0, status = 0;
  bool exited = false, node_killed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  auto next_kill = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    {
      std::string what;
      const bool paced = std::chrono::steady_clock::now() < next_kill;
      for (std::size_t k = 0; k < kinds.size() && what.empty(); ++k) {
        if (per_kind[k] >= cap[k] || (paced && k >= 2))
          continue;
        // The head's children, and the node's while it lives (alternately).
        what = test::kill_one((total % 2 && !node_killed) ? node_pid : pid, kinds[k]);
        if (!what.empty())
          ++per_kind[k];
      }
      // The node itself, once the run has a step behind it, while the node runs a job.
      if (what.empty() && !node_killed && !read_jsonl(out + "/metrics.jsonl").empty()
          && !test::descendants(node_pid, {}).empty()) {
        node->kill(SIGKILL);
        node_killed = true;
        what = "leap node";
      }
      if (!what.empty()) {
        ++kills[what];
        ++total;
        next_kill = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "leap train did not finish within 10 minutes under kills";
  }
  std::string killed;
  for (auto& [k, n] : kills)
    killed += k + " x" + std::to_string(n) + " ";
  std::printf("[ chaos ] killed %d processes: %s\n", total, killed.c_str());
  auto err = read_file(root + "/stderr.txt");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
    << "status " << status << "\n" << (err ? *err : "") << "\n" << *read_file(root + "/stdout.txt");
  EXPECT_GT(total, 0) << "no compile or execute process was seen to kill";
  EXPECT_TRUE(node_killed) << "the node was not killed before the run ended";
  EXPECT_NE(err->find("lost"), std::string::npos) << "the head did not notice the node's loss:\n" << *err;

  // Every step completed.
  auto m = read_jsonl(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), 4u);
  for (std::size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1));
    EXPECT_TRUE(m[i].contains("dropped"));
    EXPECT_TRUE(m[i].contains("unsupported"));
    EXPECT_TRUE(m[i].contains("recovery"));
  }
  // Every group accounts for all G = 4 attempts, and a dropped attempt gets no advantage.
  auto groups = read_jsonl(out + "/groups.jsonl");
  ASSERT_EQ(groups.size(), 4u * 2u);
  int dropped = 0;
  for (auto& g : groups) {
    ASSERT_EQ(g["attempts"].size(), 4u) << g.dump();
    for (auto& a : g["attempts"]) {
      if (a["dropped"].get<bool>()) {
        ++dropped;
        EXPECT_EQ(a["reward"].get<double>(), 0.0);
        for (auto& adv : a["advantages"])
          EXPECT_EQ(adv.get<double>(), 0.0);
      }
    }
  }
  std::printf("[ chaos ] %d attempts dropped as infrastructure faults\n", dropped);
  // The node's figures in the last step: lost once, its jobs taken off it and run again.
  const auto& nodes = m.back()["nodes"];
  ASSERT_EQ(nodes.size(), 2u) << m.back().dump(); // the node and the head's own pools
  for (auto& n : nodes)
    if (n["node"] == *node_addr) {
      EXPECT_EQ(n["state"], "lost") << n.dump();
      EXPECT_GE(n["lost"].get<int>(), 1) << n.dump();
      std::printf("[ chaos ] the killed node had done %d job(s); %d re-run elsewhere, %d rebuilt\n",
                  n["done"].get<int>(), n["rerun"].get<int>(), n["rebuilt"].get<int>());
    }
  // No kill entered the build cache: no cached failure mentions a signal.
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator(cache + "/builds", ec)) {
    if (e.path().filename() != "result.json")
      continue;
    auto text = read_file(e.path().string());
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text->find("signal"), std::string::npos) << e.path() << ": " << *text;
    EXPECT_EQ(text->find("Killed"), std::string::npos) << e.path() << ": " << *text;
    EXPECT_EQ(text->find("infrastructure"), std::string::npos) << e.path() << ": " << *text;
  }
  // Nothing of the run is left behind (orphans would have come to this process).
  node.reset();
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
  auto left = test::descendants(::getpid(), {});
  std::string names;
  for (auto& p : left)
    names += p.comm + " ";
  EXPECT_TRUE(left.empty()) << "left behind: " << names;
  fs::remove_all(root, ec);
}

namespace {

// `leap check --json` of a correct but slow candidate (tests/runtime/commands/data), whose
// candidate worker is killed with SIGKILL `kills` times while it runs, as the OOM killer would.
nlohmann::json check_with_kills(int kills) {
  auto root = *make_temp_dir(temp_root(), "leap-killed-");
  test::leap_process p(
    {LEAP_BINARY, "--set", "environment.backend=cpu", "--set",
     "environment.cache_dir=" + std::string(LEAP_TEST_CACHE_DIR),
     // slow on purpose: on a machine loaded past its cores it once took over the default 30 s
     "--set", "executor.timeout_seconds=120", "check", "--task", "vector_add",
     "--source", std::string(LEAP_SOURCE_DIR) + "/tests/runtime/commands/data/slow_vector_add.cu",
     "--json"},
    root + "/check");
  // Each kill waits for a candidate worker that has run 0.3 s (the reference runs only after
  // the candidate finished, so the worker seen is the candidate's); a killed worker's pid is
  // never taken for the next run's (it may linger as a zombie for a moment).
  int done_kills = 0;
  std::set<pid_t> killed;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (done_kills < kills && std::chrono::steady_clock::now() < deadline
         && !p.exited(std::chrono::milliseconds(0))) {
    for (auto& w : test::descendants(p.pid(), {"worker"})) {
      if (killed.count(w.pid))
        continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (::kill(w.pid, SIGKILL) == 0) {
        killed.insert(w.pid);
        ++done_kills;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(p.exited(std::chrono::seconds(120)));
  EXPECT_EQ(done_kills, kills);
  EXPECT_TRUE(p.exited_ok()) << p.status() << p.err();
  auto text = p.out();
  std::error_code ec;
  fs::remove_all(root, ec);
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

} // namespace

TEST(ChaosTrainE2E, ACandidateKilledFromOutsideIsRunAgainAndJudgedKilledOnlyTheSecondTime) {
  auto once = check_with_kills(1);
  EXPECT_EQ(once["status"], "correct") << once.dump();
  auto twice = check_with_kills(2);
  EXPECT_EQ(twice["status"], "runtime_error") << twice.dump();
  EXPECT_EQ(twice["reason"], "killed") << twice.dump();
}
