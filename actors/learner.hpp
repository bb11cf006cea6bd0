// The GRPO learner: collects scored groups; every B groups (in admission or finish order,
// actors/batch_buffer.hpp) it takes one learner step (one or more optimizer steps) of the
// token-level clipped surrogate (policy::policy_model::grpo_step: clip-higher, optional k3 KL,
// token-mean or Dr.GRPO aggregation, gradient-norm clip, AdamW) over the ranked attempts,
// publishes the new policy version to the generators' weights sink and reports the step to its
// subscriber (the trainer). A step whose optimizer step fails is reported as failed with the
// reason (no new version, its tasks not marked done) and the learner takes no further step: the
// trainer saves and ends the run. With a compile budget (max_compile_requests) the step that
// brings the run's compile requests to it is the last the learner takes: its report says so
// (budget_spent) and batches that complete later are not learned, so an async run, whose next
// step is usually already generated, stops exactly there. A detached actor: its optimizer steps
// block its own thread, never CAF's scheduler. Spawned by the pipeline assembly.
#pragma once

#include "actors/batch_buffer.hpp"
#include "actors/task_progress.hpp"
#include "messages/interfaces.hpp"
#include "policy/policy_model.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace leap::actors {

struct learner_options {
  int batch_groups = 4;
  batch_order order = batch_order::finish; // which B groups make a step (batch_buffer.hpp)
  policy::rl_options rl;
  std::int64_t start_step = 0;     // steps already taken (resume)
  // tokenizer.json's text, written into every checkpoint. The text, not a path: a resumed run
  // starts from its own checkpoint directory, which each promotion replaces while the run goes on.
  std::string tokenizer_json;
  task_progress progress;          // tasks trained on so far (saved as "progress")
  std::size_t task_count = 0;
  // Periodic checkpoints, written right after the step and before its report, so a step that
  // was reported is on disk (a kill loses at most the steps since the last multiple).
  int checkpoint_every = 0;        // 0 = only when asked (save_atom)
  std::string checkpoint_dir;
  // Periodic checkpoints go to `checkpoint_dir + "." + step` instead (`leap train` promotes each
  // into place once that step's metrics line is written; the learner may run a step ahead).
  bool stage_by_step = false;
  std::string extra_json;          // saved with every checkpoint (a JSON object)
  // train.max_compiles: the compile requests (compiles + build-cache hits, all turns) after which
  // no further step is taken, counting compile_requests_before (earlier segments of a resumed
  // run). 0 = no budget.
  std::int64_t max_compile_requests = 0;
  std::int64_t compile_requests_before = 0;
};

msg::learner_actor spawn_learner(caf::actor_system& sys, std::shared_ptr<policy::policy_model> model,
                                 learner_options opts, msg::weights_sink_actor weights_sink);

} // namespace leap::actors
