// `leap train --out DIR [--resume]`: LEAP RL training. Runs the train workflow
// (runtime/workflows/train_run.hpp: warm start, the actor pipeline, metrics.jsonl, groups.jsonl,
// checkpoints, Ctrl-C saves) in DIR. Main thread.
#include "runtime/commands/table.hpp"
#include "runtime/workflows/train_run.hpp"

namespace leap::runtime {

command train_command() {
  return {{"train"}, "--out DIR [--resume]",
          "LEAP RL training (warm start from pretrain, made if\nmissing); metrics.jsonl, "
          "groups.jsonl, checkpoints;\nCtrl-C saves",
          command::needs::services, true, false, [](const command_context& ctx) {
            auto out = ctx.args.opt("--out");
            if (!out)
              return usage_error("train needs --out DIR");
            return run_training(*ctx.svc, *out, ctx.args.has("--resume"));
          }};
}

} // namespace leap::runtime
