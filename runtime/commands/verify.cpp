// `leap tasks verify [--task NAME ...] [--json]`: the reference-verification workflow
// (runtime/workflows/verify_tasks.hpp) over the suite or the named tasks, as a table (or one JSON
// object with --json); exit 1 when a reference fails. Main thread.
#include "runtime/commands/table.hpp"
#include "runtime/workflows/verify_tasks.hpp"

#include "common/strings.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int run_verify(const command_context& ctx) {
  auto& svc = *ctx.svc;
  const auto& a = ctx.args;
  if (a.opts.count("--task"))
    if (auto added = add_generated_tasks(svc, a.opts.at("--task"), "--task"); !added)
      return usage_error(added.message());
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

command tasks_verify_command() {
  return {{"tasks", "verify"}, "[--task NAME ...] [--json]",
          "build and run every reference; compare with LibTorch", command::needs::services, true,
          false, run_verify};
}

} // namespace leap::runtime
