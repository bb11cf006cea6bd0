// The compiler's per-stage wall seconds (env/compile_stages.hpp): nvcc's --time table parsed
// into stages (no processes), and with the real nvcc and g++ a cold build of a bundled reference
// reports every stage of the CPU backend with seconds > 0, adding up to its seconds, while a
// cache hit of the same build reports none.
#include "common/fs.hpp"
#include "env/compile_stages.hpp"
#include "env/compiler.hpp"
#include "env/process.hpp"
#include "env/task.hpp"
#include "env/toolchain.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>

namespace fs = std::filesystem;
using namespace leap;
using env::compile_stage;

namespace {

double at(const env::compile_stage_seconds& s, compile_stage st) {
  return s.at(static_cast<std::size_t>(st));
}

} // namespace

TEST(CompileStages, NvccTimeTableSplitsDeviceAndHostWork) {
  // nvcc 13.0 `-c --time` (trimmed paths); -cubin has no cudafe++ and no host compile.
  auto split = env::parse_nvcc_time_table(
    "source file name , phase name , phase input files , phase output file , arch , tool , metric , unit\n"
    "a.cu , gcc (preprocessing 4) , a.cu  , a.cpp4.ii ,  , nvcc , 100.0 , ms\n"
    "a.cu , cudafe++ , a.cpp4.ii  , a.cudafe1.cpp ,  , nvcc , 300.0 , ms\n"
    "a.cu , cicc , a.cpp1.ii  , a.ptx , compute_90 , nvcc , 250.0 , ms\n"
    "a.cu , ptxas , a.ptx  , a.cubin , sm_90 , nvcc , 60.0 , ms\n"
    "a.cu , fatbinary , a.cubin  , a.fatbin ,  , nvcc , 2.0 , ms\n"
    "a.cu , gcc (compiling) , a.cudafe1.cpp  , a.o ,  , nvcc , 280.0 , ms\n"
    " , nvcc (driver) ,  , a.o ,  , nvcc , 0.5 , ms\n");
  EXPECT_TRUE(split.any);
  EXPECT_NEAR(split.device_compile, 0.062, 1e-9);
  EXPECT_NEAR(split.host_build, 0.280, 1e-9);
  auto none = env::parse_nvcc_time_table("not a table\n, , ,\n");
  EXPECT_FALSE(none.any);
  EXPECT_EQ(none.device_compile, 0.0);
}

TEST(CompileStages, DescribeNamesStagesOrSaysWhyNone) {
  EXPECT_EQ(env::describe_stages({}, true), "none (cache hit)");
  EXPECT_EQ(env::describe_stages({}, false), "none");
  env::compile_stage_seconds s(env::compile_stage_count, 0.0);
  s[static_cast<std::size_t>(compile_stage::front_end)] = 0.314;
  s[static_cast<std::size_t>(compile_stage::link)] = 0.03;
  EXPECT_EQ(env::describe_stages(s, false), "front end 0.31 s, link 0.03 s");
}

TEST(CompileStages, ColdReferenceBuildReportsEveryStageAndACacheHitNone) {
  auto tc = env::discover_toolchain({});
  if (!tc)
    GTEST_SKIP() << tc.message();
  auto task = env::find_task(tc->tasks_dir(), "softmax_rows");
  ASSERT_TRUE(task) << task.message();
  auto source = read_file(tc->tasks_dir() + "/softmax_rows/reference.cu");
  ASSERT_TRUE(source) << source.message();
  auto dir = make_temp_dir(temp_root(), "leap-stages-test-");
  ASSERT_TRUE(dir) << dir.message();
  env::compiler_options opts;
  opts.cache_dir = *dir + "/cache"; // fresh: the first build is cold
  opts.work_dir = *dir;
  env::process_runner runner;
  env::compiler comp(*tc, opts, runner);
  auto build = [&] {
    std::promise<env::build_result> p;
    comp.start(*task, {*source, env::backend::cpu, true},
               [&p](env::build_result r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  };
  auto cold = build();
  ASSERT_EQ(cold.st, env::build_status::ok) << cold.stage << ": " << cold.diagnostics;
  EXPECT_FALSE(cold.cached);
  ASSERT_EQ(cold.stages.size(), env::compile_stage_count);
  double sum = 0;
  for (std::size_t i = 0; i < cold.stages.size(); ++i) {
    auto st = static_cast<compile_stage>(i);
    sum += cold.stages[i];
    if (st != compile_stage::other) { // other (setup, cache publish) may round to nothing
      EXPECT_GT(cold.stages[i], 0.0) << env::to_string(st);
    }
    EXPECT_GE(cold.stages[i], 0.0) << env::to_string(st);
  }
  EXPECT_GT(at(cold.stages, compile_stage::device_compile), 0.0) << "no ptxas row in nvcc --time";
  EXPECT_NEAR(sum, cold.seconds, 0.01 * cold.seconds + 1e-3);
  auto hit = build();
  ASSERT_EQ(hit.st, env::build_status::ok) << hit.diagnostics;
  EXPECT_TRUE(hit.cached);
  EXPECT_TRUE(hit.stages.empty());
  EXPECT_EQ(env::describe_stages(hit.stages, hit.cached), "none (cache hit)");
  runner.shutdown();
  std::error_code ec;
  fs::remove_all(*dir, ec);
}
