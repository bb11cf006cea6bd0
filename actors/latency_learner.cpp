#include "actors/latency_learner.hpp"

#include "actors/batch_buffer.hpp"
#include "actors/step_summary.hpp"
#include "messages/interfaces.hpp"

#include <caf/all.hpp>

#include <optional>

namespace leap::actors {

namespace {

struct latency_learner_state {
  latency_learner_options opts;
  caf::actor subscriber;
  std::optional<batch_buffer> buffer;
  task_progress progress;
  std::int64_t step = 0;
  bool updating = false;
  msg::step_report pending;
  std::chrono::steady_clock::time_point began;
};

using learner_actor = caf::stateful_actor<latency_learner_state>;

void maybe_update(learner_actor* self) {
  auto& st = self->state;
  if (st.updating)
    return;
  auto take = st.buffer->pop();
  if (!take)
    return;
  st.pending = summarize_step(*take, st.progress, st.opts.task_count);
  st.updating = true;
  st.began = std::chrono::steady_clock::now();
  self->delayed_send(self, st.opts.update, msg::done_atom_v, st.step + 1);
}

caf::behavior latency_learner(learner_actor* self, latency_learner_options opts) {
  self->state.opts = std::move(opts);
  self->state.buffer.emplace(self->state.opts.batch_groups, self->state.opts.order);
  return {
    [self](msg::scored_atom, msg::scored_group& g) {
      self->state.buffer->push(std::move(g));
      maybe_update(self);
    },
    [self](msg::done_atom, std::int64_t step) {
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
      rep.learn_seconds = std::chrono::duration<double>(now - st.began).count();
      st.updating = false;
      if (st.subscriber)
        self->send(st.subscriber, msg::report_atom_v, std::move(rep));
      maybe_update(self);
    },
    [self](msg::report_atom, caf::actor& who) { self->state.subscriber = who; },
    [](msg::save_atom, std::string&, std::string&) -> std::string { return ""; },
  };
}

} // namespace

caf::actor spawn_latency_learner(caf::actor_system& sys, latency_learner_options opts) {
  return sys.spawn(latency_learner, std::move(opts));
}

} // namespace leap::actors
