// bench_startup: what a script pays per `leap` call (its start-up). Each benchmark starts
// one process and waits for it: `version`, and a `check --reference` whose build is already in
// the cache, through the `leap` front end (no LibTorch) and through `leap-torch` (every verb,
// LibTorch loaded; started without OMP_WAIT_POLICY and OPENBLAS_THREAD_TIMEOUT it re-executes
// itself once, exactly as the single `leap` binary did before the split). Wall time per call,
// manual timing, 10 repetitions with min / median / max; run with
// --benchmark_enable_random_interleaving=true to alternate.
#include "common/fs.hpp"
#include "common/spawn.hpp"
#include "common/thread_pools_env.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

const std::string bin_dir = LEAP_BINARY_DIR;

// The cache of the check benchmarks: a fresh one, warmed by one check before any timing, and
// removed when the benchmark exits.
const std::string& cache_dir() {
  struct owned {
    std::string dir;
    ~owned() {
      std::error_code ec;
      if (!dir.empty())
        std::filesystem::remove_all(dir, ec);
    }
  };
  static const owned o{[] {
    auto d = leap::make_temp_dir(leap::temp_root(), "leap-startup-bench-");
    return d ? *d : std::string();
  }()};
  return o.dir;
}

// Runs argv with stdout and stderr on /dev/null and without the thread-pool variables leap sets
// (common/thread_pools_env.hpp); its exit status.
int run(const std::vector<std::string>& args) {
  auto set_by_leap = [](const std::string& entry) {
    return std::any_of(std::begin(leap::preferred_thread_pool_env),
                       std::end(leap::preferred_thread_pool_env), [&](const auto& v) {
                         return entry.rfind(std::string(v.name) + "=", 0) == 0;
                       });
  };
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (!set_by_leap(*e))
      env_s.emplace_back(*e);
  leap::spawn_spec spec;
  spec.argv = args;
  spec.stdout_path = "/dev/null";
  spec.stderr_path = "/dev/null";
  spec.env = std::move(env_s);
  auto pid = leap::spawn_child(spec);
  if (!pid)
    return -1;
  auto code = leap::wait_child(*pid);
  return code && *code < 128 ? *code : -1;
}

std::vector<std::string> command(const std::string& exe, bool check) {
  std::vector<std::string> a{bin_dir + "/" + exe};
  if (!check) {
    a.push_back("version");
    return a;
  }
  for (const char* s : {"--set", "environment.backend=cpu", "--set"})
    a.push_back(s);
  a.push_back("environment.cache_dir=" + cache_dir());
  for (const char* s : {"check", "--task", "relu", "--reference"})
    a.push_back(s);
  return a;
}

void bm_start(benchmark::State& state, const std::string& exe, bool check) {
  const auto args = command(exe, check);
  if (check && run(command("leap", true)) != 0) { // builds the reference once (the cache hit)
    state.SkipWithError("the warm-up check failed (see `leap check --task relu --reference`)");
    return;
  }
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    int rc = run(args);
    auto t1 = std::chrono::steady_clock::now();
    if (rc != 0) {
      state.SkipWithError(("exit status " + std::to_string(rc)).c_str());
      return;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

void shape(benchmark::internal::Benchmark* b) {
  b->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(10)
    ->ComputeStatistics("min", min_of)
    ->ComputeStatistics("max", max_of)
    ->ReportAggregatesOnly(true);
}

} // namespace

BENCHMARK_CAPTURE(bm_start, version/leap, std::string("leap"), false)->Apply(shape);
BENCHMARK_CAPTURE(bm_start, version/leap_torch, std::string("leap-torch"), false)->Apply(shape);
BENCHMARK_CAPTURE(bm_start, check_cached/leap, std::string("leap"), true)->Apply(shape);
BENCHMARK_CAPTURE(bm_start, check_cached/leap_torch, std::string("leap-torch"), true)->Apply(shape);

BENCHMARK_MAIN();
