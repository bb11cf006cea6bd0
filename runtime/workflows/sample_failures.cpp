// The failure-sampling workflow: see sample_failures.hpp.
#include "runtime/workflows/sample_failures.hpp"

#include "actors/group_scoring.hpp"
#include "runtime/workflows/eval_pipeline.hpp"

#include <chrono>
#include <cstdio>

namespace leap::runtime {

using eval_detail::eval_policy;
using eval_detail::run_eval_pipeline;
using eval_detail::sampler;

result<sampled_failures> sample_failures(services& svc, const std::string& dir,
                                         const std::vector<std::string>& names, int group_size,
                                         bool show) {
  auto t0 = std::chrono::steady_clock::now();
  config::eval_section ec = svc.cfg.eval;
  ec.group_size = group_size;
  ec.max_turns = 1;
  std::size_t done = 0;
  auto out = run_eval_pipeline(
    svc, dir, names, ec, sampler::checkpoint, false,
    [&](const msg::group_result& g, const eval_policy&) {
      ++done;
      if (show)
        std::fprintf(stderr, "\rself-repair: sampled %zu/%zu tasks", done, names.size());
      if (show && done == names.size())
        std::fputc('\n', stderr);
    });
  if (!out)
    return out.err();
  sampled_failures res;
  for (const auto& g : out->groups)
    for (const auto& tr : g.trajectories) {
      if (!actors::is_ranked(tr) || tr.turns.empty())
        continue;
      const auto& t = tr.turns.front();
      ++res.samples;
      if (t.status == env::status::correct) {
        ++res.passed;
        continue;
      }
      res.failures.push_back({g.task, t.code, t.feedback});
    }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

} // namespace leap::runtime
