// gpu_bundle: packs candidate kernels, their tasks' references, the generated glue and the job
// files into a folder that a GPU machine without leap's dependencies (no CAF, no LibTorch) can
// build with nvcc and run (scripts/gpu-device-check.sh), so the CUDA harness and its timing loop
// are checked on a real GPU with exactly what leap would compile and run: the candidate plus
// signature_check_suffix(), make_glue_source(), make_job_text() with the executor's defaults.
// A developer tool (single-threaded command line); not part of leap.
//
// Usage: gpu_bundle --out DIR [--tasks-dir tasks] [--seed N] FILE.cu...
// Each FILE names its task in a `// task: NAME` line, else by its folder's name; its expected
// verdict comes from `// expect: STATUS[|STATUS]` (absent: correct).
// Writes DIR/tasks/<task>/{reference.cu, glue.cu, job.txt, layout.json} and
// DIR/cases/<id>/solution.cu, and DIR/cases.tsv (id, task, expected, source path).
#include "common/fs.hpp"
#include "env/compare.hpp"
#include "env/glue.hpp"
#include "env/task.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using leap::env::task_spec;

namespace {

// The executor's defaults (env/executor.hpp) on the CUDA backend.
constexpr int k_trials = 2;
constexpr int k_warmup = 3;
constexpr int k_timing_runs = 10;
constexpr long long k_l2_flush_mb = 128;

std::string header_value(const std::string& src, const std::string& key) {
  std::smatch m;
  const std::regex re("//\\s*" + key + ":\\s*([^\\n]+)");
  if (std::regex_search(src, m, re)) {
    std::string v = m[1].str();
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
    return v;
  }
  return {};
}

bool write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

// Output element counts per size set, in the order the harness writes them.
nlohmann::json layout_of(const task_spec& t) {
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& s : t.sizes) {
    nlohmann::json outs = nlohmann::json::array();
    for (std::size_t i = 0; i < t.args.size(); ++i)
      if (t.args[i].p.is_pointer && t.is_output(i))
        outs.push_back({{"name", t.args[i].p.name}, {"n", t.elements(i, s)},
                        {"int", t.args[i].p.kind == leap::env::scalar_kind::i32}});
    sets.push_back(outs);
  }
  return {{"task", t.name}, {"atol", t.atol}, {"rtol", t.rtol}, {"trials", k_trials},
          {"timed", k_timing_runs}, {"size_sets", sets}};
}

} // namespace

int main(int argc, char** argv) {
  std::string out, tasks_dir = "tasks";
  unsigned long long seed = 12345;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--tasks-dir" && i + 1 < argc) tasks_dir = argv[++i];
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "gpu_bundle: unknown option %s\n", a.c_str());
      return 2;
    } else files.push_back(a);
  }
  if (out.empty() || files.empty()) {
    std::fprintf(stderr, "usage: gpu_bundle --out DIR [--tasks-dir tasks] [--seed N] FILE.cu...\n");
    return 2;
  }
  std::map<std::string, task_spec> tasks;
  std::ostringstream index;
  std::map<std::string, int> ids;
  for (const auto& file : files) {
    auto src = leap::read_file(file);
    if (!src) {
      std::fprintf(stderr, "gpu_bundle: %s\n", src.message().c_str());
      return 1;
    }
    std::string task_name = header_value(*src, "task");
    if (task_name.empty()) task_name = fs::path(file).parent_path().filename().string();
    std::string expect = header_value(*src, "expect");
    if (expect.empty()) expect = "correct";
    if (!tasks.count(task_name)) {
      auto t = leap::env::find_task(tasks_dir, task_name);
      if (!t) {
        std::fprintf(stderr, "gpu_bundle: %s: %s\n", file.c_str(), t.message().c_str());
        return 1;
      }
      const fs::path td = fs::path(out) / "tasks" / task_name;
      const std::string job = leap::env::make_job_text(*t, seed, k_trials, true, false, k_warmup,
                                                       k_timing_runs, k_l2_flush_mb, true);
      if (!write(td / "reference.cu", t->reference_source + leap::env::signature_check_suffix(*t)) ||
          !write(td / "glue.cu", leap::env::make_glue_source(*t)) || !write(td / "job.txt", job) ||
          !write(td / "layout.json", layout_of(*t).dump(1))) {
        std::fprintf(stderr, "gpu_bundle: cannot write under %s\n", td.string().c_str());
        return 1;
      }
      tasks.emplace(task_name, std::move(*t));
    }
    std::string id = task_name + "." + fs::path(file).stem().string();
    if (ids[id]++ > 0) id += "." + std::to_string(ids[id]);
    if (!write(fs::path(out) / "cases" / id / "solution.cu",
               *src + leap::env::signature_check_suffix(tasks.at(task_name)))) {
      std::fprintf(stderr, "gpu_bundle: cannot write case %s\n", id.c_str());
      return 1;
    }
    index << id << '\t' << task_name << '\t' << expect << '\t' << file << '\n';
  }
  if (!write(fs::path(out) / "cases.tsv", index.str())) return 1;
  std::printf("gpu_bundle: %zu case(s) of %zu task(s) in %s\n", files.size(), tasks.size(), out.c_str());
  return 0;
}
