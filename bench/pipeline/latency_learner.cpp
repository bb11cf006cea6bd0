#include "bench/pipeline/latency_learner.hpp"

#include "actors/batch_buffer.hpp"
#include "actors/step_summary.hpp"

#include <caf/all.hpp>

#include <optional>

namespace leap::bench {

namespace {

struct latency_learner_state {
  latency_learner_options opts;
  msg::trainer_actor subscriber;
  std::optional<actors::batch_buffer> buffer;
  actors::task_progress progress;
  std::int64_t step = 0;
  bool updating = false;
  msg::step_report pending;
  std::chrono::steady_clock::time_point began;
};

using learner_ptr = msg::learner_actor::stateful_pointer<latency_learner_state>;

void maybe_update(learner_ptr self) {
  auto& st = self->state;
  if (st.updating)
    return;
  auto take = st.buffer->pop();
  if (!take)
    return;
  st.pending = actors::summarize_step(*take, st.progress, st.opts.task_count);
  st.updating = true;
  st.began = std::chrono::steady_clock::now();
  // The update's end: a private message to itself (outside the typed interface).
  caf::delayed_anon_send(caf::actor_cast<caf::actor>(self), st.opts.update, msg::done_atom_v,
                     st.step + 1);
}

msg::learner_actor::behavior_type latency_learner(learner_ptr self, latency_learner_options opts) {
  self->state.opts = std::move(opts);
  self->state.buffer.emplace(self->state.opts.batch_groups, self->state.opts.order);
  // The end of an update: a private message, outside the typed interface.
  self->set_default_handler([self](caf::scheduled_actor*, caf::message_view& x) -> caf::result<caf::message> {
    auto msg = x.move_content_to_message();
    return msg.apply([self](msg::done_atom, std::int64_t step) {
      auto& st = self->state;
      auto now = std::chrono::steady_clock::now();
      st.step = step;
      if (st.opts.policy_version)
        st.opts.policy_version->store(step);
      if (st.opts.on_update)
        st.opts.on_update(st.began, now);
      auto rep = std::move(st.pending);
      rep.step = step;
      rep.policy_version = step;
      rep.outcome = msg::step_outcome::trained;
      rep.learn_seconds = std::chrono::duration<double>(now - st.began).count();
      st.updating = false;
      if (st.subscriber)
        self->send(st.subscriber, msg::report_atom_v, std::move(rep));
      maybe_update(self);
    }) ? caf::result<caf::message>(caf::message{})
       : caf::result<caf::message>(caf::sec::unexpected_message);
  });
  return {
    [self](msg::scored_atom, msg::scored_group& g) {
      self->state.buffer->push(std::move(g));
      maybe_update(self);
    },
    [self](msg::subscribe_atom, msg::trainer_actor& who) { self->state.subscriber = who; },
    [self](msg::save_atom, msg::save_request& req) -> msg::checkpoint_saved {
      return {req.dir, self->state.step};
    },
  };
}

} // namespace

msg::learner_actor spawn_latency_learner(caf::actor_system& sys, latency_learner_options opts) {
  return sys.spawn(latency_learner, std::move(opts));
}

} // namespace leap::bench
