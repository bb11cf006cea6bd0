// The sampling weight of a warm-start corpus task's examples (turn-1 and repair alike), from
// sft.bundled_weight (tasks written by hand, tasks/) and sft.generated_family_weights (generated
// tasks by family). Built once per `leap pretrain` from a config that was checked when loaded;
// immutable after construction, so any thread may call of().
#pragma once

#include "runtime/config/config.hpp"

#include <map>
#include <string>

namespace leap::runtime {

class sft_task_weights {
public:
  explicit sft_task_weights(const config::sft_section& sft);
  // sft.bundled_weight for a bundled task; the weight its family is given for a generated task
  // (gen_<family>_...), 1 for a family not listed.
  double of(const std::string& task) const;

private:
  double bundled_;
  std::map<std::string, double> by_family_; // family tag -> weight
};

} // namespace leap::runtime
