// `leap tasks list` and `leap tasks verify`: the task suite, and the check that every reference
// builds, runs and agrees with its LibTorch oracle (runtime/commands/verify.hpp).
#include "leap/build_info.hpp"
#include "common/strings.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/commands/verify.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace leap::runtime {

namespace {

int run_list(const command_context& ctx) {
  const auto& cfg = *ctx.cfg;
  auto dir = cfg.environment.tasks_dir.empty() ? std::string(build_info::source_dir) + "/tasks"
                                               : cfg.environment.tasks_dir;
  if (const char* home = std::getenv("LEAP_HOME"); home && cfg.environment.tasks_dir.empty())
    dir = std::string(home) + "/tasks";
  auto suite = env::load_task_suite(dir);
  if (!suite) {
    std::cerr << "leap: " << suite.message() << "\n";
    return exit_usage;
  }
  if (ctx.args.has("--json")) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& t : *suite) {
      nlohmann::json sizes = nlohmann::json::array();
      for (auto& s : t.sizes)
        sizes.push_back(s);
      arr.push_back({{"name", t.name}, {"level", t.level}, {"split", env::to_string(t.split)},
                     {"category", env::to_string(t.category)}, {"signature", t.signature},
                     {"sizes", sizes}, {"atol", t.atol}, {"rtol", t.rtol}});
    }
    std::cout << arr.dump() << "\n";
    return exit_ok;
  }
  std::printf("%-20s %-5s %-5s %-11s %-5s %s\n", "task", "level", "split", "category", "sizes",
              "signature");
  for (auto& t : *suite) {
    std::string sig = t.signature.substr(t.signature.find("solution"));
    std::printf("%-20s %-5d %-5s %-11s %-5zu %s\n", t.name.c_str(), t.level,
                env::to_string(t.split), env::to_string(t.category), t.sizes.size(), sig.c_str());
  }
  std::printf("%zu tasks in %s (%zu train, %zu eval; suite hash %s)\n", suite->size(), dir.c_str(),
              env::tasks_of_split(*suite, env::task_split::train).size(),
              env::tasks_of_split(*suite, env::task_split::eval).size(),
              env::task_suite_hash(*suite).c_str());
  return exit_ok;
}

int run_verify(const command_context& ctx) {
  auto& svc = *ctx.svc;
  const auto& a = ctx.args;
  auto made = evaluator::create(svc);
  if (!made)
    return usage_error(made.message());
  auto& ev = **made;
  auto names = a.opts.count("--task") ? a.opts.at("--task") : std::vector<std::string>{};
  for (auto& n : names)
    if (!svc.tasks->count(n))
      return usage_error("unknown task '" + n + "'");
  std::fprintf(stderr, "verifying %zu reference(s) on the %s backend (%s)...\n",
               names.empty() ? svc.tasks->size() : names.size(), env::to_string(svc.backend),
               svc.backend_reason.c_str());
  auto rows = verify_tasks(svc, ev, names);
  int bad = 0;
  nlohmann::json arr = nlohmann::json::array();
  const bool cuda = svc.backend == env::backend::cuda;
  if (!a.has("--json"))
    std::printf("%-18s %-5s %-6s %-10s %-9s %-12s %s\n", "task", "level", "result", "build s",
                "run s", "max|d| torch", cuda ? "ref ms" : "");
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
                r.ok ? "ok" : "FAIL",
                r.cached ? "cached" : format_fixed(r.compile_seconds, 2).c_str(),
                format_fixed(r.run_seconds, 2).c_str(), r.max_abs_vs_oracle,
                r.timed ? format_fixed(r.reference_ms, 4).c_str() : "");
    if (!r.ok)
      std::printf("    %s\n", r.problem.c_str());
  }
  if (a.has("--json"))
    std::cout << nlohmann::json{{"backend", env::to_string(svc.backend)}, {"tasks", arr},
                                {"failed", bad}}
                   .dump()
              << "\n";
  else
    std::printf("%zu passed, %d failed\n", rows.size() - static_cast<std::size_t>(bad), bad);
  return bad == 0 ? exit_ok : exit_failed;
}

} // namespace

command tasks_list_command() {
  return {{"tasks", "list"}, "[--json]", "list the task suite", command::needs::config, true,
          false, run_list};
}

command tasks_verify_command() {
  return {{"tasks", "verify"}, "[--task NAME ...] [--json]",
          "build and run every reference; compare with LibTorch", command::needs::services, true,
          false, run_verify};
}

} // namespace leap::runtime
