// `leap train`'s checkpoints (runtime/commands/train.hpp): whether a directory holds one, the
// staged ones a killed run left, the step a checkpoint was saved at, and the run's policy loaded
// from the start checkpoint (weights, the learner's optimiser on resume, the KL reference, the
// generators' replicas). Internal to the train command: only runtime/commands/train*.cpp include
// it. Called on the main thread, before the pipeline starts or after it stopped.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace leap::policy {
class tokenizer;
class policy_model;
class generation_engine;
} // namespace leap::policy

namespace leap::runtime::train_detail {

// A directory with a model's config.json and weights.
bool is_checkpoint(const std::string& dir);

// Removes `<base>.<step>` directories: checkpoints the learner staged that a killed run never
// promoted (the promoted one is `checkpoint` itself).
void remove_staged(const std::string& base);

// The step of the checkpoint in `ck_dir`, if one is there and readable.
std::optional<long long> read_trainer_step(const std::string& ck_dir);

// The run's policy: the start weights with the learner's optimiser (restored on resume), the
// KL reference, and the generators' replicas.
struct run_policy {
  std::shared_ptr<const policy::tokenizer> tok;
  std::shared_ptr<policy::policy_model> model;
  std::shared_ptr<policy::generation_engine> engine;
};

// Loads the run's policy from `start`; on `resume` the optimiser state too (a damaged one stops
// the resume); with a KL coefficient, `reference` as the frozen reference.
result<run_policy> load_policy(const services& svc, const std::string& start, bool resume,
                               const std::string& reference, std::int64_t start_step);

} // namespace leap::runtime::train_detail
