#include "actors/eval_collector.hpp"

#include <caf/all.hpp>

namespace leap::actors {

namespace {

struct collector_state {
  eval_collector_options opts;
  std::vector<msg::group_result> groups;
};

msg::judge_actor::behavior_type collector(msg::judge_actor::stateful_pointer<collector_state> self,
                                          eval_collector_options opts) {
  self->state.opts = std::move(opts);
  if (self->state.opts.expected == 0 && self->state.opts.on_done)
    self->state.opts.on_done({});
  return {
    [self](msg::finished_atom, msg::group_result& g) {
      auto& st = self->state;
      if (st.opts.on_group)
        st.opts.on_group(g);
      st.groups.push_back(std::move(g));
      if (st.groups.size() == st.opts.expected && st.opts.on_done)
        st.opts.on_done(std::move(st.groups));
    },
  };
}

} // namespace

msg::judge_actor spawn_eval_collector(caf::actor_system& sys, eval_collector_options opts) {
  return sys.spawn(collector, std::move(opts));
}

} // namespace leap::actors
