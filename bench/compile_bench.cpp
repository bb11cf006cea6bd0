// Cold compile cost of one candidate on the CPU backend, stage by stage:
// today's pipeline (env::cpu_build_command_lines: nvcc -cubin, the in-process rewrite, g++ of
// the rewritten source with the PCH, g++ of the glue, the link) against alternatives, side by
// side. Each round builds every candidate once with every alternative, in a rotating order, each
// in a fresh temporary directory with no build cache. CPU seconds = user + system time of the
// child processes (wait4's rusage, their own children included) + the rewrite's thread CPU time;
// wall seconds from start to a linked worker or to nvcc's rejection.
//
// The baseline's nvcc -cubin has env/compiler.cpp's cpu_syntax_check_flags (device code at -O0: the cubin is
// thrown away on the CPU backend; ptxas still runs, so its errors stay in the truth), adopted
// from this benchmark's device_O0 alternative, and links the task's glue.o built once per task
// (the compiler's glue cache), adopted from its glue_reused alternative. Alternatives:
//   device_O3   nvcc -cubin without those flags (the pipeline before they were adopted)
//   ptx_only    nvcc -ptx: stops before ptxas (loses ptxas's errors: see shared_too_large)
//   concurrent  nvcc runs while the rewrite, the emulation build and the glue build run
//   glue_compiled glue.cpp compiled for every candidate (the pipeline before the glue cache)
//   link_lld    -fuse-ld=lld instead of gold
// Counters per alternative: <alt>_cpu_s and <alt>_wall_s, the mean per candidate the pipeline
// accepts; <alt>_err_cpu_s for the candidates nvcc rejects; <alt>_cpu_ratio against baseline;
// <alt>_same = 1 when every candidate got the same outcome (rejected by nvcc, or linked) as with
// the baseline. Rounds: LEAP_COMPILE_BENCH_ROUNDS (default 2).
#include "common/fs.hpp"
#include "env/compiler.hpp"
#include "env/cpu_emu/rewriter.hpp"
#include "env/glue.hpp"
#include "env/task.hpp"
#include "env/toolchain.hpp"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace leap;

namespace {

// 64 KiB of static shared memory: only ptxas rejects it.
constexpr const char* shared_too_large = R"(#include <cuda_runtime.h>
__global__ void add_staged(const float* a, const float* b, float* c, int n) {
  __shared__ float stage[16384];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  stage[threadIdx.x] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (i < n)
    c[i] = stage[threadIdx.x] + b[i];
}
extern "C" void solution(const float* a, const float* b, float* c, int n) {
  add_staged<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaDeviceSynchronize();
}
)";

enum class alternative { baseline, device_O3, ptx_only, concurrent, glue_compiled, link_lld };
constexpr alternative all_alternatives[] = {alternative::baseline, alternative::device_O3,
                                            alternative::ptx_only, alternative::concurrent,
                                            alternative::glue_compiled, alternative::link_lld};
const char* name(alternative a) {
  switch (a) {
    case alternative::baseline: return "baseline";
    case alternative::device_O3: return "device_O3";
    case alternative::ptx_only: return "ptx_only";
    case alternative::concurrent: return "concurrent";
    case alternative::glue_compiled: return "glue_compiled";
    case alternative::link_lld: return "link_lld";
  }
  return "?";
}

struct candidate {
  std::string label; // task/file
  env::task_spec task;
  std::string source;
  bool reference = false;
};

struct outcome {
  bool nvcc_ok = false, built = false;
  double cpu = 0, wall = 0;
};

struct child_result {
  bool ok = false;
  double cpu = 0;
};

// Starts argv in `dir` with its output discarded.
pid_t spawn(const std::vector<std::string>& argv, const std::string& dir) {
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0)
      ::_exit(126);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

child_result reap(pid_t pid) {
  child_result r;
  if (pid <= 0)
    return r;
  int st = 0;
  struct rusage ru {};
  if (::wait4(pid, &st, 0, &ru) != pid)
    return r;
  r.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  r.cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec
          + ru.ru_stime.tv_usec * 1e-6;
  return r;
}

child_result run(const std::vector<std::string>& argv, const std::string& dir) {
  return reap(spawn(argv, dir));
}

double thread_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void replace_arg(std::vector<std::string>& argv, const std::string& from, const std::string& to) {
  for (auto& a : argv)
    if (a == from)
      a = to;
}

// Removes the first occurrence of `seq` (consecutive arguments) from argv.
void remove_sequence(std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  auto at = std::search(argv.begin(), argv.end(), seq.begin(), seq.end());
  if (at != argv.end())
    argv.erase(at, at + static_cast<std::ptrdiff_t>(seq.size()));
}

struct bench_env {
  env::toolchain tc;
  env::compiler_options opts;
  std::vector<candidate> candidates;
  std::map<std::string, std::string> glue_objects; // task -> prebuilt glue.o (the glue cache)
  std::string root;
  ~bench_env() {
    std::error_code ec;
    if (!root.empty())
      fs::remove_all(root, ec);
  }
};

bench_env* the_env() {
  static std::unique_ptr<bench_env> e = [] {
    auto e = std::make_unique<bench_env>();
    auto tc = env::discover_toolchain({});
    if (!tc) {
      std::fprintf(stderr, "compile_bench: %s\n", tc.message().c_str());
      std::exit(1);
    }
    e->tc = *tc;
    e->root = *make_temp_dir(temp_root(), "leap-compile-bench-");
    auto add = [&](const std::string& task, const std::string& file, std::string source) {
      auto t = env::find_task(e->tc.tasks_dir(), task);
      if (!t) {
        std::fprintf(stderr, "compile_bench: %s\n", t.message().c_str());
        std::exit(1);
      }
      bool ref = file == "reference.cu";
      if (source.empty())
        source = *read_file((ref ? e->tc.tasks_dir() + "/" + task + "/"
                                 : e->tc.source_dir + "/tests/env/candidates/" + task + "/")
                            + file);
      e->candidates.push_back({task + "/" + file, *t, source, ref});
    };
    for (auto* t : {"relu", "softmax_rows", "matmul", "sum_reduce", "transpose"})
      add(t, "reference.cu", "");
    add("matmul", "smem_tiled.cu", "");
    add("vector_add", "compile_error.cu", "");
    add("vector_add", "shared_too_large.cu", shared_too_large);
    // One glue.o per task, built before any timing, as the compiler's glue cache holds it.
    for (auto& c : e->candidates) {
      if (e->glue_objects.count(c.task.name))
        continue;
      auto dir = *make_temp_dir(e->root, "glue-");
      (void)write_file_atomic(dir + "/glue.cpp", env::make_glue_source(c.task));
      auto cmd = env::cpu_build_command_lines(e->tc, e->opts, "x.cu");
      run(cmd.glue, dir);
      e->glue_objects[c.task.name] = dir + "/glue.o";
    }
    return e;
  }();
  return e.get();
}

outcome build(bench_env& e, const candidate& c, alternative alt) {
  outcome o;
  auto dir = *make_temp_dir(e.root, "build-");
  std::string display = c.reference ? "reference.cu" : "solution.cu";
  (void)write_file_atomic(dir + "/" + display, c.source + env::signature_check_suffix(c.task));
  (void)write_file_atomic(dir + "/glue.cpp", env::make_glue_source(c.task));
  auto cmd = env::cpu_build_command_lines(e.tc, e.opts, display);
  if (alt == alternative::device_O3)
    remove_sequence(cmd.nvcc, {"-Xcicc", "-O0", "-Xptxas", "-O0"}); // cpu_syntax_check_flags
  if (alt == alternative::ptx_only) {
    replace_arg(cmd.nvcc, "-cubin", "-ptx");
    replace_arg(cmd.nvcc, "solution.cubin", "solution.ptx");
  }
  if (alt == alternative::link_lld)
    replace_arg(cmd.link, "-fuse-ld=gold", "-fuse-ld=lld");
  auto t0 = std::chrono::steady_clock::now();
  // The emulation side: rewrite, g++ of the rewritten source, glue. False when it fails.
  auto emulation_side = [&]() {
    double c0 = thread_cpu();
    auto rw = emu::rewrite_cuda_source(c.source, display);
    bool ok = rw.ok && write_file_atomic(dir + "/solution_emu.cpp", rw.code).ok();
    o.cpu += thread_cpu() - c0;
    if (!ok)
      return false;
    auto gxx = run(cmd.emu_build, dir);
    o.cpu += gxx.cpu;
    if (!gxx.ok)
      return false;
    if (alt != alternative::glue_compiled) {
      std::error_code ec;
      fs::copy_file(e.glue_objects.at(c.task.name), dir + "/glue.o", ec);
      return !ec;
    }
    auto glue = run(cmd.glue, dir);
    o.cpu += glue.cpu;
    return glue.ok;
  };
  bool emu_ok = false;
  if (alt == alternative::concurrent) {
    pid_t nvcc = spawn(cmd.nvcc, dir);
    emu_ok = emulation_side();
    auto r = reap(nvcc);
    o.cpu += r.cpu;
    o.nvcc_ok = r.ok;
  } else {
    auto r = run(cmd.nvcc, dir);
    o.cpu += r.cpu;
    o.nvcc_ok = r.ok;
    if (o.nvcc_ok)
      emu_ok = emulation_side();
  }
  if (o.nvcc_ok && emu_ok) {
    auto link = run(cmd.link, dir);
    o.cpu += link.cpu;
    o.built = link.ok;
  }
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return o;
}

void BM_compile_side_by_side(benchmark::State& state) {
  auto& e = *the_env();
  constexpr std::size_t n_alt = sizeof(all_alternatives) / sizeof(all_alternatives[0]);
  struct sums {
    double cpu = 0, wall = 0, err_cpu = 0;
    int accepted = 0, rejected = 0;
    bool same = true;
  };
  std::vector<sums> s(n_alt);
  std::size_t round = 0;
  for (auto _ : state) {
    for (auto& c : e.candidates) {
      std::vector<outcome> got(n_alt);
      for (std::size_t k = 0; k < n_alt; ++k) {
        std::size_t a = (k + round) % n_alt; // rotate which alternative goes first
        got[a] = build(e, c, all_alternatives[a]);
      }
      for (std::size_t a = 0; a < n_alt; ++a) {
        auto& o = got[a];
        if (o.nvcc_ok != got[0].nvcc_ok || o.built != got[0].built) {
          s[a].same = false;
          std::fprintf(stderr, "compile_bench: %s on %s: nvcc %s, built %s (baseline: %s, %s)\n",
                       name(all_alternatives[a]), c.label.c_str(), o.nvcc_ok ? "ok" : "rejected",
                       o.built ? "yes" : "no", got[0].nvcc_ok ? "ok" : "rejected",
                       got[0].built ? "yes" : "no");
        }
        // Sorted by the baseline's outcome, so every alternative averages the same candidates.
        if (got[0].built) {
          s[a].cpu += o.cpu;
          s[a].wall += o.wall;
          ++s[a].accepted;
        } else {
          s[a].err_cpu += o.cpu;
          ++s[a].rejected;
        }
      }
    }
    ++round;
  }
  for (std::size_t a = 0; a < n_alt; ++a) {
    std::string n = name(all_alternatives[a]);
    double cpu = s[a].accepted ? s[a].cpu / s[a].accepted : 0;
    double base = s[0].accepted ? s[0].cpu / s[0].accepted : 0;
    state.counters[n + "_cpu_s"] = cpu;
    state.counters[n + "_wall_s"] = s[a].accepted ? s[a].wall / s[a].accepted : 0;
    state.counters[n + "_err_cpu_s"] = s[a].rejected ? s[a].err_cpu / s[a].rejected : 0;
    state.counters[n + "_cpu_ratio"] = base > 0 ? cpu / base : 0;
    state.counters[n + "_same"] = s[a].same ? 1 : 0;
    std::fprintf(stderr,
                 "compile_bench: %-13s cpu %.3f s (x%.3f)  wall %.3f s  per built candidate; "
                 "cpu %.3f s per rejected one; outcomes %s\n",
                 n.c_str(), cpu, base > 0 ? cpu / base : 0,
                 s[a].accepted ? s[a].wall / s[a].accepted : 0,
                 s[a].rejected ? s[a].err_cpu / s[a].rejected : 0,
                 s[a].same ? "same as baseline" : "DIFFER");
  }
}

int rounds() {
  const char* r = std::getenv("LEAP_COMPILE_BENCH_ROUNDS");
  int n = r ? std::atoi(r) : 2;
  return n > 0 ? n : 2;
}

BENCHMARK(BM_compile_side_by_side)->Iterations(rounds())->Unit(benchmark::kSecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
