// The adversarial suite (tests/env/adversarial/*.cu, issue: sandbox hardening): hostile or broken
// candidates, each with its expected verdict on its first line ("// expect: a|b"), optionally the
// verdict's reason ("// reason: a|b"), words its feedback must contain ("// feedback-has: ..."),
// and the paths it tries to create ("// must-not-exist: ..."). For each: leap stays up, the
// verdict is right, nothing outside the candidate's temporary directory changed, and no process,
// file descriptor or temporary directory is left behind, also after 200 mixed checks through 2
// workers.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

namespace {

struct hostile {
  std::string name, task, source;
  std::vector<std::string> expect, reasons, must_not_exist;
  std::string feedback_has; // a phrase the verdict's feedback contains (empty: not checked)
};

std::vector<std::string> words_after(const std::string& src, const std::string& tag) {
  std::vector<std::string> out;
  for (auto& line : split_lines(src)) {
    auto p = line.find(tag);
    if (line.rfind("//", 0) != 0 || p == std::string::npos)
      continue;
    std::string rest(trim(line.substr(p + tag.size())));
    for (auto& c : rest)
      if (c == '|')
        c = ' ';
    std::istringstream is(rest);
    std::string w;
    while (is >> w)
      out.push_back(w);
  }
  return out;
}

std::vector<hostile> load_dir(const std::string& dir, const std::string& default_task) {
  std::vector<hostile> out;
  for (auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".cu")
      continue;
    hostile h;
    h.name = f.path().stem().string();
    h.source = *read_file(f.path().string());
    h.expect = words_after(h.source, "expect:");
    h.reasons = words_after(h.source, "reason:");
    auto task = words_after(h.source, "task:");
    h.task = task.empty() ? default_task : task[0];
    h.must_not_exist = words_after(h.source, "must-not-exist:");
    h.feedback_has = join(words_after(h.source, "feedback-has:"), " ");
    out.push_back(h);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

// Live (non-zombie) processes running a worker binary under this leap's work directory (other
// leap instances on the machine may run sandboxed candidates too, under the same uid).
int candidate_processes(const std::string& work_dir) {
  int n = 0;
  for (auto& e : fs::directory_iterator("/proc")) {
    auto pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream st(e.path() / "status");
    std::string line, state;
    while (std::getline(st, line)) {
      if (line.rfind("State:", 0) == 0)
        state = std::string(trim(line.substr(6))).substr(0, 1);
    }
    if (state == "Z" || state == "X" || state.empty())
      continue;
    std::error_code ec;
    auto exe = fs::read_symlink(e.path() / "exe", ec).string();
    if (!ec && exe.rfind(work_dir, 0) == 0)
      ++n;
  }
  return n;
}

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    out.insert(e.path().filename().string());
  return out;
}

config::leap_config adversarial_config() {
  auto cfg = config::defaults();
  EXPECT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 5;
  cfg.executor.memory_limit_mb = 512;
  cfg.executor.trials = 2;
  cfg.executor.workers = 2;
  return cfg;
}

const char* secret = "/var/tmp/leap_adv_secret";

struct adversarial : ::testing::Test {
  void SetUp() override {
    std::ofstream(secret) << "a file candidates must not read\n";
    ::chmod(secret, 0644);
  }
  void TearDown() override { std::remove(secret); }
};

bool expected(const hostile& h, env::status st) {
  return std::find(h.expect.begin(), h.expect.end(), env::to_string(st)) != h.expect.end();
}

} // namespace

TEST_F(adversarial, EveryHostileCandidateIsContainedAndJudgedRight) {
  auto suite = load_dir(std::string(LEAP_SOURCE_DIR) + "/tests/env/adversarial", "vector_add");
  ASSERT_GE(suite.size(), 20u);
  for (auto& h : suite)
    for (auto& p : h.must_not_exist)
      std::remove(p.c_str());
  auto home_before = listing("/root");
  auto vartmp_before = listing("/var/tmp");
  auto fds_before = open_fds();
  std::string work_dir;
  {
  auto svc_r = make_services(adversarial_config());
  ASSERT_TRUE(svc_r.ok()) << svc_r.message();
  auto& svc = **svc_r;
  work_dir = svc.work_dir;
  auto procs_before = candidate_processes(svc.work_dir);
  {
    auto ev_made = evaluator::create(svc);
    ASSERT_TRUE(ev_made) << ev_made.message();
    auto& ev = **ev_made;
    std::vector<check_item> items;
    for (auto& h : suite)
      items.push_back({h.task, h.source, false, false});
    auto out = ev.evaluate(items);
    for (std::size_t i = 0; i < suite.size(); ++i) {
      const auto& h = suite[i];
      ASSERT_TRUE(out[i].ok()) << h.name << ": " << out[i].message();
      EXPECT_TRUE(expected(h, out[i]->v.st))
        << h.name << ": expected " << join(h.expect, "|") << ", got " << env::to_string(out[i]->v.st)
        << " (" << out[i]->v.reason << ")\n  feedback: " << out[i]->v.feedback;
      if (!h.reasons.empty()) {
        EXPECT_NE(std::find(h.reasons.begin(), h.reasons.end(), out[i]->v.reason), h.reasons.end())
          << h.name << ": expected reason " << join(h.reasons, "|") << ", got " << out[i]->v.reason
          << "\n  feedback: " << out[i]->v.feedback;
      }
      if (!h.feedback_has.empty()) {
        EXPECT_NE(out[i]->v.feedback.find(h.feedback_has), std::string::npos)
          << h.name << ": the feedback does not say \"" << h.feedback_has << "\": " << out[i]->v.feedback;
      }
      for (auto& p : h.must_not_exist) {
        EXPECT_FALSE(fs::exists(p)) << h.name << " created " << p;
      }
      if (h.name == "different_on_second_call") {
        EXPECT_EQ(out[i]->v.reason, "inconsistent");
        EXPECT_NE(out[i]->v.flags.find("inconsistent_across_calls"), std::string::npos);
      }
    }
  }
  EXPECT_EQ(listing("/root"), home_before);
  auto vartmp_after = listing("/var/tmp");
  EXPECT_EQ(vartmp_after, vartmp_before);
  EXPECT_EQ(candidate_processes(svc.work_dir), procs_before) << "a candidate process outlived its check";
  EXPECT_TRUE(listing(svc.work_dir).empty()) << "temporary directories left in " << svc.work_dir;
  }
  EXPECT_FALSE(fs::exists(work_dir)) << "leap's work directory was not removed";
  EXPECT_EQ(open_fds(), fds_before);
}

TEST_F(adversarial, TwoHundredMixedChecksLeakNothing) {
  auto hostile_set = load_dir(std::string(LEAP_SOURCE_DIR) + "/tests/env/adversarial", "vector_add");
  std::vector<hostile> good;
  for (auto& dir : fs::directory_iterator(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates"))
    for (auto& h : load_dir(dir.path().string(), dir.path().filename().string()))
      good.push_back(h);
  // Slow hostiles (timeouts, memory bombs, output floods) appear once; the rest cycle.
  std::vector<hostile> mix;
  std::set<std::string> slow{"sleep_past_timeout", "spin_in_kernel", "barrier_spin",
                             "memory_bomb", "device_memory_bomb", "output_flood"};
  for (auto& h : hostile_set)
    if (slow.count(h.name))
      mix.push_back(h);
  std::vector<hostile> fast;
  for (auto& h : hostile_set)
    if (!slow.count(h.name))
      fast.push_back(h);
  for (auto& g : good)
    if (g.name != "infinite_loop")
      fast.push_back(g);
  for (std::size_t k = 0; mix.size() < 200; ++k)
    mix.push_back(fast[k % fast.size()]);
  auto fds_before = open_fds();
  {
  auto svc_r = make_services(adversarial_config());
  ASSERT_TRUE(svc_r.ok()) << svc_r.message();
  auto& svc = **svc_r;
  auto procs_before = candidate_processes(svc.work_dir);
  {
    auto ev_made = evaluator::create(svc);
    ASSERT_TRUE(ev_made) << ev_made.message();
    auto& ev = **ev_made;
    std::vector<check_item> items;
    for (auto& h : mix)
      items.push_back({h.task, h.source, false, false});
    auto out = ev.evaluate(items);
    int wrong = 0;
    for (std::size_t i = 0; i < mix.size(); ++i) {
      ASSERT_TRUE(out[i].ok()) << mix[i].name << ": " << out[i].message();
      if (!expected(mix[i], out[i]->v.st)) {
        ++wrong;
        ADD_FAILURE() << "check " << i << " " << mix[i].name << ": got " << env::to_string(out[i]->v.st)
                      << ", expected " << join(mix[i].expect, "|");
      }
    }
    EXPECT_EQ(wrong, 0);
    auto cs = ev.compiler_stats();
    auto es = ev.executor_stats();
    EXPECT_EQ(es.worker_restarts, 0u);
    std::printf("[ load ] %zu checks: %llu compiles (%llu cache hits), %llu runs\n", mix.size(),
                static_cast<unsigned long long>(cs.completed),
                static_cast<unsigned long long>(cs.cache_hits),
                static_cast<unsigned long long>(es.completed));
  }
  EXPECT_EQ(candidate_processes(svc.work_dir), procs_before);
  EXPECT_TRUE(listing(svc.work_dir).empty());
  }
  EXPECT_EQ(open_fds(), fds_before);
}
