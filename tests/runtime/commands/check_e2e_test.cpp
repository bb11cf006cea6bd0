// End-to-end checks through the real pipeline: CAF compiler and executor pools, real nvcc, the
// g++ build against the CUDA-on-CPU emulation, worker processes, comparison and verdicts.
// Candidates under tests/env/candidates/<task>/*.cu declare their expected status on their first
// line ("// expect: wrong_answer", alternatives separated by '|').
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/cpu_emu/rewriter.hpp"
#include "env/process.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"
#include "runtime/workflows/verify_tasks.hpp"
#include "tests/runtime/commands/process_killer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

namespace {

config::leap_config test_config(const std::string& backend = "cpu") {
  auto cfg = config::defaults();
  EXPECT_TRUE(config::apply_override(cfg, "environment.backend=" + backend).ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 6;
  cfg.executor.trials = 2;
  cfg.executor.memory_limit_mb = 2048;
  return cfg;
}

std::unique_ptr<services> make(const config::leap_config& cfg) {
  auto s = make_services(cfg);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
  return s.ok() ? std::move(*s) : nullptr;
}

struct candidate_file {
  std::string task, path, source;
  std::vector<std::string> expect;
};

std::vector<candidate_file> bundled_candidates() {
  std::vector<candidate_file> out;
  for (auto& dir : fs::directory_iterator(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates")) {
    for (auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".cu")
        continue;
      candidate_file c;
      c.task = dir.path().filename().string();
      c.path = f.path().string();
      c.source = *read_file(c.path);
      auto first = split_lines(c.source).at(0);
      auto pos = first.find("expect:");
      EXPECT_NE(pos, std::string::npos) << c.path << " has no '// expect:' line";
      std::string list(trim(first.substr(pos + 7)));
      for (std::size_t s = 0; s <= list.size();) {
        auto bar = list.find('|', s);
        c.expect.emplace_back(trim(list.substr(s, bar == std::string::npos ? std::string::npos : bar - s)));
        if (bar == std::string::npos)
          break;
        s = bar + 1;
      }
      out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return out;
}

} // namespace

TEST(CheckE2E, EveryBundledCandidateGetsItsExpectedVerdict) {
  auto svc = make(test_config());
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  auto cands = bundled_candidates();
  ASSERT_GE(cands.size(), 14u);
  std::vector<check_item> items;
  for (auto& c : cands)
    items.push_back({c.task, c.source, false, false});
  auto out = ev.evaluate(items);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    ASSERT_TRUE(out[i].ok()) << cands[i].path << ": " << out[i].message();
    const auto& v = out[i]->v;
    std::string got = env::to_string(v.st);
    EXPECT_NE(std::find(cands[i].expect.begin(), cands[i].expect.end(), got), cands[i].expect.end())
      << cands[i].path << ": expected " << join(cands[i].expect, "|") << ", got " << got
      << "\n  feedback: " << v.feedback;
    EXPECT_FALSE(v.feedback.empty());
    EXPECT_EQ(v.backend, env::backend::cpu);
    EXPECT_FALSE(v.timed) << "the CPU emulation must not report timings";
    if (v.st == env::status::timeout) {
      EXPECT_NE(v.feedback.find("did not finish"), std::string::npos);
    }
    if (v.st == env::status::compile_error) {
      EXPECT_NE(v.feedback.find("solution.cu("), std::string::npos) << v.feedback;
    }
    if (cands[i].path.find("barrier_deadlock") != std::string::npos) {
      EXPECT_EQ(v.reason, "deadlock") << v.feedback;
    }
    if (cands[i].path.find("oob_write") != std::string::npos) {
      EXPECT_EQ(v.reason, "canary") << v.feedback;
    }
    if (cands[i].path.find("do_nothing") != std::string::npos) {
      EXPECT_NE(v.feedback.find("NaN"), std::string::npos) << v.feedback;
    }
  }
}

TEST(CheckE2E, SecondIdenticalCheckIsACacheHit) {
  auto svc = make(test_config());
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  auto src = *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu");
  // A unique comment makes the first check a miss even with a warm cache.
  src += "\n// nonce " + std::to_string(os_random_u64()) + "\n";
  auto first = ev.evaluate({{"vector_add", src, false, false}});
  ASSERT_TRUE(first[0].ok()) << first[0].message();
  EXPECT_FALSE(first[0]->v.cached);
  EXPECT_GT(first[0]->v.compile_seconds, 0.0);
  auto second = ev.evaluate({{"vector_add", src, false, false}});
  ASSERT_TRUE(second[0].ok());
  EXPECT_TRUE(second[0]->v.cached);
  EXPECT_EQ(second[0]->v.compile_seconds, 0.0);
  EXPECT_EQ(second[0]->v.st, env::status::correct);
  EXPECT_GE(ev.compiler_stats().cache_hits, 2u); // the reference and the candidate
}

// The candidate build's precompiled shim headers (env/cpu_emu/CMakeLists.txt): both variants are
// valid for the host g++ and are the ones g++ takes for a rewritten candidate with and without
// barriers ("!" in -H output = PCH used), and a build with other emulation flags (no PCH) still
// gets the right verdict.
TEST(CheckE2E, PrecompiledShimHeadersAreUsedAndOtherFlagsStillBuild) {
  auto svc = make(test_config());
  ASSERT_TRUE(svc);
  const auto& tc = svc->tools;
  ASSERT_FALSE(tc.emu_pch_dir.empty()) << "no precompiled shim headers in the build tree";
  EXPECT_EQ(tc.emu_pch_flags, "-O2");
  auto dir = *make_temp_dir(temp_root(), "leap-pch-");
  const std::string plain = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"
                            "extern \"C\" void solution(float* x) { k<<<1, 32>>>(x); }\n";
  const std::string sync = "__global__ void k(float* x) { __shared__ float s[32];\n"
                           "  s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = s[31 - threadIdx.x]; }\n"
                           "extern \"C\" void solution(float* x) { k<<<1, 32>>>(x); }\n";
  for (auto& [name, src] : {std::pair<std::string, std::string>{"sync0", plain}, {"sync1", sync}}) {
    auto rw = emu::rewrite_cuda_source(src, "solution.cu");
    ASSERT_TRUE(rw.ok) << rw.error;
    ASSERT_TRUE(write_file_atomic(dir + "/" + name + ".cpp", rw.code).ok());
    env::process_spec ps;
    ps.argv = {tc.host_cxx, "-c", "-std=c++17", "-fstack-clash-protection", "-I" + tc.emu_pch_dir,
               "-I" + tc.emu_include_dir, "-O2", "-H", "-Winvalid-pch", "-o", name + ".o", name + ".cpp"};
    ps.cwd = dir;
    auto o = env::run_blocking(ps);
    ASSERT_TRUE(o.success()) << o.describe() << "\n" << o.err;
    EXPECT_NE(o.err.find("! " + tc.emu_pch_dir + "/cuda_runtime.h.gch/" + name + ".gch"), std::string::npos)
        << o.err.substr(0, 2000);
  }
  fs::remove_all(dir);
  auto cfg = test_config();
  cfg.compiler.emu_flags = {"-O1"};
  auto other = make(cfg);
  ASSERT_TRUE(other);
  auto ev_made = evaluator::create(*other);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  auto src = *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu");
  src += "\n// nonce " + std::to_string(os_random_u64()) + "\n";
  auto r = ev.evaluate({{"vector_add", src, false, false}});
  ASSERT_TRUE(r[0].ok()) << r[0].message();
  EXPECT_EQ(r[0]->v.st, env::status::correct) << r[0]->v.feedback;
}

TEST(CheckE2E, InvalidUtf8InTheSourceIsACompileErrorNotACrash) {
  auto svc = make(test_config());
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  // Model output can hold any bytes; nvcc echoes them in its diagnostics.
  std::string src = "#include <cuda_runtime.h>\nextern \"C\" void solution(const float* a, "
                    "const float* b, float* c, int n) { \xff\xfe\xc3 bad<<< }\n// nonce "
                    + std::to_string(os_random_u64()) + "\n";
  for (int round = 0; round < 2; ++round) {
    auto out = ev.evaluate({{"vector_add", src, false, false}});
    ASSERT_TRUE(out[0].ok()) << out[0].message();
    EXPECT_EQ(out[0]->v.st, env::status::compile_error);
    EXPECT_EQ(out[0]->v.cached, round == 1);
    EXPECT_FALSE(env::to_json(out[0]->v).empty());
  }
}

// A compiler stage killed by a signal it did not expect (as an operator or the OOM killer would)
// is an infrastructure fault: the compile is retried, the candidate still gets its true verdict,
// and nothing about the kill enters the build cache.
TEST(CheckE2E, KilledCompilerStageIsRetriedNeverJudgedNorCached) {
  auto cfg = test_config();
  cfg.compiler.workers = 1;
  auto svc = make(cfg);
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  // The reference first, so the kill hits the candidate's build.
  auto ref = ev.evaluate({{"vector_add", "", true, false}});
  ASSERT_TRUE(ref[0].ok()) << ref[0].message();
  auto src = *read_file(std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/grid_stride.cu");
  src += "\n// nonce " + std::to_string(os_random_u64()) + "\n";
  std::string killed;
  std::atomic<bool> stop{false};
  std::thread killer([&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!stop && killed.empty() && std::chrono::steady_clock::now() < deadline) {
      killed = test::kill_one(::getpid(), {"cicc", "ptxas", "cudafe++"});
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto out = ev.evaluate({{"vector_add", src, false, false}});
  stop = true;
  killer.join();
  ASSERT_FALSE(killed.empty()) << "no nvcc stage was seen to kill";
  ASSERT_TRUE(out[0].ok()) << out[0].message();
  EXPECT_EQ(out[0]->v.st, env::status::correct) << killed << " killed: " << out[0]->v.feedback;
  EXPECT_FALSE(out[0]->v.cached);
  auto st = ev.compiler_stats();
  EXPECT_EQ(st.retried, 1u) << killed;
  EXPECT_EQ(st.failed, 0u);
  EXPECT_EQ(st.worker_restarts, 0u);
  // The retried build is what the cache holds: the same source is now a hit with the verdict.
  auto again = ev.evaluate({{"vector_add", src, false, false}});
  ASSERT_TRUE(again[0].ok()) << again[0].message();
  EXPECT_EQ(again[0]->v.st, env::status::correct);
  EXPECT_TRUE(again[0]->v.cached);
}

// The same for a task's reference: a killed stage of the reference's build is retried; the
// reference is never recorded as "does not build" (which would drop every later attempt at the
// task), and the build the cache keeps is the good one.
TEST(CheckE2E, KilledStageOfTheReferenceBuildIsRetriedNeverCachedAsBroken) {
  auto cfg = test_config();
  cfg.compiler.workers = 1;
  auto cache = *make_temp_dir(temp_root(), "leap-ref-kill-");
  cfg.environment.cache_dir = cache; // the reference is not built there yet
  auto svc = make(cfg);
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  std::string killed;
  std::atomic<bool> stop{false};
  std::thread killer([&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!stop && killed.empty() && std::chrono::steady_clock::now() < deadline) {
      killed = test::kill_one(::getpid(), {"cicc", "ptxas", "cudafe++"});
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto out = ev.evaluate({{"vector_add", "", true, false}});
  stop = true;
  killer.join();
  ASSERT_FALSE(killed.empty()) << "no nvcc stage of the reference's build was seen to kill";
  ASSERT_TRUE(out[0].ok()) << killed << " killed: " << out[0].message();
  EXPECT_EQ(out[0]->v.st, env::status::correct) << out[0]->v.feedback;
  auto st = ev.compiler_stats();
  EXPECT_EQ(st.retried, 1u) << killed;
  EXPECT_EQ(st.failed, 0u);
  // A new process over the same cache finds the good build, not a broken reference.
  ev_made->reset();
  auto svc2 = make(cfg);
  ASSERT_TRUE(svc2);
  auto ev2 = evaluator::create(*svc2);
  ASSERT_TRUE(ev2) << ev2.message();
  auto again = (*ev2)->evaluate({{"vector_add", "", true, false}});
  ASSERT_TRUE(again[0].ok()) << again[0].message();
  EXPECT_EQ(again[0]->v.st, env::status::correct);
  EXPECT_TRUE(again[0]->v.cached);
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
}

TEST(CheckE2E, EveryBundledReferenceMatchesLibTorch) {
  auto svc = make(test_config());
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  auto rows = verify_tasks(*svc, ev, {});
  ASSERT_GE(rows.size(), 16u);
  for (auto& r : rows) {
    EXPECT_TRUE(r.ok) << r.task << ": " << r.problem;
    std::printf("[ reference ] %-18s build %.2f s%s, run %.2f s, max|ref-torch| %.3g\n",
                r.task.c_str(), r.compile_seconds, r.cached ? " (cached)" : "", r.run_seconds,
                r.max_abs_vs_oracle);
  }
}

TEST(CheckCli, JsonLastLineAndExitCodes) {
  auto leap_bin = std::string(LEAP_BINARY);
  auto run = [&](std::vector<std::string> args) {
    env::process_spec s;
    s.argv = {leap_bin, "--set", std::string("environment.cache_dir=") + LEAP_TEST_CACHE_DIR,
              "--set", "environment.backend=cpu"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.timeout_seconds = 300;
    s.output_limit = 1 << 20;
    return env::run_blocking(s);
  };
  auto o = run({"check", "--task", "vector_add", "--source",
                std::string(LEAP_SOURCE_DIR) + "/tests/env/candidates/vector_add/wrong_answer.cu", "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto lines = split_lines(std::string(trim(o.out)));
  auto j = nlohmann::json::parse(lines.back());
  for (auto k : {"status", "max_abs_error", "feedback", "compile_seconds", "run_seconds", "cached", "backend"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["status"], "wrong_answer");
  EXPECT_EQ(j["backend"], "cpu");
  o = run({"check", "--task", "no_such_task", "--reference"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("unknown task 'no_such_task'"), std::string::npos) << o.err;
  o = run({"check", "--task", "relu", "--reference", "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  j = nlohmann::json::parse(split_lines(std::string(trim(o.out))).back());
  EXPECT_EQ(j["status"], "correct");
  o = run({"--set", "executor.trials=zero", "check", "--task", "relu", "--reference"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("executor.trials"), std::string::npos) << o.err;
}

// Needs a CUDA device: label `gpu`, skipped cleanly without one.
TEST(CheckGpu, ReferencesAndOptimizedCandidatesOnTheDevice) {
  std::string why;
  if (!env::probe_cuda_device(why))
    GTEST_SKIP() << "no usable CUDA device: " << why;
  auto svc = make(test_config("cuda"));
  ASSERT_TRUE(svc);
  auto ev_made = evaluator::create(*svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;
  std::vector<check_item> items;
  std::vector<std::string> names;
  for (auto& c : bundled_candidates()) {
    bool want = c.expect.size() == 1 && c.expect[0] == "correct";
    if (!want)
      continue;
    items.push_back({c.task, c.source, false, false});
    names.push_back(c.path.substr(c.path.find("candidates/") + 11));
  }
  for (auto& [name, t] : *svc->tasks) {
    items.push_back({name, "", true, false});
    names.push_back(name + " (reference)");
  }
  auto out = ev.evaluate(items);
  for (std::size_t i = 0; i < items.size(); ++i) {
    ASSERT_TRUE(out[i].ok()) << names[i] << ": " << out[i].message();
    const auto& v = out[i]->v;
    EXPECT_EQ(v.st, env::status::correct) << names[i] << ": " << v.feedback;
    EXPECT_TRUE(v.timed) << names[i];
    std::printf("[ gpu ] %-36s %s cand %.4f ms ref %.4f ms speedup %.2fx\n", names[i].c_str(),
                env::to_string(v.st), v.candidate_ms, v.reference_ms, v.speedup);
  }
}

// A work directory below a directory the sandbox uid cannot traverse would make every
// candidate's exec fail (EACCES) and every attempt be dropped as a fault of leap: refused at
// start instead, naming the key and the directory (only meaningful when leap drops to the
// sandbox uid, i.e. runs as root).
TEST(CheckE2E, AWorkDirTheSandboxUidCannotReachIsRefusedAtStart) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "not root: candidates run under leap's own uid";
  auto root = *make_temp_dir(temp_root(), "leap-wd-"); // mkdtemp: mode 0700
  auto cfg = test_config();
  cfg.environment.work_dir = root + "/wd";
  auto s = make_services(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("environment.work_dir: " + root + " (mode 0700) is not traversable"),
            std::string::npos) << s.message();
  ASSERT_EQ(::chmod(root.c_str(), 0711), 0);
  auto ok = make_services(cfg);
  EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.message());
  std::filesystem::remove_all(root);
}
