// The corpus-labelling workflow (`leap corpus`, and the warm start's corpus): labels the
// generated corpus (policy/corpus) through the real environment and writes it: every variant is
// compiled and run by the evaluator (batched; verdicts cached on disk by content under
// <cache_dir>/corpus-labels, runtime/workflows/label_cache.hpp), and its REAL verdict (status,
// reason, feedback) is kept. Only variants whose real status is `correct` become SFT targets or
// repair fixes. Outputs, each written atomically: <out>/corpus.jsonl (one JSON object per line)
// and <out>/corpus_stats.json. Call from one non-actor thread (the CLI's main thread or a test);
// blocking.
#pragma once

#include "common/result.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace leap::runtime {

struct corpus_options {
  std::string out_dir;
  std::uint64_t seed = 1;
  std::vector<std::string> tasks;   // empty = every train-split task; eval-split ones are refused
  std::string tasks_key = "--task"; // where `tasks` came from, for error messages
  int bugs_per_kind = 1;            // buggy variants per (task, bug kind)
  int generated_bugs_per_kind = 1;  // the same for generated tasks
  // Generated tasks that get those bugs (sft.generated_bug_tasks); empty = every generated task.
  std::vector<std::string> generated_bug_tasks;
  // sft.generated_labels: construction = a generated task's reference target is correct without a
  // run (it is the reference itself, less comments and unused helpers); bugs still run.
  bool generated_references_by_construction = false;
  int solutions_per_task = 0;       // correct strategies per task (sft.solutions_per_task); 0 = all
  // Bug kinds to inject, by name (sft.bug_kinds); empty = every kind the generator has.
  std::vector<std::string> bug_kinds;
  bool reuse_labels = true;         // read/write the verdict cache under <cache_dir>/corpus-labels
  std::size_t batch = 48;           // variants per evaluator call
  // Called after every batch with (labelled so far, total); may print.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct corpus_summary {
  std::size_t variants = 0, solutions = 0, buggy = 0, repairs = 0;
  std::size_t targets = 0;                 // solutions whose real status is correct
  std::size_t failed_solutions = 0;        // "correct" strategies the environment rejected
  std::size_t benign_bugs = 0;             // buggy variants that nevertheless passed
  std::size_t emulation_unsupported = 0;
  std::size_t label_cache_hits = 0;
  std::size_t labels_by_construction = 0; // generated references not run (sft.generated_labels)
  std::size_t leap_errors = 0;             // evaluator failures (no verdict): not written
  double seconds = 0;
  std::string corpus_path, stats_path;
};

// The corpus's shape from [sft]: bugs per kind (bundled and generated), strategies per task and
// bug kinds; out_dir, seed and tasks are left to the caller.
corpus_options corpus_options_of(const config::sft_section& sft);

// The JSONL schema, one object per line:
//   kind "solution" | "buggy": task, family, kind, variant, strategy, [bug, origin], code,
//     status, reason, feedback, emulation_unsupported, target (true = status correct and a
//     solution: an SFT turn-1 target), label_cached
//   kind "repair" (a buggy variant whose real status is not correct, paired with a variant of the
//     same task that really passed, preferring the one it was derived from): task, family, kind,
//     variant (the buggy one), bug, prompt (task description + signature), buggy_code, status
//     and feedback (the buggy run's real verdict), fixed_variant, fixed_code, code (= fixed_code)
result<corpus_summary> build_corpus(services& svc, evaluator& ev, const corpus_options& opt);

} // namespace leap::runtime
