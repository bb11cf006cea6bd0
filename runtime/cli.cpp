#include "runtime/cli.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/feedback.hpp"
#include "leap/build_info.hpp"
#include "policy/task_oracles.hpp"
#include "runtime/bench.hpp"
#include "runtime/config.hpp"
#include "runtime/corpus_build.hpp"
#include "runtime/eval.hpp"
#include "runtime/pretrain.hpp"
#include "runtime/train.hpp"
#include "runtime/evaluator.hpp"
#include "runtime/services.hpp"
#include "runtime/verify.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace leap::runtime {

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

const char* usage_text = R"(leap - multi-turn RL for CUDA kernels (LEAP), verification environment

usage: leap [--config FILE] [--set section.key=value ...] COMMAND [options]

commands:
  tasks list [--json]                      list the task suite
  tasks verify [--task NAME ...] [--json]  build and run every reference; compare with LibTorch
  check --task NAME --source FILE [--backend auto|cpu|cuda] [--json]
                                           evaluate one candidate and print its verdict
  check --task NAME --reference [--json]   evaluate the task's own reference
  corpus --out DIR [--seed N] [--task NAME ...] [--json]
                                           generate the kernel corpus, label every variant
                                           through the environment, write corpus.jsonl
  pretrain --out DIR [--json]              SFT warm start on the labelled corpus; writes a checkpoint
  eval --checkpoint DIR [--json]           sample G attempts per task, up to eval.max_turns with
                                           feedback; pass@1, Acc@1/2/3, per-task pass rates
  train --out DIR [--resume]               LEAP RL training (warm start from pretrain, made if
                                           missing); metrics.jsonl, checkpoints; Ctrl-C saves
  bench --config configs/bench/S.toml [--json] [--out DIR] [--sweep AXIS=v1,v2 ...]
                                           pipeline throughput: async vs sync vs DCP off on the
                                           real actors, with latency models or real stages;
                                           table, CSV, SVG timelines; --sweep: async over a grid
  config show                              print the effective configuration as TOML
  config defaults                          print every key with its default and meaning
  config docs                              print docs/config.md
  doctor                                   report tools, backend and protections
  version                                  print the version

global options:
  --config FILE          TOML configuration (unknown keys are errors; see docs/config.md)
  --set section.key=v    override one key (repeatable), e.g. --set executor.trials=3
  -h, --help             this text

exit codes: 0 done (whatever the verdict), 1 leap failed to evaluate, 2 bad usage/config/task
)";

struct cli_args {
  std::string config_file;
  std::vector<std::string> sets;
  std::vector<std::string> words;             // command words and positional arguments
  std::map<std::string, std::vector<std::string>> opts; // --flag value(s)
  std::vector<std::string> flags;             // --json, --reference
  bool has(const std::string& f) const {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
  }
  std::optional<std::string> opt(const std::string& k) const {
    auto it = opts.find(k);
    if (it == opts.end() || it->second.empty())
      return std::nullopt;
    return it->second.back();
  }
};

int usage_error(const std::string& msg) {
  std::cerr << "leap: " << msg << "\n(run 'leap --help' for usage)\n";
  return exit_usage;
}

result<cli_args> parse_args(int argc, char** argv) {
  static const std::vector<std::string> with_value{"--config", "--set", "--task", "--source",
                                                   "--backend", "--out", "--seed",
                                                   "--checkpoint", "--sweep"};
  static const std::vector<std::string> bare{"--json", "--reference", "--help", "-h", "--resume"};
  cli_args a;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    std::string key = w, value;
    bool inline_value = false;
    if (starts_with(w, "--") && w.find('=') != std::string::npos) {
      key = w.substr(0, w.find('='));
      value = w.substr(w.find('=') + 1);
      inline_value = true;
    }
    if (std::find(with_value.begin(), with_value.end(), key) != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= argc)
          return make_error(key + " needs a value");
        value = argv[++i];
      }
      if (key == "--config")
        a.config_file = value;
      else if (key == "--set")
        a.sets.push_back(value);
      else
        a.opts[key].push_back(value);
    } else if (std::find(bare.begin(), bare.end(), w) != bare.end()) {
      a.flags.push_back(w == "-h" ? "--help" : w);
    } else if (starts_with(w, "-")) {
      return make_error("unknown option '" + w + "'");
    } else {
      a.words.push_back(w);
    }
  }
  return a;
}

result<config::leap_config> make_config(const cli_args& a) {
  auto cfg = config::defaults();
  if (!a.config_file.empty()) {
    auto r = config::apply_file(cfg, a.config_file);
    if (!r)
      return r.err();
  }
  for (auto& s : a.sets) {
    auto r = config::apply_override(cfg, s);
    if (!r)
      return r.err();
  }
  if (auto b = a.opt("--backend")) {
    auto r = config::apply_override(cfg, "environment.backend=" + *b);
    if (!r)
      return make_error("--backend " + *b + ": expected auto, cpu or cuda");
  }
  return cfg;
}

std::string fmt(double v, int prec = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

int cmd_tasks_list(const cli_args& a, const config::leap_config& cfg) {
  auto dir = cfg.environment.tasks_dir.empty() ? std::string(build_info::source_dir) + "/tasks"
                                               : cfg.environment.tasks_dir;
  if (const char* home = std::getenv("LEAP_HOME"); home && cfg.environment.tasks_dir.empty())
    dir = std::string(home) + "/tasks";
  auto suite = env::load_task_suite(dir);
  if (!suite) {
    std::cerr << "leap: " << suite.message() << "\n";
    return exit_usage;
  }
  if (a.has("--json")) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& t : *suite) {
      nlohmann::json sizes = nlohmann::json::array();
      for (auto& s : t.sizes)
        sizes.push_back(s);
      arr.push_back({{"name", t.name}, {"level", t.level}, {"signature", t.signature},
                     {"sizes", sizes}, {"atol", t.atol}, {"rtol", t.rtol}});
    }
    std::cout << arr.dump() << "\n";
    return exit_ok;
  }
  std::printf("%-18s %-5s %-6s %s\n", "task", "level", "sizes", "signature");
  for (auto& t : *suite) {
    std::string sig = t.signature.substr(t.signature.find("solution"));
    std::printf("%-18s %-5d %-6zu %s\n", t.name.c_str(), t.level, t.sizes.size(), sig.c_str());
  }
  std::printf("%zu tasks in %s\n", suite->size(), dir.c_str());
  return exit_ok;
}

int cmd_tasks_verify(const cli_args& a, services& svc) {
  evaluator ev(svc);
  auto names = a.opts.count("--task") ? a.opts.at("--task") : std::vector<std::string>{};
  for (auto& n : names)
    if (!svc.tasks->count(n))
      return usage_error("unknown task '" + n + "'");
  std::fprintf(stderr, "verifying %zu reference(s) on the %s backend (%s)...\n",
               names.empty() ? svc.tasks->size() : names.size(), svc.backend.c_str(),
               svc.backend_reason.c_str());
  auto rows = verify_tasks(svc, ev, names);
  int bad = 0;
  nlohmann::json arr = nlohmann::json::array();
  if (!a.has("--json"))
    std::printf("%-18s %-5s %-6s %-10s %-9s %-12s %s\n", "task", "level", "result", "build s",
                "run s", "max|d| torch", svc.backend == "cuda" ? "ref ms" : "");
  for (auto& r : rows) {
    bad += !r.ok;
    if (a.has("--json")) {
      arr.push_back({{"task", r.task}, {"level", r.level}, {"ok", r.ok}, {"problem", r.problem},
                     {"compile_seconds", r.compile_seconds}, {"cached", r.cached},
                     {"run_seconds", r.run_seconds}, {"max_abs_vs_oracle", r.max_abs_vs_oracle},
                     {"reference_ms", r.timed ? nlohmann::json(r.reference_ms) : nlohmann::json()}});
      continue;
    }
    std::printf("%-18s %-5d %-6s %-10s %-9s %-12.3g %s\n", r.task.c_str(), r.level,
                r.ok ? "ok" : "FAIL", r.cached ? "cached" : fmt(r.compile_seconds, 2).c_str(),
                fmt(r.run_seconds, 2).c_str(), r.max_abs_vs_oracle,
                r.timed ? fmt(r.reference_ms, 4).c_str() : "");
    if (!r.ok)
      std::printf("    %s\n", r.problem.c_str());
  }
  if (a.has("--json"))
    std::cout << nlohmann::json{{"backend", svc.backend}, {"tasks", arr}, {"failed", bad}}.dump()
              << "\n";
  else
    std::printf("%zu passed, %d failed\n", rows.size() - static_cast<std::size_t>(bad), bad);
  return bad == 0 ? exit_ok : exit_failed;
}

int cmd_check(const cli_args& a, services& svc) {
  auto task = a.opt("--task");
  if (!task)
    return usage_error("check needs --task NAME");
  if (!svc.tasks->count(*task)) {
    std::string known;
    for (auto& [n, t] : *svc.tasks)
      known += (known.empty() ? "" : ", ") + n;
    return usage_error("unknown task '" + *task + "' (known: " + known + ")");
  }
  check_item item;
  item.task = *task;
  if (a.has("--reference")) {
    item.reference = true;
  } else {
    auto src = a.opt("--source");
    if (!src)
      return usage_error("check needs --source FILE or --reference");
    auto text = read_file(*src);
    if (!text)
      return usage_error(text.message());
    item.source = *text;
  }
  evaluator ev(svc);
  auto out = ev.evaluate({item});
  if (!out[0]) {
    std::cerr << "leap: " << out[0].message() << "\n";
    return exit_failed;
  }
  const auto& v = out[0]->v;
  if (a.has("--json")) {
    std::cout << env::to_json(v) << "\n";
    return exit_ok;
  }
  std::printf("task:     %s\n", v.task.c_str());
  std::printf("backend:  %s (%s)\n", v.backend.c_str(), svc.backend_reason.c_str());
  std::printf("status:   %s%s\n", env::to_string(v.st),
              v.reason.empty() ? "" : (" (" + v.reason + ")").c_str());
  std::printf("compile:  %s s%s\n", fmt(v.compile_seconds, 2).c_str(),
              v.cached ? " (cache hit)" : "");
  std::printf("run:      %s s, %d/%d trials passed, max abs error %.3g\n",
              fmt(v.run_seconds, 2).c_str(), v.trials_passed, v.trials_run, v.max_abs_error);
  if (v.timed)
    std::printf("time:     %.4f ms vs reference %.4f ms, speedup %.2fx\n", v.candidate_ms,
                v.reference_ms, v.speedup);
  else
    std::printf("time:     not measured (%s)\n",
                v.backend == "cpu" ? "the CPU emulation checks correctness only" : "not correct");
  std::printf("feedback: %s\n", v.feedback.c_str());
  return exit_ok;
}

int cmd_doctor(services& svc) {
  auto& t = svc.tools;
  std::printf("leap %s\n", build_info::version);
  std::printf("nvcc:            %s (%s)\n", t.nvcc.c_str(), t.nvcc_version.c_str());
  std::printf("host compiler:   %s\n", t.host_cxx_version.c_str());
  std::printf("CUDA device:     %s\n", t.cuda_device ? t.cuda_device_name.c_str()
                                                       : ("none: " + t.cuda_device_name).c_str());
  std::printf("backend:         %s (%s)\n", svc.backend.c_str(), svc.backend_reason.c_str());
  std::printf("CUDA harness:    %s\n", t.harness_cuda_lib.empty() ? "not built" : t.harness_cuda_lib.c_str());
  std::printf("emulation:       %s, %s\n", t.emu_runtime_lib.c_str(), t.emu_include_dir.c_str());
  std::printf("cache:           %s\n", svc.cache_dir.c_str());
  std::printf("tasks:           %s\n", svc.tasks_dir.c_str());
  std::printf("oracles:         %zu LibTorch task oracles\n", policy::oracle_names().size());
  std::printf("isolation:       %s\n", svc.cfg.executor.sandbox
                                          ? svc.sandbox.summary().c_str()
                                          : "DISABLED (executor.sandbox = false)");
  return exit_ok;
}

} // namespace

int run_cli(int argc, char** argv) {
  auto parsed = parse_args(argc, argv);
  if (!parsed)
    return usage_error(parsed.message());
  auto& a = *parsed;
  if (a.has("--help") || a.words.empty()) {
    std::cout << usage_text;
    return a.words.empty() && !a.has("--help") ? exit_usage : exit_ok;
  }
  if (a.words[0] == "bench") {
    // The scenario file has a [bench] section the ordinary config does not know: bench reads it.
    bench_args b;
    b.scenario_path = a.config_file;
    b.sets = a.sets;
    b.json = a.has("--json");
    if (auto o = a.opt("--out"))
      b.out_dir = *o;
    if (auto it = a.opts.find("--sweep"); it != a.opts.end())
      b.sweep = it->second;
    for (std::size_t i = 1; i < a.words.size(); ++i) {
      if (a.words[i].find('=') == std::string::npos || b.sweep.empty())
        return usage_error("bench: unexpected argument '" + a.words[i] + "'");
      b.sweep.push_back(a.words[i]); // --sweep a=1,2 b=3,4
    }
    return cmd_bench(b);
  }
  auto cfg = make_config(a);
  if (!cfg) {
    std::cerr << "leap: " << cfg.message() << "\n";
    return exit_usage;
  }
  const auto& cmd = a.words[0];
  auto sub = a.words.size() > 1 ? a.words[1] : "";
  if (cmd == "version") {
    std::cout << "leap " << build_info::version << "\n";
    return exit_ok;
  }
  if (cmd == "config") {
    if (sub == "show") {
      std::cout << config::to_toml(*cfg);
      return exit_ok;
    }
    if (sub == "docs") {
      std::cout << config::render_docs_markdown();
      return exit_ok;
    }
    if (sub == "defaults") {
      std::cout << config::to_toml(config::defaults(), true);
      return exit_ok;
    }
    return usage_error("config needs 'show', 'defaults' or 'docs'");
  }
  if (cmd == "tasks" && sub == "list")
    return cmd_tasks_list(a, *cfg);
  bool known = (cmd == "tasks" && sub == "verify") || cmd == "check" || cmd == "doctor"
               || cmd == "corpus" || cmd == "pretrain" || cmd == "eval" || cmd == "train";
  if (!known)
    return usage_error("unknown command '" + join(a.words, " ") + "'");
  auto svc = make_services(*cfg, cmd != "doctor");
  if (!svc) {
    std::cerr << "leap: " << svc.message() << "\n";
    return exit_usage;
  }
  if (cmd == "doctor")
    return cmd_doctor(**svc);
  if (cmd == "check")
    return cmd_check(a, **svc);
  if (cmd == "pretrain") {
    auto out = a.opt("--out");
    if (!out)
      return usage_error("pretrain needs --out DIR");
    return cmd_pretrain(**svc, *out, a.has("--json"));
  }
  if (cmd == "train") {
    auto out = a.opt("--out");
    if (!out)
      return usage_error("train needs --out DIR");
    return cmd_train(**svc, *out, a.has("--resume"));
  }
  if (cmd == "eval") {
    auto ck = a.opt("--checkpoint");
    if (!ck)
      return usage_error("eval needs --checkpoint DIR");
    return cmd_eval(**svc, *ck, a.has("--json"));
  }
  if (cmd == "corpus") {
    corpus_options co;
    auto out = a.opt("--out");
    if (!out)
      return usage_error("corpus needs --out DIR");
    co.out_dir = *out;
    if (auto seed = a.opt("--seed")) {
      try {
        co.seed = std::stoull(*seed);
      } catch (...) {
        return usage_error("--seed " + *seed + ": expected a non-negative integer");
      }
    }
    if (a.opts.count("--task"))
      co.tasks = a.opts.at("--task");
    for (auto& t : co.tasks)
      if (!(*svc)->tasks->count(t))
        return usage_error("unknown task '" + t + "'");
    return cmd_corpus(**svc, co, a.has("--json"));
  }
  return cmd_tasks_verify(a, **svc);
}

} // namespace leap::runtime
