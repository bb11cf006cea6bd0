// The tournament judge: scores each finished group with the configured advantage estimator
// (LEAP's rank tournament, or the grpo / drgrpo / trloo / discounted baselines, algo/) and sends
// the scored group to the learner. Cancelled stragglers of a pruned group have no verdict: they
// take no part and get no advantage. Stateless apart from its configuration.
#pragma once

#include "algo/advantages.hpp"

#include <caf/fwd.hpp>

namespace leap::actors {

// Takes (finished_atom, group_result); sends (scored_atom, scored_group) to `learner`.
caf::actor spawn_judge(caf::actor_system& sys, algo::estimator_config cfg, caf::actor learner);

} // namespace leap::actors
