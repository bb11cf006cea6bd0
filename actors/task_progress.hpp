// Which tasks of which epoch the learner has trained on: what a resumed run must not redo.
// Kept by the trainer (to draw the next task) and by the learner (saved with its weights, so a
// checkpoint's progress always matches its model). Plain value type; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace leap::actors {

struct task_progress {
  std::map<int, std::set<int>> consumed; // epoch -> task indices (into the task list)
  int epoch = 0;                         // the earliest epoch not fully consumed

  void mark(int epoch, int index, std::size_t tasks);
};

// The epoch's order of task indices: a seeded shuffle.
std::vector<int> epoch_order(std::size_t tasks, std::uint64_t seed, int epoch);
std::string progress_to_json(const task_progress& p);
bool progress_from_json(const std::string& text, task_progress& out);

} // namespace leap::actors
