// A training run's directory (`leap train --out DIR`): one run per directory (a lock held as long
// as the object lives, taken before anything in it is read or truncated), the paths of its files
// (checkpoint/, metrics.jsonl, groups.jsonl, report.html), resuming from its checkpoint (the
// step, tasks and task progress recorded with it; the JSONL logs cut back to that step, a line cut
// by a kill dropped with a warning), a fresh start (logs of a run that saved nothing removed),
// and the learner's staged checkpoints (DIR/checkpoint.staged.<step>), promoted to checkpoint/
// once that step's metrics line is written so that a kill never leaves the checkpoint ahead of
// metrics.jsonl. Used by the train workflow on its main thread; promote() also from the trainer's
// report callback (one at a time). No CAF, no LibTorch.
#pragma once

#include "actors/task_progress.hpp"
#include "common/dir_lock.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace leap::runtime {

struct jsonl_repair {
  std::size_t kept = 0;
  std::size_t after_step = 0; // lines of steps after the resumed one (redone by the resume)
  std::size_t damaged = 0;    // lines that are not a JSON object with an integer "step"
  std::optional<std::string> warning; // when damaged lines were dropped: names the file
};
// Keeps the lines of a JSONL file whose "step" is at most `step`; rewrites it atomically.
result<jsonl_repair> truncate_jsonl(const std::string& path, std::int64_t step);

// What a run's checkpoint says about where to continue.
struct resume_point {
  std::int64_t step = 0;
  actors::task_progress progress;
};

class run_dir {
public:
  // Creates `dir` and locks it for `who` ("leap train"). An error names the directory (and the
  // PID of the process that holds it).
  static result<run_dir> open(const std::string& dir, const std::string& who);

  // A directory with a model's config.json and weights.
  static bool is_checkpoint(const std::string& dir);

  const std::string& path() const { return dir_; }
  std::string checkpoint_dir() const { return dir_ + "/checkpoint"; }
  std::string metrics_path() const { return dir_ + "/metrics.jsonl"; }
  std::string groups_path() const { return dir_ + "/groups.jsonl"; }
  std::string report_path() const { return dir_ + "/report.html"; }
  // The base name the learner stages its periodic checkpoints under: `<base>.<step>`.
  std::string staged_base() const { return checkpoint_dir() + ".staged"; }

  bool has_checkpoint() const { return is_checkpoint(checkpoint_dir()); }

  // The checkpoint's step, trained tasks and progress (trainer_state.json). An error when it was
  // trained on other tasks than `tasks`, or the file is damaged; `warn` hears of a task suite
  // that changed since (`suite_hash` is today's).
  result<resume_point> read_resume_point(const std::vector<std::string>& tasks,
                                         const std::string& suite_hash,
                                         const std::function<void(const std::string&)>& warn) const;

  // metrics.jsonl and groups.jsonl cut back to `step` (a resumed run writes later steps again);
  // `warn` hears of damaged lines dropped.
  result<void> truncate_logs(std::int64_t step,
                             const std::function<void(const std::string&)>& warn) const;

  // A fresh start in a directory without a checkpoint: the logs of a run that ended before its
  // first checkpoint are removed. Returns the paths of those it removed.
  std::vector<std::string> remove_logs() const;

  // Removes the staged checkpoints a killed run never promoted.
  void remove_staged() const;
  // Promotes the checkpoint staged for `step` to checkpoint/.
  result<void> promote(std::int64_t step) const;
  // The step of the checkpoint in checkpoint/, if one is there and readable.
  std::optional<long long> checkpoint_step() const;

private:
  run_dir(std::string dir, dir_lock lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  std::string dir_;
  dir_lock lock_;
};

} // namespace leap::runtime
