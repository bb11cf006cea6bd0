// `leap train` end to end with a tiny model on two tasks: warm start made by `leap pretrain`,
// then RL steps through the real actor pipeline (generator pool with the LibTorch policy, nvcc,
// the CPU emulation, DCP gatekeeper, judge, GRPO learner, trainer). Checks metrics.jsonl and the
// checkpoint; and that a run killed with SIGKILL resumes losing at most one step, with no task
// trained on twice within an epoch.
#include "common/fs.hpp"
#include "env/process.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/commands/jsonl.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"
#include "common/strings.hpp"
#include "runtime/workflows/warm_start.hpp"
#include "runtime/workflows/train_run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

extern char** environ;

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

using namespace leap::test;

namespace {

std::vector<nlohmann::json> read_metrics(const std::string& path) { return test::read_jsonl(path); }

nlohmann::json trainer_state(const std::string& ck) {
  auto text = read_file(ck + "/trainer_state.json");
  return text ? nlohmann::json::parse(*text) : nlohmann::json();
}

} // namespace

TEST(TrainE2E, TwoStepsOnTwoTasksWriteMetricsAndCheckpoint) {
  auto cfg = config::defaults();
  for (auto& s : tiny)
    ASSERT_TRUE(config::apply_override(cfg, s).ok()) << s;
  ASSERT_TRUE(config::apply_override(cfg, "train.steps=2").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.train.warm_start = warm_start();
  ASSERT_FALSE(cfg.train.warm_start.empty());
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto out = *make_temp_dir(temp_root(), "leap-train-");
  ASSERT_EQ(run_training(**svc, out, false), 0);
  auto m = read_metrics(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), 2u);
  std::multiset<std::string> tasks;
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (auto key : {"step", "acc_at_1", "acc_at_2", "acc_at_3", "turns_per_pass",
                     "activated_groups", "recovery", "compiles", "cache_hits", "cancelled",
                     "dropped", "unsupported", "step_seconds", "outcome", "loss", "kl",
                     "policy_version"})
      EXPECT_TRUE(m[i].contains(key)) << key;
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1));
    EXPECT_EQ(m[i]["policy_version"].get<int>(), static_cast<int>(i + 1));
    EXPECT_EQ(m[i]["tasks"].size(), 2u);
    for (auto& t : m[i]["tasks"])
      tasks.insert(t.get<std::string>());
    // Every group of G = 2 sampled at least its two turn-1 attempts.
    EXPECT_GE(m[i]["attempts"].get<int>(), 4);
    // The process's memory when the step ended: its resident set and the heap's figures.
    ASSERT_TRUE(m[i].contains("memory")) << m[i].dump();
    const auto& mem = m[i]["memory"];
    EXPECT_GT(mem["rss_mib"].get<double>(), 10.0) << mem.dump();
    EXPECT_GT(mem["heap_in_use_mib"].get<double>(), 1.0) << mem.dump();
    EXPECT_GE(mem["heap_resident_mib"].get<double>(), mem["heap_in_use_mib"].get<double>()) << mem.dump();
    EXPECT_LE(mem["heap_free_mib"].get<double>(), mem["heap_resident_mib"].get<double>()) << mem.dump();
    EXPECT_TRUE(mem["allocator"] == "glibc" || mem["allocator"] == "tcmalloc") << mem.dump();
  }
  // groups.jsonl: one line per finished group (B = 2 per step), each with all G = 2 attempts,
  // its DCP decision, and per attempt its turns, end, reward and advantages.
  auto groups = read_metrics(out + "/groups.jsonl");
  ASSERT_EQ(groups.size(), 4u);
  for (auto& g : groups) {
    for (auto key : {"step", "group", "task", "epoch", "index", "dcp", "activated", "attempts"})
      EXPECT_TRUE(g.contains(key)) << key;
    ASSERT_EQ(g["attempts"].size(), 2u);
    double sum = 0;
    for (auto& a : g["attempts"]) {
      for (auto key : {"end", "solved_turn", "dropped", "cancelled", "unsupported", "reward",
                       "advantages", "turns"})
        EXPECT_TRUE(a.contains(key)) << key;
      EXPECT_EQ(a["advantages"].size(), a["turns"].size());
      EXPECT_FALSE(a["turns"].empty());
      sum += a["reward"].get<double>();
    }
    EXPECT_NEAR(sum, 0.0, 1e-9) << g.dump();
  }
  // Samples went through the real compiler (built, or found in the build cache).
  int built = 0;
  for (auto& row : m)
    built += row["compiles"].get<int>() + row["cache_hits"].get<int>();
  EXPECT_GT(built, 0) << "no sample reached nvcc";
  // Two epochs of the two tasks: each task once per epoch.
  EXPECT_EQ(tasks.count("vector_add"), 2u);
  EXPECT_EQ(tasks.count("relu"), 2u);
  auto st = trainer_state(out + "/checkpoint");
  EXPECT_EQ(st["step"].get<int>(), 2);
  EXPECT_EQ(st["policy_version"].get<int>(), 2);
  EXPECT_EQ(st["extra"]["progress"]["epoch"].get<int>(), 2);
  for (auto f : {"config.json", "model.safetensors", "tokenizer.json", "optimizer.safetensors"})
    EXPECT_TRUE(fs::exists(out + "/checkpoint/" + f)) << f;
  // The same directory again without --resume is refused (nothing overwritten).
  EXPECT_EQ(run_training(**svc, out, false), 2);
  // Torn files: a bit flipped in the checkpoint's weights stops --resume with an
  // error naming the file; once it is whole again, the resume drops metrics.jsonl's cut last
  // line with a warning naming the file.
  ASSERT_TRUE(fs::exists(out + "/checkpoint/manifest.json"));
  const auto weights = out + "/checkpoint/model.safetensors";
  auto flip = [&] {
    std::fstream f(weights, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-7, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-7, std::ios::end);
    f.put(static_cast<char>(c ^ 0x01));
  };
  flip();
  std::ofstream(out + "/metrics.jsonl", std::ios::app) << "{\"step\": 3, \"acc_at";
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_training(**svc, out, true), 1);
  auto err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(weights + ": SHA-256"), std::string::npos) << err;
  EXPECT_NE(err.find("is damaged"), std::string::npos) << err;
  flip();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_training(**svc, out, true), 0);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(out + "/metrics.jsonl: dropped 1 damaged line(s)"), std::string::npos) << err;
  EXPECT_EQ(read_metrics(out + "/metrics.jsonl").size(), 2u);
  fs::remove_all(out);
}

TEST(TrainE2E, ASecondRunOnTheSameDirectoryIsRefusedNamingTheFirst) {
  auto warm = warm_start();
  ASSERT_FALSE(warm.empty());
  auto out = *make_temp_dir(temp_root(), "leap-train-twice-");
  const int steps = 40; // long enough to be running when the second run starts
  std::vector<std::string> args = {LEAP_BINARY, "--set", "train.warm_start=" + warm};
  for (auto& s : tiny)
    args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--set", "train.steps=" + std::to_string(steps), "--set",
                           std::string("environment.cache_dir=") + LEAP_TEST_CACHE_DIR, "train",
                           "--out", out});
  test::leap_process first(args, out + "/first");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
  while (read_metrics(out + "/metrics.jsonl").empty() && std::chrono::steady_clock::now() < deadline
         && !first.exited(std::chrono::milliseconds(0)))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(read_metrics(out + "/metrics.jsonl").empty()) << "the first run wrote no step";
  // A second run on the same directory (with --resume, which would otherwise truncate the
  // first run's files to its checkpoint and write on) is refused, naming the first one's PID,
  // and touches nothing.
  args.push_back("--resume");
  test::leap_process second(args, out + "/second");
  ASSERT_TRUE(second.exited(std::chrono::seconds(120)));
  EXPECT_FALSE(second.exited_ok());
  EXPECT_NE(second.err().find("in use by leap train (PID " + std::to_string(first.pid()) + ")"),
            std::string::npos)
    << second.err();
  ASSERT_TRUE(first.exited(std::chrono::minutes(8)));
  ASSERT_TRUE(first.exited_ok()) << first.err();
  auto m = read_metrics(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), static_cast<std::size_t>(steps)) << "the first run's metrics were disturbed";
  for (std::size_t i = 0; i < m.size(); ++i)
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1));
  std::error_code ec;
  std::filesystem::remove_all(out, ec);
}

namespace {

// (epoch, task) of every group of every step in metrics.jsonl, in order.
std::vector<std::vector<std::pair<int, std::string>>> drawn(const std::vector<nlohmann::json>& m) {
  std::vector<std::vector<std::pair<int, std::string>>> out;
  for (auto& row : m) {
    out.emplace_back();
    for (std::size_t k = 0; k < row["tasks"].size(); ++k)
      out.back().emplace_back(row["epochs"][k].get<int>(), row["tasks"][k].get<std::string>());
  }
  return out;
}

} // namespace

TEST(TrainE2E, KilledFiveTimesResumesEachTimeAndTrainsWhatAnUnbrokenRunTrains) {
  auto warm = warm_start();
  ASSERT_FALSE(warm.empty());
  auto root = *make_temp_dir(temp_root(), "leap-train-kill-");
  const std::string out = root + "/killed", whole = root + "/whole";
  // The runs' work directory lives in here: the sandbox's uid must be able to pass through.
  fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  constexpr int steps = 24, kills = 5;
  // Admission order: a step's groups are the next B drawn, so the same seed draws the same
  // (epoch, task) sequence step by step whatever the timing.
  std::vector<std::string> base = {LEAP_BINARY, "--set", "train.warm_start=" + warm};
  for (auto& s : tiny)
    base.insert(base.end(), {"--set", s});
  // Killed runs cannot remove their work directory: it lives in the test's, removed at the end.
  base.insert(base.end(), {"--set", "environment.work_dir=" + root + "/work",
                           "--set", "train.steps=" + std::to_string(steps), "--set",
                           "train.batch_order=admission", "--set", "train.checkpoint_every=1",
                           "--set", std::string("environment.cache_dir=") + LEAP_TEST_CACHE_DIR,
                           "train", "--out"});
  auto args_for = [&](const std::string& dir, bool resume) {
    auto a = base;
    a.push_back(dir);
    if (resume)
      a.push_back("--resume");
    return a;
  };
  // SIGKILL (no chance to save) at a random moment after the run has trained at least one step
  // beyond the last kill's, five times, resuming each time.
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  std::size_t before = 0;
  for (int k = 0; k < kills; ++k) {
    test::leap_process p(args_for(out, k > 0), root + "/run" + std::to_string(k));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (std::chrono::steady_clock::now() < deadline
           && read_metrics(out + "/metrics.jsonl").size() < before + 1) {
      ASSERT_FALSE(p.exited(std::chrono::milliseconds(0)))
        << "run " << k << " ended before it was killed\n" << p.err();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 600));
    ASSERT_FALSE(p.exited(std::chrono::milliseconds(0))) << "run " << k << " ended\n" << p.err();
    p.kill(SIGKILL);
    if (k > 0) {
      EXPECT_NE(p.out().find("resuming at step " + std::to_string(before)), std::string::npos)
          << "run " << k << ": " << p.out();
    }
    auto seen = read_metrics(out + "/metrics.jsonl").size();
    auto st = trainer_state(out + "/checkpoint");
    ASSERT_TRUE(st.contains("step")) << "no checkpoint after kill " << k;
    auto saved = st["step"].get<std::size_t>();
    EXPECT_GE(saved + 1, seen) << "kill " << k << " lost more than one step";
    EXPECT_GE(seen, before + 1) << "kill " << k << " came before a new step";
    std::printf("[ kill %d ] after %zu step(s) in metrics.jsonl, checkpoint at step %zu\n", k + 1,
                seen, saved);
    before = saved;
    ASSERT_LT(saved, static_cast<std::size_t>(steps)) << "the run finished before kill " << k + 1;
  }
  // The last resume runs to the end; an unbroken run of the same seed beside it.
  test::leap_process last(args_for(out, true), root + "/final");
  test::leap_process unbroken(args_for(whole, false), root + "/whole");
  ASSERT_TRUE(last.exited(std::chrono::minutes(5)));
  ASSERT_TRUE(last.exited_ok()) << last.err();
  ASSERT_TRUE(unbroken.exited(std::chrono::minutes(5)));
  ASSERT_TRUE(unbroken.exited_ok()) << unbroken.err();
  auto m = read_metrics(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), static_cast<std::size_t>(steps));
  for (std::size_t i = 0; i < m.size(); ++i)
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1)) << "no duplicate or missing step";
  auto got = drawn(m), want = drawn(read_metrics(whole + "/metrics.jsonl"));
  ASSERT_EQ(want.size(), static_cast<std::size_t>(steps));
  for (int i = 0; i < steps; ++i)
    EXPECT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)])
      << "step " << i + 1 << " trained other groups than the unbroken run's";
  EXPECT_EQ(trainer_state(out + "/checkpoint")["step"].get<int>(), steps);
  // Each finished run wrote its page; `leap report` overlays the two real runs in one
  // self-contained page (inline SVG, nothing fetched from outside).
  for (auto& dir : {out, whole}) {
    auto page = read_file(dir + "/report.html");
    ASSERT_TRUE(page.ok()) << dir;
    EXPECT_NE(page->find("<svg"), std::string::npos);
  }
  env::process_spec rs;
  rs.argv = {LEAP_BINARY, "report", out, whole, "--out", root + "/both.html"};
  rs.timeout_seconds = 60;
  auto ro = env::run_blocking(rs);
  EXPECT_EQ(ro.exit_code, 0) << ro.err;
  auto both = read_file(root + "/both.html");
  ASSERT_TRUE(both.ok());
  EXPECT_NE(both->find(fs::path(out).filename().string()), std::string::npos);
  EXPECT_NE(both->find(fs::path(whole).filename().string()), std::string::npos);
  EXPECT_EQ(both->find("<script"), std::string::npos);
  EXPECT_EQ(both->find("https://"), std::string::npos);
  fs::remove_all(root);
}

TEST(TrainE2E, AFullDiskEndsTheRunWithAClearErrorAndItResumesOnceThereIsSpace) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "mounting a small tmpfs for the run directory needs root";
  auto warm = warm_start();
  ASSERT_FALSE(warm.empty());
  auto root = *make_temp_dir(temp_root(), "leap-train-full-");
  const std::string disk = root + "/disk", out = disk + "/run", filler = disk + "/filler";
  fs::create_directories(disk);
  if (std::system(("mount -t tmpfs -o size=4m tmpfs '" + disk + "' 2>/dev/null").c_str()) != 0) {
    fs::remove_all(root);
    GTEST_SKIP() << "cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?)";
  }
  struct unmount {
    std::string dir, root;
    ~unmount() {
      (void)std::system(("umount -l '" + dir + "'").c_str());
      fs::remove_all(root);
    }
  } guard{disk, root};
  auto args = [&](int steps, bool resume) {
    std::vector<std::string> a = {LEAP_BINARY, "--set", "train.warm_start=" + warm};
    for (auto& s : tiny)
      a.insert(a.end(), {"--set", s});
    a.insert(a.end(), {"--set", "train.steps=" + std::to_string(steps), "--set",
                       std::string("environment.cache_dir=") + LEAP_TEST_CACHE_DIR, "train",
                       "--out", out});
    if (resume)
      a.push_back("--resume");
    return a;
  };
  {
    test::leap_process first(args(2, false), root + "/first");
    ASSERT_TRUE(first.exited(std::chrono::minutes(5)));
    ASSERT_TRUE(first.exited_ok()) << first.err();
  }
  // Fill the disk but for 64 KiB: the next checkpoint (about 360 KiB) cannot be written.
  struct statvfs vfs;
  ASSERT_EQ(::statvfs(disk.c_str(), &vfs), 0);
  auto free_bytes = static_cast<long long>(vfs.f_bavail) * static_cast<long long>(vfs.f_frsize);
  ASSERT_GT(free_bytes, 64 << 10);
  {
    std::ofstream f(filler, std::ios::binary);
    std::string block(1 << 16, 'x');
    for (long long left = free_bytes - (64 << 10); left > 0; left -= block.size())
      f.write(block.data(), static_cast<std::streamsize>(std::min<long long>(left, block.size())));
  }
  {
    test::leap_process full(args(5, true), root + "/full");
    ASSERT_TRUE(full.exited(std::chrono::minutes(5)));
    EXPECT_TRUE(WIFEXITED(full.status()) && WEXITSTATUS(full.status()) == 1) << full.err();
    EXPECT_NE(full.err().find("No space left on device"), std::string::npos) << full.err();
    EXPECT_NE(full.err().find("the last good checkpoint is of step 2"), std::string::npos)
      << full.err();
    EXPECT_NE(full.err().find("--resume"), std::string::npos) << full.err();
  }
  EXPECT_EQ(trainer_state(out + "/checkpoint")["step"].get<int>(), 2);
  // Space freed: the run resumes from its last good checkpoint and finishes.
  fs::remove(filler);
  test::leap_process again(args(5, true), root + "/again");
  ASSERT_TRUE(again.exited(std::chrono::minutes(5)));
  ASSERT_TRUE(again.exited_ok()) << again.err();
  auto m = read_metrics(out + "/metrics.jsonl");
  ASSERT_EQ(m.size(), 5u);
  for (std::size_t i = 0; i < m.size(); ++i)
    EXPECT_EQ(m[i]["step"].get<int>(), static_cast<int>(i + 1));
  EXPECT_EQ(trainer_state(out + "/checkpoint")["step"].get<int>(), 5);
}

// A budget (train.max_compiles) ends the run after the step that reaches it, with its checkpoint,
// exit 0 and the run's page; a resumed run counts what its earlier steps spent, so the same
// budget does nothing more, and a larger one continues.
TEST(TrainE2E, ACompileBudgetEndsTheRunAfterTheStepThatReachesIt) {
  auto cfg = config::defaults();
  for (auto& s : tiny)
    ASSERT_TRUE(config::apply_override(cfg, s).ok()) << s;
  ASSERT_TRUE(config::apply_override(cfg, "train.steps=40").ok());
  ASSERT_TRUE(config::apply_override(cfg, "train.max_compiles=6").ok());
  // Groups of three steps ahead are admitted, so when the step that reaches the budget is
  // learned the next ones are usually complete and waiting for the learner.
  ASSERT_TRUE(config::apply_override(cfg, "train.max_staleness=3").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.train.warm_start = warm_start();
  ASSERT_FALSE(cfg.train.warm_start.empty());
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto out = *make_temp_dir(temp_root(), "leap-budget-");
  testing::internal::CaptureStdout();
  const int rc = run_training(**svc, out, false);
  const std::string said = testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0) << said;
  // It says the budget ended the run, not that the 40 steps were done.
  EXPECT_NE(said.find("done: budget train.max_compiles = 6 reached"), std::string::npos) << said;
  EXPECT_EQ(said.find("done: 40 steps"), std::string::npos) << said;
  auto requests = [](const nlohmann::json& row) {
    return row["compiles"].get<long long>() + row["cache_hits"].get<long long>();
  };
  auto m = read_metrics(out + "/metrics.jsonl");
  ASSERT_FALSE(m.empty());
  EXPECT_LT(m.size(), 40u);
  long long before_last = 0;
  for (std::size_t i = 0; i + 1 < m.size(); ++i)
    before_last += requests(m[i]);
  // Stopped exactly at the step that reached the budget, although async mode has the next
  // step's groups generated by then (the learner keeps the budget; it used to learn one more).
  EXPECT_LT(before_last, 6);
  EXPECT_GE(before_last + requests(m.back()), 6);
  EXPECT_EQ(trainer_state(out + "/checkpoint")["step"].get<std::size_t>(), m.size());
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  // Resumed with the same budget: already spent, nothing runs.
  ASSERT_EQ(run_training(**svc, out, true), 0);
  EXPECT_EQ(read_metrics(out + "/metrics.jsonl").size(), m.size());
  // A larger budget continues from the checkpoint.
  (*svc)->cfg.train.max_compiles = 1000000;
  (*svc)->cfg.train.steps = static_cast<int>(m.size()) + 1;
  ASSERT_EQ(run_training(**svc, out, true), 0);
  EXPECT_EQ(read_metrics(out + "/metrics.jsonl").size(), m.size() + 1);
  fs::remove_all(out);
}

// A clustered run that no node and no local pool can serve does not start:
// with the only compile and execute node unreachable (nothing listens on its port) and the head
// generating only, leap train waits cluster.node_wait_seconds for a compiling node, then exits 2
// naming the role, the node and its problem, and the keys to set; it trains nothing. (A run
// whose nodes die after it started stops on train.max_lost_steps:
// cluster_fixture.ARunWhoseOnlyNodeDiesStopsOnMaxLostSteps in tests/runtime/cluster.)
TEST(TrainE2E, AClusteredRunNoNodeCanServeRefusesToStart) {
  auto cfg = config::defaults();
  for (auto& s : tiny)
    ASSERT_TRUE(config::apply_override(cfg, s).ok()) << s;
  for (const char* s : {"train.steps=20", "cluster.nodes=[\"127.0.0.1:1\"]",
                        "cluster.local_roles=[\"generate\"]", "cluster.node_wait_seconds=1",
                        "cluster.heartbeat_seconds=0.5"})
    ASSERT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.train.warm_start = warm_start();
  ASSERT_FALSE(cfg.train.warm_start.empty());
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto out = *make_temp_dir(temp_root(), "leap-unserved-");
  testing::internal::CaptureStderr();
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = run_training(**svc, out, false);
  const auto err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2) << err;
  EXPECT_NE(err.find("no node serves the role 'compile'"), std::string::npos) << err;
  EXPECT_NE(err.find("127.0.0.1:1 connecting: cannot connect"), std::string::npos) << err;
  for (const char* key : {"cluster.nodes", "cluster.local_roles", "node.roles",
                          "cluster.node_wait_seconds"})
    EXPECT_NE(err.find(key), std::string::npos) << key << " not named:\n" << err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_TRUE(read_metrics(out + "/metrics.jsonl").empty());
  fs::remove_all(out);
}
