// The build cache through real `leap` processes on a fresh cache directory: two checks of the
// same candidate started together build it once (the other waits for the key's lock and gets a
// hit); a bit-flipped or truncated worker is detected (by `leap cache stats` and `leap doctor`
// too), removed and rebuilt, never run; `leap
// cache prune` evicts the least recently used builds down to environment.cache_max_mb and keeps
// recent ones; `leap cache clear` is refused while a process holds the cache open.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/build_cache.hpp"
#include "env/process.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace fs = std::filesystem;
using namespace leap;

namespace {

struct temp_cache {
  std::string dir = *make_temp_dir(temp_root(), "leap-cache-e2e-");
  ~temp_cache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

env::process_spec leap_spec(const std::string& cache, std::vector<std::string> args) {
  env::process_spec s;
  s.argv = {LEAP_BINARY, "--set", "environment.cache_dir=" + cache, "--set", "environment.backend=cpu",
            "--set", "executor.trials=2"};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.timeout_seconds = 300;
  s.output_limit = 1 << 20;
  return s;
}

std::vector<std::string> check_args() {
  return {"check", "--task", "vector_add", "--source",
          std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu", "--json"};
}

nlohmann::json verdict(const env::process_outcome& o) {
  auto lines = split_lines(std::string(trim(o.out)));
  EXPECT_FALSE(lines.empty()) << o.err;
  return lines.empty() ? nlohmann::json() : nlohmann::json::parse(lines.back(), nullptr, false);
}

// The entry directories of the cache (named by their 64-hex key).
std::vector<std::string> entries(const std::string& cache) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(cache + "/builds"))
    if (e.is_directory() && e.path().filename().string().size() == 64)
      out.push_back(e.path().string());
  return out;
}

} // namespace

TEST(CacheE2E, TwoProcessesOnOneCacheBuildTheCandidateOnceAndADamagedBuildIsRebuilt) {
  temp_cache t;
  env::process_runner runner;
  std::mutex m;
  std::condition_variable cv;
  std::vector<env::process_outcome> outs;
  for (int i = 0; i < 2; ++i)
    runner.start(leap_spec(t.dir, check_args()), [&](env::process_outcome o) {
      std::lock_guard<std::mutex> lk(m);
      outs.push_back(std::move(o));
      cv.notify_all();
    });
  {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return outs.size() == 2; });
  }
  int built = 0;
  for (auto& o : outs) {
    ASSERT_EQ(o.exit_code, 0) << o.err;
    auto j = verdict(o);
    EXPECT_EQ(j["status"], "correct") << o.out;
    built += j["cached"].get<bool>() ? 0 : 1;
  }
  EXPECT_EQ(built, 1) << "both processes built the same candidate";
  // The candidate and the task's reference, both verified.
  auto stats = env::run_blocking(leap_spec(t.dir, {"cache", "stats"}));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("entries:      2"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("damaged:      0"), std::string::npos) << stats.out;
  std::printf("[ cache ] two concurrent checks: %d build(s)\n%s", built, stats.out.c_str());

  // Damage every worker in the cache (one bit flip, one truncation): the next check rebuilds
  // what it needs and says so; the verdict is the same.
  auto dirs = entries(t.dir);
  ASSERT_EQ(dirs.size(), 2u);
  {
    std::fstream f(dirs[0] + "/worker", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    char c = 0;
    f.read(&c, 1);
    f.seekp(4096);
    f.put(static_cast<char>(c ^ 0x10));
  }
  fs::resize_file(dirs[1] + "/worker", fs::file_size(dirs[1] + "/worker") / 2);
  stats = env::run_blocking(leap_spec(t.dir, {"cache", "stats"}));
  EXPECT_NE(stats.out.find("damaged:      2"), std::string::npos) << stats.out;
  // leap doctor shows the same: size, bound and health.
  auto doctor = env::run_blocking(leap_spec(t.dir, {"doctor"}));
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  EXPECT_NE(doctor.out.find("build cache:     2 builds, "), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find(" MiB of 4096 MiB, 2 damaged"), std::string::npos) << doctor.out;
  auto again = env::run_blocking(leap_spec(t.dir, check_args()));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto j = verdict(again);
  EXPECT_EQ(j["status"], "correct") << again.out;
  EXPECT_FALSE(j["cached"].get<bool>());
  EXPECT_NE(again.err.find("/worker: SHA-256"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("truncated or torn write"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("removed, building it again"), std::string::npos) << again.err;
  stats = env::run_blocking(leap_spec(t.dir, {"cache", "stats"}));
  EXPECT_NE(stats.out.find("damaged:      0"), std::string::npos) << stats.out;
  std::printf("[ cache ] after damaging both workers, the next check said:\n%s", again.err.c_str());
}

TEST(CacheE2E, PruneEvictsLeastRecentlyUsedDownToTheBoundAndClearWaitsForUsers) {
  temp_cache t;
  // Four builds of just under 1 MiB used 1 to 4 hours ago, and one used now.
  env::build_cache_options o;
  o.cache_dir = t.dir;
  o.hold_in_use = false;
  env::build_cache c(o);
  auto put = [&](const std::string& key, int hours_ago) {
    auto w = t.dir + "/w";
    std::ofstream(w, std::ios::binary) << std::string((1 << 20) - 2048, 'x');
    auto l = c.lock(key);
    ASSERT_TRUE(l);
    ASSERT_TRUE(c.publish(*l, key, {{"status", "ok"}}, w));
    fs::last_write_time(c.entry_dir(key), fs::file_time_type::clock::now() - std::chrono::hours(hours_ago));
  };
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i)
    keys.push_back(std::string(63, "abcde"[i]) + "0");
  for (int i = 0; i < 5; ++i)
    put(keys[i], i == 4 ? 0 : 4 - i); // keys[0] oldest ... keys[4] now
  auto p = env::run_blocking(leap_spec(t.dir, {"--set", "environment.cache_max_mb=2", "cache", "prune"}));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::printf("[ cache ] leap cache prune (bound 2 MiB):\n%s", p.out.c_str());
  EXPECT_NE(p.out.find("before:  5 entries, 5.0 MiB"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("removed: 3 least recently used"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("after:   2 entries, 2.0 MiB"), std::string::npos) << p.out;
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(fs::exists(c.entry_dir(keys[i]))) << i;
  EXPECT_TRUE(fs::exists(c.entry_dir(keys[3])));
  EXPECT_TRUE(fs::exists(c.entry_dir(keys[4])));
  // Builds used in the last 10 minutes stay, even over the bound (a process may be about to
  // run them).
  fs::last_write_time(c.entry_dir(keys[3]), fs::file_time_type::clock::now());
  p = env::run_blocking(leap_spec(t.dir, {"--set", "environment.cache_max_mb=1", "cache", "prune"}));
  EXPECT_NE(p.out.find("removed: 0 least recently used"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("kept:    2 used in the last 600 s"), std::string::npos) << p.out;
  EXPECT_TRUE(fs::exists(c.entry_dir(keys[3])));
  EXPECT_TRUE(fs::exists(c.entry_dir(keys[4])));
  {
    // A process that builds holds the cache open: clear is refused.
    auto ho = o;
    ho.hold_in_use = true;
    env::build_cache user(ho);
    auto r = env::run_blocking(leap_spec(t.dir, {"cache", "clear"}));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("in use by a running leap process"), std::string::npos) << r.err;
  }
  auto r = env::run_blocking(leap_spec(t.dir, {"cache", "clear"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed 2 builds"), std::string::npos) << r.out;
  EXPECT_TRUE(entries(t.dir).empty());
}
