// `leap --config FILE experiment --out DIR`: the paper's comparison in miniature. The file is an
// ordinary config with an [experiment] section (runtime/workflows/experiment_data.hpp). This verb
// reads the file's config, applies --set and --backend and checks the rules across keys, then
// runs the experiment workflow (runtime/workflows/experiment.hpp: one warm start, every seed x
// arm trained on one budget and evaluated, resumable; table.md, results.csv, runs.csv,
// report.html). Main thread only.
#include "runtime/commands/table.hpp"
#include "runtime/workflows/experiment.hpp"

#include <cstdio>

namespace leap::runtime {

namespace {

int run_experiment(const command_context& ctx) {
  const auto& args = ctx.args;
  auto out_opt = args.opt("--out");
  if (args.config_file.empty() || !out_opt)
    return usage_error("experiment needs --config FILE (with an [experiment] section) and --out DIR");
  const std::string file = args.config_file;
  // The file's config ([experiment] is this command's own section), then --set, then the rules.
  auto base = config::defaults();
  config::key_origins origins;
  if (auto r = config::apply_file(base, file, {"experiment"}, &origins); !r) {
    std::fprintf(stderr, "leap: %s\n", r.message().c_str());
    return exit_usage;
  }
  for (auto& s : args.sets)
    if (auto r = config::apply_override(base, s, &origins); !r) {
      std::fprintf(stderr, "leap: %s\n", r.message().c_str());
      return exit_usage;
    }
  if (auto b = args.opt("--backend"))
    if (auto r = config::apply_override(base, "environment.backend=" + *b, &origins); !r)
      return usage_error("--backend " + *b + ": expected auto, cpu or cuda");
  if (auto r = config::check_consistency(base, origins); !r) {
    std::fprintf(stderr, "leap: %s\n", r.message().c_str());
    return exit_usage;
  }
  return experiment::run({file, std::move(base), *out_opt});
}

} // namespace

command experiment_command() {
  return {{"experiment"},
          "--out DIR",
          "--config FILE with [experiment]: one warm start, every arm x\n"
          "seed trained on one budget and evaluated; resumes; table.md,\n"
          "results.csv, runs.csv, report.html",
          command::needs::nothing,
          false,
          false,
          run_experiment};
}

} // namespace leap::runtime
