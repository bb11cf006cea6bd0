// `leap check`: one candidate (or a task's reference) through the environment's pools; prints
// the verdict, or one JSON object with --json.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "env/compile_stages.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int run_check(const command_context& ctx) {
  auto& svc = *ctx.svc;
  const auto& a = ctx.args;
  auto task = a.opt("--task");
  if (!task)
    return usage_error("check needs --task NAME");
  if (auto added = add_generated_tasks(svc, {*task}, "--task"); !added)
    return usage_error(added.message());
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
  auto made = evaluator::create(svc);
  if (!made)
    return usage_error(made.message());
  auto out = (*made)->evaluate({item});
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
  std::printf("backend:  %s (%s)\n", env::to_string(v.backend), svc.backend_reason.c_str());
  std::printf("status:   %s%s\n", env::to_string(v.st),
              v.reason.empty() ? "" : (" (" + v.reason + ")").c_str());
  std::printf("compile:  %s s%s\n", format_fixed(v.compile_seconds, 2).c_str(),
              v.cached ? " (cache hit)" : "");
  std::printf("stages:   %s\n", env::describe_stages(v.compile_stages, v.cached).c_str());
  std::printf("run:      %s s, %d/%d trials passed, max abs error %.3g\n",
              format_fixed(v.run_seconds, 2).c_str(), v.trials_passed, v.trials_run,
              v.max_abs_error);
  if (v.timed)
    std::printf("time:     %.4f ms vs reference %.4f ms, speedup %.2fx\n", v.candidate_ms,
                v.reference_ms, v.speedup);
  else
    std::printf("time:     not measured (%s)\n", v.backend == env::backend::cpu
                                                    ? "the CPU emulation checks correctness only"
                                                    : "not correct");
  std::printf("feedback: %s\n", v.feedback.c_str());
  return exit_ok;
}

} // namespace

command check_command() {
  return {{"check"},
          "--task NAME (--source FILE | --reference) [--backend auto|cpu|cuda] [--json]",
          "evaluate one candidate (or the task's own reference)\nand print its verdict",
          command::needs::services, true, false, run_check};
}

} // namespace leap::runtime
