// The train workflow's policy (runtime/workflows/train_run.hpp), loaded from the start
// checkpoint: weights, the learner's optimiser on resume, the KL reference, the generators'
// replicas. Internal to the train workflow: only runtime/workflows/train_run.cpp includes it.
// Called on the main thread, before the pipeline starts. No CAF or LibTorch in this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace leap::policy {
class tokenizer;
class policy_model;
class generation_engine;
} // namespace leap::policy

namespace leap::runtime::train_detail {

// The run's policy: the start weights with the learner's optimiser (restored on resume), the
// KL reference, and the generators' replicas.
struct run_policy {
  std::shared_ptr<const policy::tokenizer> tok;
  // tokenizer.json's text as loaded, copied into each checkpoint: the start directory itself may
  // be replaced while the run goes on (a resumed run starts from the checkpoint it promotes into).
  std::string tokenizer_json;
  std::shared_ptr<policy::policy_model> model;
  std::shared_ptr<policy::generation_engine> engine;
};

// Loads the run's policy from `start`; on `resume` the optimiser state too (a damaged one stops
// the resume); with a KL coefficient, `reference` as the frozen reference.
result<run_policy> load_policy(const services& svc, const std::string& start, bool resume,
                               const std::string& reference, std::int64_t start_step);

} // namespace leap::runtime::train_detail
