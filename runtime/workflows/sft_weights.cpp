// sft_task_weights: see sft_weights.hpp.
#include "runtime/workflows/sft_weights.hpp"

#include "env/taskgen/generator.hpp"

namespace leap::runtime {

sft_task_weights::sft_task_weights(const config::sft_section& sft) : bundled_(sft.bundled_weight) {
  for (const auto& e : sft.generated_family_weights)
    if (auto fw = config::parse_family_weight(e)) // checked when the config was loaded
      by_family_[fw->family] = fw->weight;
}

double sft_task_weights::of(const std::string& task) const {
  auto f = taskgen::family_of(task);
  if (!f) // no generated task's name: a bundled one
    return bundled_;
  auto it = by_family_.find(taskgen::tag(*f));
  return it == by_family_.end() ? 1.0 : it->second;
}

} // namespace leap::runtime
