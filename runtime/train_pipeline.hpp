// Runs the LEAP actor pipeline of `leap train`: spawns the compiler, executor and generator
// pools, the gatekeeper, judge, learner and trainer on one actor system, and blocks the calling
// (main) thread until the trainer reports the last step saved, or `stop` turns true (Ctrl-C:
// the trainer saves and ends). No CAF or LibTorch in this header.
#pragma once

#include "actors/task_progress.hpp"
#include "common/result.hpp"
#include "messages/train_messages.hpp"
#include "runtime/services.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace leap::runtime {

struct pipeline_setup {
  std::string start_checkpoint;   // the weights to start from (warm start, or resume checkpoint)
  bool resume = false;            // also restore the optimizer from start_checkpoint
  std::string reference_checkpoint; // the KL reference (the warm start)
  std::string checkpoint_out;     // where checkpoints go
  std::string tokenizer_path;
  std::int64_t start_step = 0;
  actors::task_progress progress;
  std::vector<std::string> tasks;
  std::string extra_json;         // saved with every checkpoint
  std::function<void(const msg::step_report&)> on_report; // on an actor thread
  std::function<void(const std::string& error, bool final)> on_saved;
  const std::atomic<bool>* stop = nullptr;
};

// "" when every step ran, "interrupted" after a stop; errors for what prevented the start.
result<std::string> run_pipeline(services& svc, const pipeline_setup& setup);

} // namespace leap::runtime
