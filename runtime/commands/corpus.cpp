// `leap corpus --out DIR [--seed N] [--task NAME ...] [--json]`: the corpus-labelling workflow
// (runtime/workflows/corpus_labels.hpp) with progress on stderr and a summary (or one JSON object
// with --json) on stdout. Exit codes as the CLI's: 0, 1 (leap failed, or a variant got no
// verdict), 2. Main thread.
#include "runtime/commands/table.hpp"
#include "runtime/workflows/corpus_labels.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int cmd_corpus(services& svc, const corpus_options& opt_in, bool json) {
  auto opt = opt_in;
  if (!opt.progress)
    opt.progress = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\rlabelling %zu/%zu variants", done, total);
      if (done == total)
        std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
  auto made = evaluator::create(svc);
  if (!made) {
    std::cerr << "leap: " << made.message() << "\n";
    return 2;
  }
  auto& ev = **made;
  auto r = build_corpus(svc, ev, opt);
  if (!r) {
    std::cerr << "leap: " << r.message() << "\n";
    return 1;
  }
  const auto& s = *r;
  if (json) {
    std::cout << nlohmann::json{{"corpus", s.corpus_path}, {"stats", s.stats_path}, {"variants", s.variants},
                                {"solutions", s.solutions}, {"buggy", s.buggy}, {"repairs", s.repairs},
                                {"targets", s.targets}, {"failed_solutions", s.failed_solutions},
                                {"benign_bugs", s.benign_bugs},
                                {"emulation_unsupported", s.emulation_unsupported},
                                {"label_cache_hits", s.label_cache_hits}, {"leap_errors", s.leap_errors},
                                {"seconds", s.seconds}}.dump()
              << "\n";
  } else {
    std::printf("corpus:   %s\nstats:    %s\n", s.corpus_path.c_str(), s.stats_path.c_str());
    std::printf("variants: %zu (%zu solutions, %zu buggy), %zu repair dialogues\n", s.variants,
                s.solutions, s.buggy, s.repairs);
    std::printf("targets:  %zu solutions really correct; %zu 'correct' strategies rejected by the "
                "environment; %zu bugs that still passed\n",
                s.targets, s.failed_solutions, s.benign_bugs);
    std::printf("labels:   %zu from the cache, %zu emulation_unsupported, %zu leap errors, %.1f s\n",
                s.label_cache_hits, s.emulation_unsupported, s.leap_errors, s.seconds);
  }
  return s.leap_errors == 0 ? 0 : 1;
}

int run_corpus(const command_context& ctx) {
  const auto& a = ctx.args;
  auto co = corpus_options_of(ctx.svc->cfg.sft);
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
  if (auto added = add_generated_tasks(*ctx.svc, co.tasks, "--task"); !added)
    return usage_error(added.message());
  for (auto& t : co.tasks)
    if (!ctx.svc->tasks->count(t))
      return usage_error("unknown task '" + t + "'");
  return cmd_corpus(*ctx.svc, co, a.has("--json"));
}

} // namespace

command corpus_command() {
  return {{"corpus"}, "--out DIR [--seed N] [--task NAME ...] [--json]",
          "generate the kernel corpus, label every variant\nthrough the environment, write "
          "corpus.jsonl",
          command::needs::services, true, false, run_corpus};
}

} // namespace leap::runtime
