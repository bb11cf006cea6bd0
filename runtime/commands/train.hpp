// `leap train`: LEAP reinforcement learning. Warm-starts from the pretrain checkpoint (running
// `leap pretrain` first when there is none), runs the actor pipeline (runtime/pipeline/
// assembly.hpp) for train.steps learner steps with a live display, appends one JSON object per
// step to DIR/metrics.jsonl and one per finished group to DIR/groups.jsonl, checkpoints to
// DIR/checkpoint every train.checkpoint_every steps; --resume continues from it; Ctrl-C saves
// and exits (130); a failed learner step saves and exits 1 with its error. Main thread; no CAF or
// LibTorch in this header.
#pragma once

#include "runtime/pipeline/services.hpp"

#include <string>

namespace leap::runtime {

int cmd_train(services& svc, const std::string& out_dir, bool resume);

} // namespace leap::runtime
