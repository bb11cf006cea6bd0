// The evaluation workflow: see evaluation.hpp.
#include "runtime/workflows/evaluation.hpp"

#include "actors/group_scoring.hpp"
#include "algo/metrics.hpp"
#include "common/json_text.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/workflows/eval_pipeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace leap::runtime {

using eval_detail::eval_policy;
using eval_detail::run_eval_pipeline;
using eval_detail::sampler;

std::string eval_set_of(const std::string& task) {
  if (!taskgen::is_generated_name(task) || task.size() < 6)
    return "bundled";
  switch (task[task.size() - 6]) {
    case 'i':
      return "generated_instance";
    case 'c':
      return "generated_composition";
    default:
      return "generated_train";
  }
}

result<eval_summary> evaluate_checkpoint(services& svc, const std::string& dir, bool show) {
  const auto& cfg = svc.cfg;
  auto t_start = std::chrono::steady_clock::now();
  if (auto added = add_generated_tasks(svc, cfg.eval.tasks, "eval.tasks"); !added)
    return added.err();
  std::vector<env::task_split> splits;
  if (cfg.eval.split != config::eval_split::train)
    splits.push_back(env::task_split::eval);
  if (cfg.eval.split != config::eval_split::eval)
    splits.push_back(env::task_split::train);
  auto selected = env::select_tasks(*svc.tasks, "eval.tasks", cfg.eval.tasks, splits);
  if (!selected)
    return selected.err();
  const std::vector<std::string> names = std::move(*selected);
  const char* split_name = cfg.eval.split == config::eval_split::eval    ? "eval"
                           : cfg.eval.split == config::eval_split::train ? "train"
                                                                         : "all";
  const std::string suite_hash = env::task_suite_hash(*svc.tasks);
  if (show)
    std::fprintf(stderr, "eval: %zu tasks of the %s split (eval.split; suite %s)\n", names.size(),
                 split_name, suite_hash.c_str());
  // Debugging aid (no config key): LEAP_EVAL_DUMP=FILE appends one JSON line per sampled turn
  // with the prompt text, the raw completion and the verdict.
  auto dump = std::make_shared<std::ofstream>();
  if (const char* path = std::getenv("LEAP_EVAL_DUMP"); path != nullptr && *path != '\0')
    dump->open(path, std::ios::app);
  std::size_t done = 0;
  const auto total = names.size();
  auto on_group = [show, dump, &done, total](const msg::group_result& g, const eval_policy& pol) {
    ++done;
    int solved = 0;
    for (auto& tr : g.trajectories)
      solved += tr.solved_turn > 0;
    if (show)
      std::fprintf(stderr, "eval: %-18s %d/%zu solved, %u turns sampled (%zu/%zu tasks)\n",
                   g.task.c_str(), solved, g.trajectories.size(), g.attempts, done, total);
    if (!dump->is_open())
      return;
    for (std::size_t a = 0; a < g.trajectories.size(); ++a)
      for (std::size_t k = 0; k < g.trajectories[a].turns.size(); ++k) {
        const auto& t = g.trajectories[a].turns[k];
        *dump << dump_lossy(nlohmann::json{
                   {"task", g.task}, {"attempt", a}, {"turn", k + 1},
                   {"prompt", pol.tok->decode(t.prompt)},
                   {"completion", pol.tok->decode(t.completion)},
                   {"status", t.judged ? env::to_string(t.status) : "none"}, {"reason", t.reason}})
              << "\n";
      }
    dump->flush();
  };
  auto ran = run_eval_pipeline(svc, dir, names, cfg.eval, sampler::configured, show, on_group);
  if (!ran)
    return ran.err();
  auto& out = *ran;

  eval_summary sum;
  sum.split = split_name;
  sum.task_suite = suite_hash;
  const int T = cfg.eval.max_turns;
  // Acc@k for k = 1..max(3, T) over some groups (Acc@k of k > T equals Acc@T).
  auto acc_curve = [T](const std::vector<algo::group_record>& groups) {
    std::vector<double> acc;
    for (int k = 1; k <= std::max(T, 3); ++k)
      acc.push_back(algo::acc_at_k(groups, std::min(k, T)));
    return acc;
  };
  std::vector<algo::group_record> records;
  std::map<std::string, std::vector<algo::group_record>> by_category, by_set;
  for (const auto& g : out.groups) {
    auto& r = sum.per_task[g.task];
    sum.samples += g.attempts;
    for (const auto& tr : g.trajectories) {
      const bool ranked = actors::is_ranked(tr);
      r.solved_turn.push_back(ranked ? tr.solved_turn : 0);
      r.ranked.push_back(ranked);
      sum.dropped += tr.end == algo::attempt_end::dropped;
      sum.unsupported += tr.end == algo::attempt_end::unsupported;
      for (std::size_t k = 0; k < tr.turns.size(); ++k) {
        const auto& t = tr.turns[k];
        sum.generated_tokens += static_cast<long long>(t.completion.size());
        sum.no_code += t.judged && t.reason == "no_code";
        if (k == 0)
          r.turn1_status[t.judged ? env::to_string(t.status) : "no_verdict"]++;
      }
    }
    records.push_back(actors::record_of(g));
    const std::string category = env::to_string(svc.tasks->at(g.task).category);
    sum.per_category[category].tasks.push_back(g.task); // one group per task
    by_category[category].push_back(records.back());
    const std::string set = eval_set_of(g.task);
    sum.per_set[set].tasks.push_back(g.task);
    by_set[set].push_back(records.back());
  }
  for (auto& [name, cat] : sum.per_category)
    cat.acc_at = acc_curve(by_category[name]);
  for (auto& [name, set] : sum.per_set)
    set.acc_at = acc_curve(by_set[name]);
  sum.pass_at_1 = algo::acc_at_k(records, 1);
  sum.acc_at = acc_curve(records);
  sum.turns_per_pass = algo::turns_per_pass(records);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (out.usage.elapsed_seconds > 0) {
    sum.generate_busy = out.usage.generate / out.usage.elapsed_seconds;
    sum.compile_busy = out.usage.compile / out.usage.elapsed_seconds;
    sum.execute_busy = out.usage.execute / out.usage.elapsed_seconds;
  }
  return sum;
}

} // namespace leap::runtime
