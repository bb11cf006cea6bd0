// Generated tasks through the real pipeline (`leap tasks verify`'s path): nvcc and the g++ build
// against the CUDA-on-CPU emulation, the reference run, and the comparison with the generated
// families' LibTorch oracle. A sample: one train task of every family, one held-out instance and
// one held-out composition (the whole generated suite is the long run: leap --set
// environment.generated_tasks=N tasks verify), one task of every layout and stencil variant, and
// notation forms of six families.
// Also: the suite hash covers the generated tasks, and a generated task resolves by name in
// `leap check` and `leap tasks show`.
#include "common/strings.hpp"
#include "env/process.hpp"
#include "env/taskgen/generator.hpp"
#include "runtime/workflows/verify_tasks.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <map>

using namespace leap;
using namespace leap::runtime;

namespace {

config::leap_config test_config() {
  auto cfg = config::defaults();
  EXPECT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 10;
  cfg.executor.trials = 2;
  cfg.executor.memory_limit_mb = 2048;
  return cfg;
}

// Every row verified (built, run and equal to LibTorch), each printed.
void expect_all_verified(const std::vector<verify_row>& rows) {
  for (auto& r : rows) {
    EXPECT_TRUE(r.ok) << r.task << ": " << r.problem;
    std::printf("[ generated ] %-18s build %.2f s%s, run %.2f s, max|ref-torch| %.3g\n", r.task.c_str(),
                r.compile_seconds, r.cached ? " (cached)" : "", r.run_seconds, r.max_abs_vs_oracle);
  }
}

} // namespace

TEST(GenVerifyE2E, SampleOfGeneratedReferencesMatchesLibTorch) {
  auto cfg = test_config();
  cfg.environment.generated_tasks = 9;      // one per family (round-robin)
  cfg.environment.generated_eval_tasks = 1; // one held-out instance, one held-out composition
  auto made = make_services(cfg);
  ASSERT_TRUE(made.ok()) << made.message();
  auto& svc = **made;
  std::vector<std::string> names;
  for (auto& [name, t] : *svc.tasks)
    if (name.rfind("gen_", 0) == 0)
      names.push_back(name);
  ASSERT_EQ(names.size(), 11u);
  EXPECT_TRUE(svc.tasks->count("gen_layout_t00000"));
  EXPECT_TRUE(svc.tasks->count("gen_stencil_t00000"));
  auto ev = evaluator::create(svc);
  ASSERT_TRUE(ev.ok()) << ev.message();
  auto t0 = std::chrono::steady_clock::now();
  auto rows = verify_tasks(svc, **ev, names);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rows.size(), names.size());
  expect_all_verified(rows);
  std::printf("[ generated ] %zu tasks verified in %.1f s\n", rows.size(), secs);
}

// The layout and stencil families through the real pipeline, one task of every layout
// variant (transpose, permute, row and column gathers with int32 indices, slice, concat) and of
// every stencil border rule plus a 2-D pooling, each agreeing with LibTorch and failing the
// degenerate answers (all zeros, the poison, a copy of an input).
TEST(GenVerifyE2E, LayoutAndStencilVariantsMatchLibTorch) {
  auto cfg = test_config();
  cfg.environment.generated_tasks = 180; // 20 per family: every variant appears
  auto made = make_services(cfg);
  ASSERT_TRUE(made.ok()) << made.message();
  auto& svc = **made;
  std::map<std::string, std::string> pick; // variant -> first task
  for (auto& [name, t] : *svc.tasks) {
    auto op = taskgen::op_of_reference(t.reference_source);
    if (!op || (op->fam != taskgen::family::layout && op->fam != taskgen::family::stencil))
      continue;
    std::string key = op->fam == taskgen::family::layout ? op->variant
                      : op->variant == "pool2d"            ? "pool2d"
                                                           : "border " + op->border;
    pick.emplace(key, name);
  }
  for (auto key : {"transpose", "permute", "gather_rows", "gather_cols", "slice", "concat", "pool2d",
                   "border zero", "border clamp", "border mirror", "border valid"})
    EXPECT_TRUE(pick.count(key)) << key;
  std::vector<std::string> names;
  for (auto& [key, name] : pick)
    names.push_back(name);
  auto ev = evaluator::create(svc);
  ASSERT_TRUE(ev.ok()) << ev.message();
  auto rows = verify_tasks(svc, **ev, names);
  ASSERT_EQ(rows.size(), names.size());
  expect_all_verified(rows);
}

// Notation forms (gen_<family>_n<n>) through the real pipeline: buffers under other names,
// pooling windows passed as the ints k and s, each reference agreeing with LibTorch.
TEST(GenVerifyE2E, NotationFormsMatchLibTorch) {
  auto cfg = test_config();
  auto made = make_services(cfg);
  ASSERT_TRUE(made.ok()) << made.message();
  auto& svc = **made;
  std::vector<std::string> names;
  for (auto [f, count] : {std::pair{taskgen::family::red, 3}, {taskgen::family::scan, 2},
                          {taskgen::family::softmax, 2}, {taskgen::family::pool, 4},
                          {taskgen::family::matmul, 2}, {taskgen::family::ew, 3}})
    for (int i = 0; i < count; ++i)
      names.push_back(taskgen::notation_name(f, i));
  auto tasks = taskgen::generate_tasks(cfg.environment.generated_seed, names);
  ASSERT_TRUE(tasks.ok()) << tasks.message();
  auto m = std::make_shared<std::map<std::string, env::task_spec>>(*svc.tasks);
  int renamed = 0, pool_params = 0;
  for (auto& t : *tasks) {
    renamed += !t.op.names.empty();
    pool_params += t.spec.signature.find("int k, int s)") != std::string::npos;
    m->emplace(t.name, t.spec);
  }
  svc.tasks = m;
  EXPECT_GT(renamed, 5);
  EXPECT_GT(pool_params, 0);
  auto ev = evaluator::create(svc);
  ASSERT_TRUE(ev.ok()) << ev.message();
  auto rows = verify_tasks(svc, **ev, names);
  ASSERT_EQ(rows.size(), names.size());
  expect_all_verified(rows);
}

TEST(GenVerifyE2E, SuiteHashCoversGeneratedTasks) {
  auto cfg = test_config();
  auto plain = make_services(cfg);
  ASSERT_TRUE(plain.ok()) << plain.message();
  cfg.environment.generated_tasks = 14;
  auto with = make_services(cfg);
  ASSERT_TRUE(with.ok()) << with.message();
  EXPECT_EQ((*with)->tasks->size(), (*plain)->tasks->size() + 14);
  EXPECT_NE(env::task_suite_hash(*(*with)->tasks), env::task_suite_hash(*(*plain)->tasks));
  cfg.environment.generated_seed = 2;
  auto other = make_services(cfg);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(env::task_suite_hash(*(*with)->tasks), env::task_suite_hash(*(*other)->tasks));
}

TEST(GenVerifyE2E, CliResolvesGeneratedTasksByName) {
  auto run = [](std::vector<std::string> args) {
    env::process_spec s;
    s.argv = {LEAP_BINARY, "--set", std::string("environment.cache_dir=") + LEAP_TEST_CACHE_DIR,
              "--set", "environment.backend=cpu"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.timeout_seconds = 300;
    s.output_limit = 1 << 20;
    return env::run_blocking(s);
  };
  auto show = run({"tasks", "show", "--task", "gen_red_t00000", "--reference"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("name = \"gen_red_t00000\""), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("leap-taskgen-op: fam=red"), std::string::npos) << show.out;
  auto check = run({"check", "--task", "gen_red_t00000", "--reference", "--json"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  auto j = nlohmann::json::parse(split_lines(std::string(trim(check.out))).back());
  EXPECT_EQ(j["status"], "correct");
  auto missing = run({"tasks", "show", "--task", "gen_softmax_t09999"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}
