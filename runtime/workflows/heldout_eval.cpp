// Held-out evaluation during training: see heldout_eval.hpp.
#include "runtime/workflows/heldout_eval.hpp"

#include "actors/group_scoring.hpp"
#include "algo/metrics.hpp"
#include "runtime/workflows/eval_pipeline.hpp"
#include "runtime/workflows/evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

namespace leap::runtime {

std::string heldout_set_of(const std::string& task) {
  auto set = eval_set_of(task);
  return set == "bundled" ? "eval" : set;
}

result<std::vector<std::string>> heldout_sample(const services& svc) {
  auto all = env::select_tasks(*svc.tasks, "train.eval_every", {}, {env::task_split::eval});
  if (!all)
    return make_error("train.eval_every: no held-out task to evaluate on (" + all.message() + ")");
  std::map<std::string, std::vector<std::string>> by_set;
  for (const auto& t : *all)
    by_set[heldout_set_of(t)].push_back(t);
  const auto& tc = svc.cfg.train;
  std::vector<std::string> out;
  for (auto& [set, names] : by_set) {
    std::sort(names.begin(), names.end());
    // A partial Fisher-Yates draw of its own generator: training's randomness is untouched, and
    // the draw does not depend on the standard library's distributions.
    std::mt19937_64 rng(tc.eval_seed);
    const std::size_t n = std::min<std::size_t>(names.size(), static_cast<std::size_t>(tc.eval_tasks));
    for (std::size_t i = 0; i < n; ++i)
      std::swap(names[i], names[i + rng() % (names.size() - i)]);
    out.insert(out.end(), names.begin(), names.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}

result<heldout_figures> evaluate_heldout(const services& svc, const std::string& dir,
                                         const std::vector<std::string>& names) {
  const auto t0 = std::chrono::steady_clock::now();
  // The same environment with a process runner, compiler and executor of its own: the
  // evaluation's builds go to a cache apart from training's (training never gets a cache hit from
  // a held-out build), and shutting its pipeline down leaves training's processes alone (with
  // the shared ones, training's next execution waited forever).
  services own = svc;
  own.owns_work_dir = false;
  own.runner = std::make_shared<env::process_runner>();
  env::compiler_options co = svc.compiler->options();
  co.cache_dir = svc.cache_dir + "/heldout";
  own.compiler = std::make_shared<env::compiler>(own.tools, co, *own.runner);
  own.executor = std::make_shared<env::executor>(svc.executor->options(), *own.runner);
  config::eval_section ec = svc.cfg.eval;
  ec.seed = svc.cfg.train.eval_seed;
  auto ran = eval_detail::run_eval_pipeline(own, dir, names, ec,
                                            eval_detail::sampler::checkpoint, false, nullptr);
  if (!ran)
    return make_error("held-out evaluation of " + dir + ": " + ran.message());
  const int T = ec.max_turns;
  heldout_figures h;
  std::vector<algo::group_record> all;
  std::map<std::string, std::vector<algo::group_record>> by_set;
  std::map<std::string, heldout_set_figures> sets;
  for (const auto& g : ran->groups) {
    all.push_back(actors::record_of(g));
    const auto set = heldout_set_of(g.task);
    by_set[set].push_back(all.back());
    auto& s = sets[set];
    s.name = set;
    s.tasks += 1;
    s.attempts += static_cast<long long>(g.trajectories.size());
    h.attempts += static_cast<long long>(g.trajectories.size());
    h.compiles += g.compiles;
    h.cache_hits += g.cache_hits;
  }
  h.tasks = static_cast<int>(ran->groups.size());
  h.acc_at_1 = algo::acc_at_k(all, 1);
  h.acc_at_3 = algo::acc_at_k(all, std::min(3, T));
  for (auto& [name, s] : sets) {
    s.acc_at_1 = algo::acc_at_k(by_set[name], 1);
    s.acc_at_3 = algo::acc_at_k(by_set[name], std::min(3, T));
    h.sets.push_back(s);
  }
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

std::string heldout_line(const heldout_figures& h) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "      held-out: acc@1 %.3f acc@3 %.3f over %d tasks, %lld attempts "
                "(", h.acc_at_1, h.acc_at_3, h.tasks, h.attempts);
  std::string line = buf;
  for (std::size_t i = 0; i < h.sets.size(); ++i) {
    const auto& s = h.sets[i];
    std::snprintf(buf, sizeof buf, "%s%s %d: %.3f/%.3f", i ? "; " : "", s.name.c_str(), s.tasks,
                  s.acc_at_1, s.acc_at_3);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "); %lld compiles, %lld cache hits, %.1f s", h.compiles,
                h.cache_hits, h.seconds);
  return line + buf;
}

} // namespace leap::runtime
