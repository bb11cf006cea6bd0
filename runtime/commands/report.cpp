// `leap report RUN_DIR... [--by-arm] --out FILE.html`: one self-contained HTML page overlaying
// training runs, or with --by-arm the arms they belong to (each run's parent directory) as means
// with 95% bands (runtime/report/html_report.hpp). Needs no configuration and no verification environment.
#include "runtime/commands/table.hpp"
#include "runtime/report/html_report.hpp"

#include <cstdio>

namespace leap::runtime {

namespace {

int run_report(const command_context& ctx) {
  const auto& a = ctx.args;
  std::vector<std::string> dirs(a.words.begin() + static_cast<long>(ctx.word_count), a.words.end());
  auto out = a.opt("--out");
  const bool by_arm = a.has("--by-arm");
  if (dirs.empty() || !out) {
    std::fprintf(stderr, "leap report: usage: leap report RUN_DIR... [--by-arm] --out FILE.html\n");
    return exit_usage;
  }
  auto r = report::write_report(dirs, *out, by_arm);
  if (!r) {
    std::fprintf(stderr, "leap report: %s\n", r.message().c_str());
    return exit_usage;
  }
  std::printf("wrote %s (%zu run%s)\n", out->c_str(), dirs.size(), dirs.size() == 1 ? "" : "s");
  return exit_ok;
}

} // namespace

command report_command() {
  return {{"report"},
          "RUN_DIR... [--by-arm] --out FILE.html",
          "one self-contained HTML page (inline SVG) overlaying training\n"
          "runs: Acc@k by step and wall-clock, compiles, DCP, loss, utilisation;\n"
          "--by-arm: each arm (the runs' parent directory) as a mean with a 95% band",
          command::needs::nothing,
          false,
          true,
          run_report};
}

} // namespace leap::runtime
