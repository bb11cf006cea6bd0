// `leap train`: LEAP reinforcement learning. Warm-starts from the pretrain checkpoint (running
// `leap pretrain` first when there is none), runs the actor pipeline for train.steps learner
// steps with a live display, appends one JSON object per step to DIR/metrics.jsonl, checkpoints
// to DIR/checkpoint every train.checkpoint_every steps; --resume continues from it; Ctrl-C saves
// and exits. Main thread; no CAF or LibTorch in this header.
#pragma once

#include "runtime/services.hpp"

#include <string>

namespace leap::runtime {

int cmd_train(services& svc, const std::string& out_dir, bool resume);

} // namespace leap::runtime
