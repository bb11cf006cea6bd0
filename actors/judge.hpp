// The tournament judge: scores each finished group with the configured advantage estimator
// (LEAP's rank tournament, or the grpo / drgrpo / trloo / discounted baselines; the arithmetic is
// actors/group_scoring.hpp) and sends the scored group to the learner. Attempts that are not
// ranked (dropped, cancelled, unsupported) take no part and get no advantage. Stateless apart
// from its configuration. Spawned by the pipeline assembly.
#pragma once

#include "algo/advantages.hpp"
#include "messages/interfaces.hpp"

#include <caf/fwd.hpp>

namespace leap::actors {

msg::judge_actor spawn_judge(caf::actor_system& sys, algo::estimator_config cfg,
                             msg::learner_actor learner);

} // namespace leap::actors
