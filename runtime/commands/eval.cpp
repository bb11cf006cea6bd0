// `leap eval --checkpoint DIR [--json]`: the evaluation workflow
// (runtime/workflows/evaluation.hpp) and its report: per-task pass@1 and Acc@k with the turn-1
// verdicts, Acc@1/2/3 per category and per task set, the totals; with --json one JSON object on
// the last line. Main thread.
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/env_pools.hpp"
#include "runtime/workflows/evaluation.hpp"

#include "common/json_text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int cmd_eval(services& svc, const std::string& dir, bool json) {
  auto r = evaluate_checkpoint(svc, dir, true);
  if (!r) {
    std::cerr << "leap: eval: " << r.message() << "\n";
    return cluster_cannot_start(r.message()) ? exit_usage : exit_failed;
  }
  const int T = svc.cfg.eval.max_turns;
  std::printf("%-18s %8s", "task", "pass@1");
  for (int k = 2; k <= T; ++k)
    std::printf("   acc@%d", k);
  std::printf("   turn-1 verdicts\n");
  nlohmann::json per_task = nlohmann::json::object();
  for (auto& [n, t] : r->per_task) {
    auto ranked = std::count(t.ranked.begin(), t.ranked.end(), true);
    auto g = static_cast<double>(std::max<long>(1, ranked));
    std::printf("%-18s %8.3f", n.c_str(),
                std::count(t.solved_turn.begin(), t.solved_turn.end(), 1) / g);
    nlohmann::json acc = nlohmann::json::array();
    for (int k = 1; k <= T; ++k) {
      auto c = std::count_if(t.solved_turn.begin(), t.solved_turn.end(),
                             [k](int s) { return s > 0 && s <= k; });
      acc.push_back(c / g);
      if (k >= 2)
        std::printf(" %7.3f", c / g);
    }
    std::string verdicts;
    for (auto& [s, c] : t.turn1_status)
      verdicts += (verdicts.empty() ? "" : ", ") + s + " " + std::to_string(c);
    std::printf("   %s\n", verdicts.c_str());
    per_task[n] = {{"pass_at_1", acc[0]}, {"acc", acc}, {"turn1_verdicts", t.turn1_status},
                   {"ranked", ranked}};
  }
  std::printf("\n%-12s %5s %7s %7s %7s\n", "category", "tasks", "acc@1", "acc@2", "acc@3");
  nlohmann::json per_category = nlohmann::json::object();
  for (auto& [name, c] : r->per_category) {
    std::printf("%-12s %5zu %7.3f %7.3f %7.3f\n", name.c_str(), c.tasks.size(), c.acc_at[0],
                c.acc_at[1], c.acc_at[2]);
    per_category[name] = {{"tasks", c.tasks}, {"acc_at_1", c.acc_at[0]}, {"acc_at_2", c.acc_at[1]},
                          {"acc_at_3", c.acc_at[2]}};
  }
  nlohmann::json per_set = nlohmann::json::object();
  if (r->per_set.size() > 1 || !r->per_set.count("bundled")) {
    std::printf("\n%-22s %5s %7s %7s %7s\n", "set", "tasks", "acc@1", "acc@2", "acc@3");
    for (auto& [name, c] : r->per_set)
      std::printf("%-22s %5zu %7.3f %7.3f %7.3f\n", name.c_str(), c.tasks.size(), c.acc_at[0],
                  c.acc_at[1], c.acc_at[2]);
  }
  for (auto& [name, c] : r->per_set)
    per_set[name] = {{"tasks", c.tasks}, {"acc_at_1", c.acc_at[0]}, {"acc_at_2", c.acc_at[1]},
                     {"acc_at_3", c.acc_at[2]}};
  std::printf("%s split (%zu tasks, suite %s): ", r->split.c_str(), r->per_task.size(),
              r->task_suite.c_str());
  std::printf("pass@1 %.3f   Acc@1 %.3f   Acc@2 %.3f   Acc@3 %.3f   turns/pass %.2f\n",
              r->pass_at_1, r->acc_at[0], r->acc_at[1], r->acc_at[2], r->turns_per_pass);
  std::printf("%lld samples, %lld tokens generated; %lld without code, %lld dropped, %lld "
              "emulation-unsupported; busy generate/compile/execute %.0f/%.0f/%.0f %%; total "
              "%.1f s\n",
              r->samples, r->generated_tokens, r->no_code, r->dropped, r->unsupported,
              100 * r->generate_busy, 100 * r->compile_busy, 100 * r->execute_busy, r->seconds);
  if (json)
    std::cout << dump_lossy(nlohmann::json{{"pass_at_1", r->pass_at_1}, {"acc_at_1", r->acc_at[0]},
                                {"acc_at_2", r->acc_at[1]}, {"acc_at_3", r->acc_at[2]},
                                {"turns_per_pass", r->turns_per_pass}, {"per_task", per_task},
                                {"per_category", per_category}, {"per_set", per_set},
                                {"split", r->split},
                                {"task_suite", r->task_suite},
                                {"samples", r->samples}, {"generated_tokens", r->generated_tokens},
                                {"no_code", r->no_code}, {"dropped", r->dropped},
                                {"unsupported", r->unsupported},
                                {"util_generate", r->generate_busy},
                                {"util_compile", r->compile_busy},
                                {"util_execute", r->execute_busy}, {"seconds", r->seconds},
                                {"max_turns", T}, {"group_size", svc.cfg.eval.group_size}})
              << "\n";
  return exit_ok;
}

} // namespace

command eval_command() {
  return {{"eval"}, "--checkpoint DIR [--json]",
          "sample G attempts per task, up to eval.max_turns with\nfeedback; pass@1, Acc@1/2/3, "
          "per-task pass rates",
          command::needs::services, true, false, [](const command_context& ctx) {
            auto ck = ctx.args.opt("--checkpoint");
            if (!ck)
              return usage_error("eval needs --checkpoint DIR");
            return cmd_eval(*ctx.svc, *ck, ctx.args.has("--json"));
          }};
}

} // namespace leap::runtime
