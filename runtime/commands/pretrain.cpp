// `leap pretrain --out DIR [--json]`: the SFT warm start. Runs the warm-start workflow
// (runtime/workflows/warm_start.hpp) and prints its summary (and one JSON object with --json).
// Main thread.
#include "runtime/commands/table.hpp"
#include "runtime/workflows/warm_start.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace leap::runtime {

namespace {

int cmd_pretrain(services& svc, const std::string& out_dir, bool json) {
  auto r = pretrain(svc, out_dir, true);
  if (!r) {
    std::cerr << "leap: pretrain: " << r.message() << "\n";
    return 1;
  }
  std::printf("checkpoint: %s\nparameters: %lld (vocab %d)\nexamples:   %zu turn-1, %zu repair "
              "(%zu skipped: longer than policy.max_seq_len)\nsteps:      %d in %.1f s (%.0f "
              "tok/s)\nloss:       %.4f -> %.4f\n",
              r->checkpoint_dir.c_str(), r->parameters, r->vocab_size, r->turn1_examples,
              r->repair_examples, r->skipped_examples, r->steps, r->sft_seconds,
              r->tokens_per_second, r->first_loss, r->final_loss);
  if (r->self_repair_samples > 0)
    std::printf("self-repair: %lld of %lld turn-1 samples failed -> %zu repair dialogues "
                "(sampling %.1f s)\n",
                r->self_repair_samples - r->self_repair_passed, r->self_repair_samples,
                r->self_repair_examples, r->self_repair_seconds);
  if (json)
    std::cout << nlohmann::json{{"checkpoint", r->checkpoint_dir}, {"parameters", r->parameters},
                                {"vocab_size", r->vocab_size}, {"steps", r->steps},
                                {"first_loss", r->first_loss}, {"final_loss", r->final_loss},
                                {"sft_seconds", r->sft_seconds},
                                {"corpus_seconds", r->corpus_seconds},
                                {"tokens_per_second", r->tokens_per_second},
                                {"self_repair_samples", r->self_repair_samples},
                                {"self_repair_passed", r->self_repair_passed},
                                {"self_repair_examples", r->self_repair_examples},
                                {"self_repair_seconds", r->self_repair_seconds}}
                   .dump()
              << "\n";
  return 0;
}

} // namespace

command pretrain_command() {
  return {{"pretrain"}, "--out DIR [--json]",
          "SFT warm start on the labelled corpus; writes a checkpoint", command::needs::services,
          true, false, [](const command_context& ctx) {
            auto out = ctx.args.opt("--out");
            if (!out)
              return usage_error("pretrain needs --out DIR");
            return cmd_pretrain(*ctx.svc, *out, ctx.args.has("--json"));
          }};
}

} // namespace leap::runtime
