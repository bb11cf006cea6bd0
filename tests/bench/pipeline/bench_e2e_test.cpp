// `leap bench` end to end through the CLI: a small latency-model scenario run in its four modes
// (checks the JSON, CSV and SVG outputs, that async and sync did the same work while DCP off did
// more, and that only the fourth mode cancels a pruned group's turn-1 stragglers), a sweep,
// scenario errors, and the real stages: bundled candidates through real nvcc and the CPU
// backend, the real (tiny) policy, and the real stages on a local `leap node` process.
#include "common/fs.hpp"
#include "common/spawn.hpp"
#include "common/strings.hpp"
#include "tests/runtime/commands/tiny_warm_start.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace leap;

namespace {

struct cli_result {
  int code = -1;
  std::string out, err;
};

cli_result run_leap(const std::string& args) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-cli-");
  std::string cmd = "timeout -k 10 600 " + std::string(LEAP_BINARY) + " " + args + " >" + dir
                    + "/out 2>" + dir + "/err";
  int st = std::system(cmd.c_str());
  cli_result r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (auto t = read_file(dir + "/out"))
    r.out = *t;
  if (auto t = read_file(dir + "/err"))
    r.err = *t;
  fs::remove_all(dir);
  return r;
}

nlohmann::json last_json_line(const std::string& out) {
  auto lines = split_lines(out);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim(*it).empty())
      return nlohmann::json::parse(*it);
  return {};
}

std::string write_scenario(const std::string& dir, const std::string& name, const std::string& text) {
  auto p = dir + "/" + name + ".toml";
  std::ofstream(p) << text;
  return p;
}

const char* small_scenario = R"([train]
steps = 3
batch_groups = 2
group_size = 4
max_turns = 3
generators = 2
seed = 3

[compiler]
workers = 3

[executor]
workers = 2

[bench]
time_scale = 0.02
seed = 5

[bench.generate]
model = "fixed"
mean_seconds = 0.2

[bench.compile]
model = "lognormal"
mean_seconds = 0.6
sigma = 0.5

[bench.execute]
model = "fixed"
mean_seconds = 0.2

[bench.learner]
seconds = 0.5

[[bench.tasks]]
name = "easy"
count = 2
success = [0.8, 0.5, 0.5]

[[bench.tasks]]
name = "mid"
count = 2
success = [0.4, 0.3, 0.3]

[[bench.tasks]]
name = "hopeless"
count = 1
success = [0.0, 0.0, 0.0]
)";

} // namespace

TEST(BenchCli, FourModesOfALatencyModelScenario) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-");
  auto sc = write_scenario(dir, "small", small_scenario);
  auto r = run_leap("bench --config " + sc + " --out " + dir + "/out --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = last_json_line(r.out);
  for (auto* k : {"async_attempts_per_second", "sync_attempts_per_second", "speedup_vs_sync",
                  "analytic_bound_attempts_per_second", "fraction_of_bound",
                  "dcp_multiturn_compile_reduction", "turn1_mode",
                  "turn1_attempts_per_second_ratio", "turn1_compiles_cancelled"})
    EXPECT_TRUE(j.contains(k)) << k;
  // The scenario keeps a pruned group's turn-1 stragglers (the default): the fourth mode cancels
  // them, and only it cancels anything.
  EXPECT_EQ(j["turn1_mode"], "async_cancel_turn1");
  // min(2 / 0.2, 3 / 0.6, 2 / 0.2, learner) = 5 attempts/s.
  EXPECT_DOUBLE_EQ(j["analytic_bound_attempts_per_second"].get<double>(), 5.0);
  auto& m = j["modes"];
  for (auto* mode : {"async", "sync", "async_no_dcp", "async_cancel_turn1"}) {
    ASSERT_TRUE(m.contains(mode)) << mode;
    EXPECT_EQ(m[mode]["steps"].get<int>(), 3) << mode;
    EXPECT_EQ(m[mode]["groups"].get<int>(), 6) << mode;
    EXPECT_GT(m[mode]["attempts_per_second"].get<double>(), 0.0) << mode;
    for (auto* stage : {"generate", "compile", "execute"}) {
      double u = m[mode]["stages"][stage]["utilisation"].get<double>();
      EXPECT_GT(u, 0.0) << mode << " " << stage;
      EXPECT_LE(u, 1.0 + 1e-9) << mode << " " << stage;
    }
  }
  for (auto* mode : {"async", "sync", "async_no_dcp"}) {
    EXPECT_EQ(m[mode]["compiles_cancelled"].get<int>(), 0) << mode;
    EXPECT_EQ(m[mode]["cancelled_attempts"].get<int>(), 0) << mode;
  }
  // The same draws: async and sync expand the same groups and do the same later-turn work; DCP
  // off debugs every failure, so it compiles at least as much on turns >= 2.
  EXPECT_EQ(m["async"]["attempts"], m["sync"]["attempts"]);
  EXPECT_EQ(m["async"]["compiles_later_turns"], m["sync"]["compiles_later_turns"]);
  EXPECT_GE(m["async_no_dcp"]["compiles_later_turns"].get<int>(),
            m["async"]["compiles_later_turns"].get<int>());
  EXPECT_GE(m["async_no_dcp"]["activated_groups"].get<double>(),
            m["async"]["activated_groups"].get<double>());
  // Table, CSV and one timeline per mode.
  EXPECT_NE(r.out.find("analytic bound"), std::string::npos);
  auto csv = read_file(dir + "/out/small.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(split_lines(*csv).size(), 5u);
  // Markdown beside the CSV (what docs/bench/ holds): the stamp with this very command, then a
  // row per mode.
  auto md = read_file(dir + "/out/small.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("- **Measured:** "), std::string::npos) << *md;
  EXPECT_NE(md->find("- **Machine:** "), std::string::npos) << *md;
  EXPECT_NE(md->find(" bench --config " + sc + " --out " + dir + "/out --json`"), std::string::npos) << *md;
  for (auto* mode : {"async", "sync", "async_no_dcp", "async_cancel_turn1"})
    EXPECT_NE(md->find(std::string("\n| ") + mode + " | "), std::string::npos) << mode;
  for (auto* mode : {"async", "sync", "async_no_dcp", "async_cancel_turn1"}) {
    auto svg = read_file(dir + "/out/small-" + std::string(mode) + "-timeline.svg");
    ASSERT_TRUE(svg.ok()) << mode;
    EXPECT_NE(svg->find("<svg"), std::string::npos);
    EXPECT_NE(svg->find(">compile 2<"), std::string::npos) << "a lane per compiler";
  }
  fs::remove_all(dir);
}

TEST(BenchCli, SweepRunsTheAsyncModeOverTheGrid) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-");
  auto sc = write_scenario(dir, "small", small_scenario);
  auto r = run_leap("bench --config " + sc + " --out " + dir + " --set train.steps=2 --json "
                    "--sweep compilers=1,4 compile_mean=0.6");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = last_json_line(r.out)["sweep"];
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["axes"]["compilers"].get<double>(), 1.0);
  // One compiler: 1 / 0.6 attempts/s, the bottleneck; four: 6.67/s, generation (10/s) is not.
  EXPECT_NEAR(j[0]["bound"]["attempts_per_second"].get<double>(), 1.0 / 0.6, 1e-9);
  EXPECT_EQ(j[0]["bound"]["bottleneck"].get<std::string>(), "compile");
  EXPECT_GT(j[1]["bound"]["attempts_per_second"].get<double>(),
            j[0]["bound"]["attempts_per_second"].get<double>());
  EXPECT_TRUE(fs::exists(dir + "/small-sweep.csv"));
  auto md = read_file(dir + "/small-sweep.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("| compilers | compile_mean | attempts/s |"), std::string::npos) << *md;
  EXPECT_NE(r.out.find("bottleneck"), std::string::npos);
  fs::remove_all(dir);
}

TEST(BenchCli, ClusterScenarioRunsOnNodeProcessesWithinItsBound) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-");
  std::string text = small_scenario;
  auto at = text.find("seed = 5\n");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 9, "nodes = [0, 1, 2]\noverhead_jobs = 20\n");
  auto sc = write_scenario(dir, "cluster", text);
  auto r = run_leap("bench --config " + sc + " --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // No attempt was lost on the way to the nodes, and every size stays within its bound.
  EXPECT_EQ(r.err.find("dropped"), std::string::npos) << r.err;
  auto csv = read_file(dir + "/cluster.csv");
  ASSERT_TRUE(csv.ok());
  auto md = read_file(dir + "/cluster.md");
  ASSERT_TRUE(md.ok());
  for (auto* row : {"\n| in-process | ", "\n| 1 | ", "\n| 2 | ", "\n| plain TCP | "})
    EXPECT_NE(md->find(row), std::string::npos) << row << "\n" << *md;
  auto rows = split_lines(*csv);
  ASSERT_GE(rows.size(), 4u) << *csv; // header + in-process, 1 and 2 nodes
  for (std::size_t i = 1; i < 4; ++i) {
    // nodes,attempts_per_second,bound_attempts_per_second,of_bound,...
    std::vector<std::string> cols;
    std::string cell;
    for (char c : rows[i] + ",") {
      if (c == ',') {
        cols.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    ASSERT_GE(cols.size(), 4u) << rows[i];
    double of_bound = std::stod(cols[3]);
    EXPECT_GT(of_bound, 0.3) << rows[i];
    EXPECT_LE(of_bound, 1.05) << rows[i];
  }
  for (auto transport : {"in-process", "plain TCP", "TLS"})
    EXPECT_NE(r.out.find(std::string("  ") + transport), std::string::npos) << r.out << r.err;
  fs::remove_all(dir);
}

TEST(BenchCli, ScenarioErrorsExitTwoWithFileLineAndKey) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-");
  std::string text = small_scenario;
  text.replace(text.find("mean_seconds = 0.6"), 18, "mean_seconds = \"slow\"");
  auto sc = write_scenario(dir, "bad", text);
  auto r = run_leap("bench --config " + sc);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(sc + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[bench.compile] mean_seconds: expected a number, got a string (\"slow\")"),
            std::string::npos) << r.err;
  auto r2 = run_leap("bench --config " + write_scenario(dir, "ok", small_scenario)
                     + " --sweep colour=1,2");
  EXPECT_EQ(r2.code, 2);
  EXPECT_NE(r2.err.find("unknown axis 'colour'"), std::string::npos) << r2.err;
  fs::remove_all(dir);
}

// Real stages: the latency-model generator's attempts are replaced by bundled corpus candidates,
// built by real nvcc + the CPU emulation and run on the CPU backend; then the real tiny policy
// samples (its own code, compiled as written).
TEST(BenchCli, RealCompilerAndBackendAndPolicy) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-");
  std::string common = R"([environment]
backend = "cpu"

[train]
steps = 1
batch_groups = 1
group_size = 2
max_turns = 2
tasks = ["vector_add", "relu"]
max_new_tokens = 160

[compiler]
workers = 2

[executor]
workers = 2
timeout_seconds = 10

[bench.compile]
model = "nvcc"

[bench.execute]
model = "backend"

[bench.learner]
seconds = 0.1
)";
  auto sc = write_scenario(dir, "real", common + R"(
[bench]
[bench.generate]
model = "fixed"
mean_seconds = 0.05
)");
  auto r = run_leap("bench --config " + sc + " --out " + dir + "/o1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = last_json_line(r.out);
  for (auto* mode : {"async", "sync", "async_no_dcp"}) {
    auto& m = j["modes"][mode];
    EXPECT_EQ(m["steps"].get<int>(), 1) << mode;
    EXPECT_GE(m["attempts"].get<int>(), 2) << mode;
    // Each mode starts from a cold build cache: candidates were really compiled.
    EXPECT_GE(m["stages"]["compile"]["jobs"].get<int>(), 2) << mode;
    EXPECT_GT(m["stages"]["compile"]["busy_seconds"].get<double>(), 0.1) << mode;
  }
  EXPECT_TRUE(j["bound"]["stages"]["compile"]["measured"].get<bool>());

  auto warm = test::warm_start();
  ASSERT_FALSE(warm.empty());
  auto sc2 = write_scenario(dir, "policy", common + R"(
[bench]
[bench.generate]
model = "policy"
checkpoint = ")" + warm + R"("
)");
  auto r2 = run_leap("bench --config " + sc2 + " --out " + dir + "/o2 --json");
  ASSERT_EQ(r2.code, 0) << r2.err;
  auto j2 = last_json_line(r2.out);
  EXPECT_TRUE(j2["bound"]["stages"]["generate"]["measured"].get<bool>());
  EXPECT_GE(j2["modes"]["async"]["attempts"].get<int>(), 2);
  fs::remove_all(dir);
}

namespace {

// The pids of processes whose command line mentions `text` (a test's own directory: the node
// processes it started and their compilers name it), this test process excepted.
std::vector<int> processes_naming(const std::string& text) {
  std::vector<int> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == ::getpid())
      continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(text) != std::string::npos)
      out.push_back(std::stoi(name));
  }
  return out;
}

} // namespace

// The real stages through one `leap node` process that `leap bench` starts on loopback: the
// bundled candidates are compiled (nvcc + the CPU emulation) and run on the node, none in the
// head (the node's own job counts, the head's empty traces), and the node is gone afterwards.
TEST(BenchCli, RealStagesRunOnALocalNodeProcess) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-node-");
  auto sc = write_scenario(dir, "real_node", R"([environment]
backend = "cpu"

[train]
steps = 2
batch_groups = 1
group_size = 2
max_turns = 2
tasks = ["vector_add", "relu"]

[compiler]
workers = 2

[executor]
workers = 2
timeout_seconds = 10
seed = 1

[bench]
nodes = [1]

[bench.generate]
model = "fixed"
mean_seconds = 0.05

[bench.compile]
model = "nvcc"

[bench.execute]
model = "backend"

[bench.learner]
seconds = 0.1
)");
  // Bounded: the bench waits at most 120 s for a node to start and each job has its timeout;
  // `timeout` ends the whole run after 10 minutes all the same.
  auto r = run_leap("bench --config " + sc + " --out " + dir + "/o --json");
  auto left = processes_naming(dir);
  for (int pid : left)
    ::kill(pid, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) outlived leap bench";
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = last_json_line(r.out);
  ASSERT_EQ(j["rows"].size(), 1u) << r.out;
  auto& row = j["rows"][0];
  EXPECT_EQ(row["nodes_started"].get<int>(), 1);
  EXPECT_EQ(row["steps"].get<int>(), 2);
  ASSERT_EQ(row["nodes"].size(), 1u) << row.dump();
  auto& node = row["nodes"][0];
  EXPECT_EQ(node["node"].get<std::string>().rfind("127.0.0.1:", 0), 0u) << node.dump();
  EXPECT_FALSE(node.contains("problem")) << node.dump();
  // Every candidate and reference build, and every run, was the node's.
  EXPECT_GE(node["compiles"].get<int>(), row["compiles"].get<int>()) << row.dump();
  EXPECT_GE(node["compiles"].get<int>(), 2) << node.dump();
  EXPECT_GE(node["executes"].get<int>(), 1) << node.dump();
  EXPECT_GT(node["cpu_seconds"].get<double>(), 0.0) << node.dump();
  for (auto* stage : {"compile", "execute"}) {
    EXPECT_TRUE(row["stages"][stage]["on_nodes"].get<bool>()) << stage;
    EXPECT_EQ(row["stages"][stage]["jobs"].get<int>(), 0) << stage << ": ran in the head";
  }
  auto md = read_file(dir + "/o/real_node.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("\n| 1 node | "), std::string::npos) << *md;
  EXPECT_NE(md->find("- 1 node: 127.0.0.1:"), std::string::npos) << *md;
  fs::remove_all(dir);
}

// SIGTERM to `leap bench` while its node processes run: it stops them before it ends, so none
// is left behind (a latency-model cluster scenario long enough to be interrupted).
TEST(BenchCli, NodeProcessesStopWhenTheBenchIsTerminated) {
  auto dir = *make_temp_dir(temp_root(), "leap-bench-term-");
  std::string text = small_scenario;
  text.replace(text.find("steps = 3"), 9, "steps = 400");
  text.insert(text.find("seed = 5\n") + 9, "nodes = [1]\n");
  auto sc = write_scenario(dir, "long", text);
  spawn_spec spec;
  spec.argv = {LEAP_BINARY, "bench", "--config", sc, "--out", dir + "/o"};
  spec.stdout_path = dir + "/out";
  spec.stderr_path = dir + "/err";
  auto pid = spawn_child(spec);
  ASSERT_TRUE(pid.ok()) << pid.message();
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) { // 60 s at most
    auto out = read_file(dir + "/o/node-1-0.out");
    ready = out.ok() && out->find("ready on") != std::string::npos;
    if (!ready)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!ready) {
    auto err = read_file(dir + "/err");
    ADD_FAILURE() << "no node became ready: " << (err ? *err : err.message());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the run is under way
  ::kill(*pid, SIGTERM);
  auto code = wait_child(*pid);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGTERM);
  std::vector<int> left;
  for (int i = 0; i < 300; ++i) { // a node drains, then exits: 30 s at most
    left = processes_naming(dir);
    if (left.empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (int p : left)
    ::kill(p, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) outlived leap bench";
  fs::remove_all(dir);
}
