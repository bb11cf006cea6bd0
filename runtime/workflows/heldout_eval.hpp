// Held-out evaluation during training (train.eval_every): a fixed sample of held-out tasks (the
// eval split's bundled tasks and each kind of generated held-out task, train.eval_tasks of each,
// drawn under train.eval_seed) evaluated from the checkpoint of a training step with [eval]'s
// group size, turns and sampling settings, on a process runner, compiler and executor of its own
// (a build cache apart from training's, so training's compile and cache-hit counts are those of
// a run without it; its pipeline's shutdown leaves training's processes alone). Its
// figures go on that step's metrics.jsonl row (runtime/workflows/metrics_writer.hpp) and the live
// display. Called by the train workflow from its report callback (one evaluation at a time; the
// callback blocks until it is done); no CAF or LibTorch in this header.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace leap::runtime {

// One held-out set's figures: "eval" (the eval split's bundled tasks), "generated_instance",
// "generated_composition".
struct heldout_set_figures {
  std::string name;
  int tasks = 0;
  long long attempts = 0;       // attempts (G per task), ranked or not
  double acc_at_1 = 0, acc_at_3 = 0;
};

struct heldout_figures {
  int tasks = 0;
  long long attempts = 0;
  double acc_at_1 = 0, acc_at_3 = 0; // over every sampled task's group
  long long compiles = 0;       // real compilations (cache misses) of the evaluation
  long long cache_hits = 0;     // its compile requests answered by its build cache
  double seconds = 0;           // wall-clock of the evaluation
  std::vector<heldout_set_figures> sets;

  // Its compile requests (build-cache hits included), counted apart from training's.
  long long compile_requests() const { return compiles + cache_hits; }
};

// The sampled held-out tasks, set by set (sorted by set name, then the draw's order): the same for
// the same catalog, train.eval_tasks and train.eval_seed. An error when the catalog holds no
// eval-split task.
result<std::vector<std::string>> heldout_sample(const services& svc);

// The held-out set a task is reported in.
std::string heldout_set_of(const std::string& task);

// Evaluates the checkpoint in `checkpoint_dir` on `names` (from heldout_sample).
result<heldout_figures> evaluate_heldout(const services& svc, const std::string& checkpoint_dir,
                                         const std::vector<std::string>& names);

// The live display's line: "      held-out: acc@1 0.250 acc@3 0.500 (eval 2 tasks ..., 16 attempts, 12 compiles, 8.1 s)".
std::string heldout_line(const heldout_figures& h);

} // namespace leap::runtime
