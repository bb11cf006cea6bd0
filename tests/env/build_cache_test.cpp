// The build cache (env/build_cache.hpp) without a compiler: verified entries (a torn, truncated
// or bit-flipped entry is removed, never used), least-recently-used eviction that spares recent
// and locked entries, `clear` refused while the cache is held open, and several processes
// (fork) building overlapping keys: each key is built exactly once and never by two at a time.
#include "common/file_manifest.hpp"
#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "env/build_cache.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace leap;
using env::build_cache;

namespace {

struct temp_cache {
  std::string dir = *make_temp_dir(temp_root(), "leap-cache-test-");
  ~temp_cache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string key_of(int i) { return sha256_hex("key-" + std::to_string(i)); }

env::build_cache_options opts(const std::string& dir, std::uint64_t max_bytes = 0, double keep = 0) {
  env::build_cache_options o;
  o.cache_dir = dir;
  o.max_bytes = max_bytes;
  o.keep_recent_seconds = keep;
  o.hold_in_use = false;
  return o;
}

// Publishes key with a fake worker of `bytes` bytes.
void put(build_cache& c, const std::string& key, std::size_t bytes, const std::string& scratch) {
  auto w = scratch + "/worker-" + key;
  std::ofstream(w, std::ios::binary) << std::string(bytes, 'w');
  auto l = c.lock(key);
  ASSERT_TRUE(l) << l.message();
  auto r = c.publish(*l, key, {{"status", "ok"}, {"diagnostics", ""}, {"stage", ""}}, w);
  ASSERT_TRUE(r) << r.message();
}

build_cache::found look(build_cache& c, const std::string& key, std::string* problem = nullptr) {
  auto l = c.lock(key);
  EXPECT_TRUE(l) << l.message();
  auto r = c.lookup(*l, key);
  if (problem)
    *problem = r.problem;
  return r.what;
}

void age(build_cache& c, const std::string& key, int seconds_ago) {
  fs::last_write_time(c.entry_dir(key),
                      fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
}

} // namespace

TEST(BuildCache, PublishedEntryIsAVerifiedHit) {
  temp_cache t;
  build_cache c(opts(t.dir));
  auto k = key_of(1);
  EXPECT_EQ(look(c, k), build_cache::found::miss);
  put(c, k, 1000, t.dir);
  auto l = c.lock(k);
  auto r = c.lookup(*l, k);
  EXPECT_EQ(r.what, build_cache::found::hit);
  EXPECT_EQ(r.record["status"], "ok");
  EXPECT_EQ(fs::file_size(c.entry_dir(k) + "/worker"), 1000u);
  EXPECT_TRUE(fs::exists(c.entry_dir(k) + "/manifest.json"));
  // A failure record has no worker and is a hit too.
  auto k2 = key_of(2);
  {
    auto l2 = c.lock(k2);
    ASSERT_TRUE(c.publish(*l2, k2, {{"status", "compile_error"}, {"diagnostics", "x.cu:1: error"}}, ""));
  }
  EXPECT_EQ(look(c, k2), build_cache::found::hit);
}

TEST(BuildCache, TornTruncatedOrBitFlippedEntriesAreRemovedNeverUsed) {
  temp_cache t;
  build_cache c(opts(t.dir));
  struct damage {
    const char* what;
    std::function<void(const std::string&)> apply;
    const char* names;
  };
  std::vector<damage> cases = {
    {"worker truncated", [](const std::string& d) { fs::resize_file(d + "/worker", 500); }, "worker"},
    {"worker bit flipped",
     [](const std::string& d) {
       std::fstream f(d + "/worker", std::ios::in | std::ios::out | std::ios::binary);
       f.seekp(123);
       f.put('W');
     },
     "worker"},
    {"record bit flipped",
     [](const std::string& d) {
       auto s = *read_file(d + "/result.json");
       s[s.find("ok")] = 'o' ^ 1;
       std::ofstream(d + "/result.json", std::ios::binary | std::ios::trunc) << s;
     },
     "result.json"},
    {"worker missing", [](const std::string& d) { fs::remove(d + "/worker"); }, "worker"},
    {"no manifest (torn, or an older leap)", [](const std::string& d) { fs::remove(d + "/manifest.json"); },
     "manifest.json"},
    {"manifest cut", [](const std::string& d) { fs::resize_file(d + "/manifest.json", 10); }, "manifest.json"},
  };
  int i = 10;
  for (auto& dmg : cases) {
    auto k = key_of(i++);
    put(c, k, 1000, t.dir);
    dmg.apply(c.entry_dir(k));
    std::string problem;
    EXPECT_EQ(look(c, k, &problem), build_cache::found::damaged) << dmg.what;
    EXPECT_NE(problem.find(dmg.names), std::string::npos) << dmg.what << ": " << problem;
    EXPECT_FALSE(fs::exists(c.entry_dir(k))) << dmg.what;
    EXPECT_EQ(look(c, k), build_cache::found::miss) << dmg.what;
    put(c, k, 1000, t.dir); // rebuilt
    EXPECT_EQ(look(c, k), build_cache::found::hit) << dmg.what;
    std::printf("[ cache ] %s: %s\n", dmg.what, problem.c_str());
  }
  // An entry without a manifest (an older leap's) is told apart, so the compiler reports those
  // once rather than once per build.
  {
    auto k = key_of(99);
    put(c, k, 10, t.dir);
    fs::remove(c.entry_dir(k) + "/manifest.json");
    auto l = c.lock(k);
    auto r = c.lookup(*l, k);
    EXPECT_EQ(r.what, build_cache::found::damaged);
    EXPECT_TRUE(r.no_manifest);
  }
  auto u = c.scan(true);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->damaged, 0u);
  // A damaged entry is counted by a verifying scan and removed by prune.
  std::fstream f(c.entry_dir(key_of(10)) + "/worker", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(7);
  f.put('X');
  f.close();
  EXPECT_EQ(c.scan(true)->damaged, 1u);
  auto p = c.prune(~0ull);
  ASSERT_TRUE(p) << p.message();
  EXPECT_EQ(p->damaged_removed, 1u);
  EXPECT_EQ(c.scan(true)->damaged, 0u);
}

TEST(BuildCache, EvictsLeastRecentlyUsedDownToTheBoundOnPublish) {
  temp_cache t;
  // Room for four 100 KB builds; the fifth publish evicts down to 90% of the bound.
  build_cache c(opts(t.dir, 450 * 1000, 60));
  for (int i = 0; i < 4; ++i) {
    put(c, key_of(i), 100 * 1000, t.dir);
    age(c, key_of(i), 1000 - i * 100); // key 0 oldest
  }
  // A hit makes key 0 the most recently used.
  EXPECT_EQ(look(c, key_of(0)), build_cache::found::hit);
  put(c, key_of(4), 100 * 1000, t.dir);
  EXPECT_TRUE(fs::exists(c.entry_dir(key_of(0))));
  EXPECT_FALSE(fs::exists(c.entry_dir(key_of(1)))); // least recently used
  EXPECT_TRUE(fs::exists(c.entry_dir(key_of(4))));
  auto u = c.scan(false);
  EXPECT_LE(u->bytes, 450u * 1000);
  EXPECT_EQ(u->entries, 4u);
}

TEST(BuildCache, RecentlyUsedOrLockedEntriesAreNeverEvicted) {
  temp_cache t;
  build_cache c(opts(t.dir, 1, 600));
  for (int i = 0; i < 3; ++i)
    put(c, key_of(i), 10 * 1000, t.dir);
  auto r = c.prune(0);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->evicted, 0u);
  EXPECT_EQ(r->kept_recent, 3u);
  // Old enough, but its key is locked (being checked or published): kept.
  for (int i = 0; i < 3; ++i)
    age(c, key_of(i), 3600);
  auto held = c.lock(key_of(1));
  r = c.prune(0);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->evicted, 2u);
  EXPECT_EQ(r->kept_locked, 1u);
  EXPECT_TRUE(fs::exists(c.entry_dir(key_of(1))));
}

TEST(BuildCache, ClearIsRefusedWhileAProcessHoldsTheCacheOpen) {
  temp_cache t;
  build_cache tool(opts(t.dir));
  put(tool, key_of(1), 100, t.dir);
  {
    auto o = opts(t.dir);
    o.hold_in_use = true;
    build_cache running(o);
    auto r = tool.clear();
    ASSERT_FALSE(r);
    EXPECT_NE(r.message().find("in use"), std::string::npos) << r.message();
  }
  auto r = tool.clear();
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->builds, 1u);
  EXPECT_EQ(tool.scan(false)->entries, 0u);
}

// The compiler's glue objects live beside the builds (<cache_dir>/glue/): scan counts them,
// prune leaves them, clear removes them with the builds; a missing glue directory is no error.
TEST(BuildCache, GlueObjectsAreCountedKeptByPruneAndRemovedByClear) {
  temp_cache t;
  build_cache tool(opts(t.dir));
  auto empty = tool.scan(true);
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_EQ(empty->glue_objects, 0u);
  put(tool, key_of(1), 100, t.dir);
  fs::create_directories(tool.glue_dir());
  for (const char* k : {"aa", "bb"}) {
    ASSERT_TRUE(write_file_atomic(tool.glue_dir() + "/" + k + ".o", std::string(1000, 'x')));
    ASSERT_TRUE(write_file_atomic(tool.glue_dir() + "/" + k + ".sha256", std::string(64, '0')));
  }
  auto u = tool.scan(true);
  ASSERT_TRUE(u) << u.message();
  EXPECT_EQ(u->glue_objects, 2u);
  EXPECT_EQ(u->glue_bytes, 2u * (1000 + 64));
  EXPECT_EQ(u->entries, 1u);
  auto p = tool.prune(0);
  ASSERT_TRUE(p) << p.message();
  EXPECT_EQ(tool.scan(false)->glue_objects, 2u);
  auto r = tool.clear();
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->glue_objects, 2u);
  EXPECT_TRUE(fs::is_empty(tool.glue_dir()));
  EXPECT_EQ(tool.scan(false)->entries, 0u);
}

// Three processes build six keys each (overlapping, in different orders) on one cache: every
// key is built once, by one process, never two at a time, and every entry verifies.
TEST(BuildCache, ProcessesSharingACacheBuildEachKeyOnceAndNeverAtTheSameTime) {
  temp_cache t;
  const std::string log = t.dir + "/builds.log";
  const int procs = 3, keys = 6;
  std::vector<pid_t> kids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      build_cache c(opts(t.dir));
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      int bad = 0;
      for (int j = 0; j < keys; ++j) {
        auto k = key_of((j + p * 2) % keys);
        auto l = c.lock(k);
        if (!l) {
          ++bad;
          continue;
        }
        auto r = c.lookup(*l, k);
        if (r.what == build_cache::found::hit)
          continue;
        auto line = "start " + k + " " + std::to_string(::getpid()) + "\n";
        (void)!::write(fd, line.data(), line.size());
        // The "build": long enough for the others to reach this key.
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        auto w = t.dir + "/w-" + std::to_string(::getpid()) + "-" + k;
        std::ofstream(w, std::ios::binary) << std::string(20000, static_cast<char>('a' + p));
        line = "end " + k + " " + std::to_string(::getpid()) + "\n";
        (void)!::write(fd, line.data(), line.size());
        if (!c.publish(*l, k, {{"status", "ok"}}, w))
          ++bad;
      }
      ::close(fd);
      ::_exit(bad);
    }
    kids.push_back(pid);
  }
  for (auto pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::map<std::string, int> starts;
  std::map<std::string, int> running; // builds of a key under way (never more than one)
  std::istringstream in(*read_file(log));
  std::string what, k, pid;
  while (in >> what >> k >> pid) {
    if (what == "start") {
      ++starts[k];
      EXPECT_EQ(running[k]++, 0) << "two processes built " << k << " at once";
    } else {
      --running[k];
    }
  }
  EXPECT_EQ(starts.size(), static_cast<std::size_t>(keys));
  for (auto& [key, n] : starts)
    EXPECT_EQ(n, 1) << key << " built " << n << " times";
  build_cache c(opts(t.dir));
  auto u = c.scan(true);
  EXPECT_EQ(u->entries, static_cast<std::size_t>(keys));
  EXPECT_EQ(u->damaged, 0u);
}

TEST(FileManifest, NamesTheDamagedFile) {
  temp_cache t;
  std::ofstream(t.dir + "/a.bin", std::ios::binary) << std::string(5000, 'a');
  std::ofstream(t.dir + "/b.json", std::ios::binary) << "{\"x\": 1}\n";
  ASSERT_TRUE(write_manifest(t.dir, {"a.bin", "b.json"}));
  auto v = verify_manifest(t.dir);
  ASSERT_TRUE(v) << v.message();
  EXPECT_EQ(*v, manifest_state::verified);
  std::ofstream(t.dir + "/b.json", std::ios::binary | std::ios::trunc) << "{\"x\": 2}\n";
  v = verify_manifest(t.dir);
  ASSERT_FALSE(v);
  EXPECT_NE(v.message().find("b.json"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("damaged"), std::string::npos) << v.message();
  fs::resize_file(t.dir + "/a.bin", 10);
  v = verify_manifest(t.dir, {"a.bin"});
  ASSERT_FALSE(v);
  EXPECT_NE(v.message().find("a.bin: 10 bytes"), std::string::npos) << v.message();
  fs::remove(t.dir + "/manifest.json");
  EXPECT_EQ(*verify_manifest(t.dir), manifest_state::no_manifest);
}

// What a cluster node answers when asked to execute a build: it holds it only when it verifies.
TEST(BuildCache, ANodeHoldsABuildOnlyWhenItVerifies) {
  temp_cache t;
  build_cache c(opts(t.dir));
  auto k = key_of(77);
  EXPECT_FALSE(c.has_worker(k));
  put(c, k, 4000, t.dir);
  EXPECT_TRUE(c.has_worker(k));
  {
    auto busy = c.lock(k); // a job of that lock file is building: the worker file decides
    EXPECT_TRUE(c.has_worker(k));
  }
  fs::resize_file(c.entry_dir(k) + "/worker", 100);
  EXPECT_FALSE(c.has_worker(k));
  EXPECT_FALSE(fs::exists(c.entry_dir(k))); // removed: the head has it built again
  auto k2 = key_of(78);
  {
    auto l = c.lock(k2);
    ASSERT_TRUE(c.publish(*l, k2, {{"status", "compile_error"}}, ""));
  }
  EXPECT_FALSE(c.has_worker(k2)); // a failure record runs nothing
}
