#include "actors/trainer.hpp"

#include "messages/interfaces.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace leap::actors {

namespace {

struct trainer_state {
  trainer_options opts;
  caf::actor gatekeeper, learner;
  std::int64_t step = 0;
  std::int64_t admitted = 0;                 // groups admitted by this run
  std::uint64_t next_group = 1;
  std::map<int, std::set<int>> in_flight;    // epoch -> indices admitted, not yet trained on
  int cursor_epoch = 0;
  bool stopping = false, saving = false;
  std::vector<double> last_stats{0, 0, 0, 0}; // the gatekeeper's at the previous report
};

using trainer_actor = caf::stateful_actor<trainer_state>;

// The next (epoch, index) neither trained on nor in flight.
std::pair<int, int> next_task(trainer_state& st) {
  const auto n = st.opts.tasks.size();
  st.cursor_epoch = std::max(st.cursor_epoch, st.opts.progress.epoch);
  for (;;) {
    auto order = epoch_order(n, st.opts.seed, st.cursor_epoch);
    auto& done = st.opts.progress.consumed[st.cursor_epoch];
    auto& fly = st.in_flight[st.cursor_epoch];
    for (std::size_t k = 0; k < n; ++k) {
      int idx = order[k];
      if (!done.count(idx) && !fly.count(idx))
        return {st.cursor_epoch, idx};
    }
    ++st.cursor_epoch;
  }
}

void admit(trainer_actor* self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  const std::int64_t B = st.opts.batch_groups;
  const std::int64_t learned = st.step - st.opts.start_step;
  const std::int64_t needed = (st.opts.steps - st.opts.start_step) * B;
  const std::int64_t bound = st.opts.sync ? (learned + 1) * B
                                          : (st.opts.max_staleness + learned + 1) * B;
  bool any = false;
  while (st.admitted < std::min(bound, needed)) {
    auto [epoch, idx] = next_task(st);
    st.in_flight[epoch].insert(idx);
    msg::group_start gs{st.next_group++, st.opts.tasks[static_cast<std::size_t>(idx)], epoch, idx};
    self->send(st.gatekeeper, msg::group_atom_v, gs);
    ++st.admitted;
    any = true;
  }
  if (any && st.opts.sync)
    self->send(st.gatekeeper, msg::flush_atom_v);
}

void save(trainer_actor* self, bool final) {
  auto& st = self->state;
  st.saving = true;
  self->request(st.learner, caf::infinite, msg::save_atom_v, st.opts.checkpoint_dir, st.opts.extra_json)
    .then(
      [self, final](const std::string& err) {
        auto& s = self->state;
        s.saving = false;
        if (s.opts.on_saved)
          s.opts.on_saved(err, final);
        if (final || s.stopping)
          s.opts.on_done(s.stopping ? "interrupted" : "");
      },
      [self, final](caf::error& e) {
        auto& s = self->state;
        s.saving = false;
        if (s.opts.on_saved)
          s.opts.on_saved("the learner did not save: " + caf::to_string(e), final);
        if (final || s.stopping)
          s.opts.on_done(s.stopping ? "interrupted" : "");
      });
}

caf::behavior trainer(trainer_actor* self, trainer_options opts, caf::actor gk, caf::actor learner) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.gatekeeper = std::move(gk);
  st.learner = std::move(learner);
  st.step = st.opts.start_step;
  st.cursor_epoch = st.opts.progress.epoch;
  self->send(st.learner, msg::report_atom_v, caf::actor_cast<caf::actor>(self));
  if (st.step >= st.opts.steps) {
    st.opts.on_done("");
  } else {
    admit(self);
  }
  return {
    [self](msg::report_atom, msg::step_report& rep) {
      auto& s = self->state;
      if (s.stopping)
        return;
      s.step = rep.step;
      for (std::size_t i = 0; i < rep.epochs.size(); ++i) {
        s.in_flight[rep.epochs[i]].erase(rep.indices[i]);
        s.opts.progress.mark(rep.epochs[i], rep.indices[i], s.opts.tasks.size());
      }
      // Stage utilisation over the step, from the gatekeeper's busy-time counters; then the
      // bookkeeping goes on whether or not it answers.
      auto finish = [self](msg::step_report& r) {
        auto& s = self->state;
        if (s.opts.on_report)
          s.opts.on_report(r);
        bool last = s.step >= s.opts.steps;
        // Periodic checkpoints are the learner's (written before it reported the step); the
        // last step is saved here unless the learner just did.
        if (r.checkpointed) {
          if (s.opts.on_saved)
            s.opts.on_saved(r.checkpoint_error, last);
          if (last)
            s.opts.on_done("");
        } else if (last) {
          save(self, true);
        }
        if (!last)
          admit(self);
      };
      self->request(s.gatekeeper, std::chrono::seconds(10), msg::stats_atom_v)
        .then(
          [self, rep, finish](std::vector<double>& now) mutable {
            auto& s = self->state;
            if (now.size() == 4 && s.last_stats.size() == 4) {
              double dt = now[0] - s.last_stats[0];
              if (dt > 0) {
                rep.util_generate = (now[1] - s.last_stats[1]) / dt;
                rep.util_compile = (now[2] - s.last_stats[2]) / dt;
                rep.util_execute = (now[3] - s.last_stats[3]) / dt;
              }
              s.last_stats = now;
            }
            finish(rep);
          },
          [rep, finish](caf::error&) mutable { finish(rep); });
    },
    [self](msg::stop_atom) {
      auto& s = self->state;
      if (s.stopping)
        return;
      s.stopping = true;
      if (!s.saving)
        save(self, true); // else the save in progress ends the run
    },
  };
}

} // namespace

caf::actor spawn_trainer(caf::actor_system& sys, trainer_options opts, caf::actor gatekeeper,
                         caf::actor learner) {
  return sys.spawn(trainer, std::move(opts), std::move(gatekeeper), std::move(learner));
}

} // namespace leap::actors
