#include "actors/judge.hpp"

#include "actors/group_scoring.hpp"

#include <caf/all.hpp>

namespace leap::actors {

namespace {

msg::judge_actor::behavior_type judge(msg::judge_actor::pointer self, algo::estimator_config cfg,
                                      msg::learner_actor learner) {
  return {
    [self, cfg, learner](msg::finished_atom, msg::group_result& g) {
      self->send(learner, msg::scored_atom_v, score_group(std::move(g), cfg));
    },
  };
}

} // namespace

msg::judge_actor spawn_judge(caf::actor_system& sys, algo::estimator_config cfg,
                             msg::learner_actor learner) {
  return sys.spawn(judge, cfg, std::move(learner));
}

} // namespace leap::actors
