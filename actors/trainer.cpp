#include "actors/trainer.hpp"

#include "messages/error_text.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace leap::actors {

namespace {

struct trainer_state {
  trainer_options opts;
  msg::gatekeeper_actor gatekeeper;
  msg::learner_actor learner;
  std::int64_t step = 0;
  std::int64_t admitted = 0;                 // groups admitted by this run
  std::uint64_t next_group = 1;
  std::map<int, std::set<int>> in_flight;    // epoch -> indices admitted, not yet trained on
  int cursor_epoch = 0;
  bool stopping = false, saving = false;
  run_end ending;                            // how the run ends once the final save is done
  msg::stage_usage last_usage;               // the gatekeeper's at the previous report
  std::uint64_t last_compile_retried = 0;    // the pools' retry counters at the previous report
  std::uint64_t last_execute_retried = 0;
  int reports_pending = 0;                   // step reports waiting for their utilisation query
  bool end_when_reported = false;            // the final save is done; end once none is pending
};

using trainer_ptr = msg::trainer_actor::stateful_pointer<trainer_state>;

// The next (epoch, index) neither trained on nor in flight.
std::pair<int, int> next_task(trainer_state& st) {
  const auto n = st.opts.tasks.size();
  st.cursor_epoch = std::max(st.cursor_epoch, st.opts.progress.epoch);
  for (;;) {
    auto order = epoch_order(n, st.opts.seed, st.cursor_epoch);
    // Looked up, not inserted: neither map gains an entry for an epoch it has nothing of.
    const auto d = st.opts.progress.consumed.find(st.cursor_epoch);
    const auto f = st.in_flight.find(st.cursor_epoch);
    for (std::size_t k = 0; k < n; ++k) {
      int idx = order[k];
      const bool done = d != st.opts.progress.consumed.end() && d->second.count(idx) > 0;
      const bool flying = f != st.in_flight.end() && f->second.count(idx) > 0;
      if (!done && !flying)
        return {st.cursor_epoch, idx};
    }
    ++st.cursor_epoch;
  }
}

void admit(trainer_ptr self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  const bool sync = st.opts.mode == msg::train_mode::sync;
  const std::int64_t B = st.opts.batch_groups;
  const std::int64_t learned = st.step - st.opts.start_step;
  const std::int64_t needed = (st.opts.steps - st.opts.start_step) * B;
  const std::int64_t bound = sync ? (learned + 1) * B : (st.opts.max_staleness + learned + 1) * B;
  bool any = false;
  while (st.admitted < std::min(bound, needed)) {
    auto [epoch, idx] = next_task(st);
    st.in_flight[epoch].insert(idx);
    msg::group_start gs{st.next_group++, st.opts.tasks[static_cast<std::size_t>(idx)], epoch, idx};
    self->send(st.gatekeeper, msg::group_atom_v, gs);
    ++st.admitted;
    any = true;
  }
  if (any && sync)
    self->send(st.gatekeeper, msg::flush_atom_v);
}

// Asks the learner for a checkpoint; with `final` the run ends with st.ending once it is done.
void save(trainer_ptr self, bool final) {
  auto& st = self->state;
  st.saving = true;
  auto done = [self, final](const result<msg::checkpoint_saved>& r) {
    auto& s = self->state;
    s.saving = false;
    if (s.opts.on_saved)
      s.opts.on_saved(r, final);
    if (final) {
      // A step reported before the save is in the checkpoint: its report is recorded first.
      if (s.reports_pending > 0)
        s.end_when_reported = true;
      else
        s.opts.on_done(s.ending);
    }
  };
  self->request(st.learner, caf::infinite, msg::save_atom_v,
                msg::save_request{st.opts.checkpoint_dir, st.opts.extra_json})
    .then([done](msg::checkpoint_saved& c) { done(result<msg::checkpoint_saved>(c)); },
          [self, done](caf::error& e) {
            done(make_error("the learner did not save: " + msg::error_text(e, self->system())));
          });
}

// Ends the run: a final checkpoint, then on_done (a save in progress ends it instead).
void stop(trainer_ptr self, run_end how) {
  auto& s = self->state;
  if (s.stopping)
    return;
  s.stopping = true;
  s.ending = std::move(how);
  if (!s.saving)
    save(self, true);
}

void bookkeep(trainer_ptr self, msg::step_report& r);

// The pools' retries since the previous report (on_infra), then the report's bookkeeping; a pool
// that does not answer counts nothing for this step.
void count_retries(trainer_ptr self, msg::step_report rep) {
  auto& s = self->state;
  auto done = [self](msg::step_report r, const std::uint64_t* compile, const std::uint64_t* execute) {
    auto& s = self->state;
    step_infra infra;
    if (compile) {
      infra.compile_retried = *compile - std::min(*compile, s.last_compile_retried);
      s.last_compile_retried = *compile;
    }
    if (execute) {
      infra.execute_retried = *execute - std::min(*execute, s.last_execute_retried);
      s.last_execute_retried = *execute;
    }
    --s.reports_pending;
    if (s.opts.on_infra)
      s.opts.on_infra(r.step, infra);
    bookkeep(self, r);
  };
  if (!s.opts.compilers || !s.opts.executors) {
    done(std::move(rep), nullptr, nullptr);
    return;
  }
  const auto wait = std::chrono::seconds(10);
  self->request(s.opts.compilers, wait, msg::stats_atom_v)
    .then(
      [self, rep, done, wait](msg::pool_stats& c) {
        const std::uint64_t compile = c.retried;
        self->request(self->state.opts.executors, wait, msg::stats_atom_v)
          .then([rep, done, compile](msg::pool_stats& e) { done(rep, &compile, &e.retried); },
                [rep, done, compile](caf::error&) { done(rep, &compile, nullptr); });
      },
      [rep, done](caf::error&) { done(rep, nullptr, nullptr); });
}

void bookkeep(trainer_ptr self, msg::step_report& r) {
  auto& s = self->state;
  if (s.opts.on_report)
    s.opts.on_report(r);
  if (s.stopping) {
    // Stopped while the usage was asked for: the stop's save ends the run, after this report.
    if (s.end_when_reported && s.reports_pending == 0) {
      s.end_when_reported = false;
      s.opts.on_done(s.ending);
    }
    return;
  }
  // The learner takes no step after one that spent the compile budget.
  bool last = s.step >= s.opts.steps || r.budget_spent;
  // Periodic checkpoints are the learner's (written before it reported the step); the last
  // step is saved here unless the learner just did.
  if (r.checkpoint != msg::checkpoint_state::not_due) {
    if (s.opts.on_saved) {
      if (r.checkpoint == msg::checkpoint_state::saved)
        s.opts.on_saved(result<msg::checkpoint_saved>(msg::checkpoint_saved{s.opts.checkpoint_dir, r.step}), last);
      else
        s.opts.on_saved(make_error(r.checkpoint_error), last);
    }
    if (last) {
      s.stopping = true;
      s.opts.on_done(run_end{});
    }
  } else if (last) {
    s.stopping = true;
    s.ending = run_end{};
    save(self, true);
  }
  if (!last)
    admit(self);
}

msg::trainer_actor::behavior_type trainer(trainer_ptr self, trainer_options opts,
                                          msg::gatekeeper_actor gk, msg::learner_actor learner) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.gatekeeper = std::move(gk);
  st.learner = std::move(learner);
  st.step = st.opts.start_step;
  st.cursor_epoch = st.opts.progress.epoch;
  self->send(st.learner, msg::subscribe_atom_v, caf::actor_cast<msg::trainer_actor>(self));
  if (st.step >= st.opts.steps) {
    st.stopping = true;
    st.opts.on_done(run_end{});
  } else {
    admit(self);
  }
  return {
    [self](msg::report_atom, msg::step_report& rep) {
      auto& s = self->state;
      // While stopping, a step the learner finished before it took the final save request is
      // still recorded: its weights are in that checkpoint (the save's answer comes after this
      // report, from the same learner, and the run ends only once every report is written).
      if (s.stopping && (rep.outcome == msg::step_outcome::failed || rep.step <= s.step))
        return;
      if (rep.outcome == msg::step_outcome::failed) {
        if (s.opts.on_report)
          s.opts.on_report(rep);
        stop(self, run_end{run_end::how::failed, rep.error});
        return;
      }
      s.step = rep.step;
      for (std::size_t i = 0; i < rep.epochs.size(); ++i) {
        // An epoch with nothing left in flight is forgotten (one entry per epoch would otherwise
        // stay for the whole run: with few tasks, a new epoch every step or two).
        if (auto f = s.in_flight.find(rep.epochs[i]); f != s.in_flight.end()) {
          f->second.erase(rep.indices[i]);
          if (f->second.empty())
            s.in_flight.erase(f);
        }
        s.opts.progress.mark(rep.epochs[i], rep.indices[i], s.opts.tasks.size());
      }
      // Stage utilisation over the step, from the gatekeeper's busy-time counters; then the
      // bookkeeping goes on whether or not it answers.
      ++s.reports_pending;
      self->request(s.gatekeeper, std::chrono::seconds(10), msg::stats_atom_v)
        .then(
          [self, rep](msg::stage_usage& now) mutable {
            auto& s = self->state;
            double dt = now.elapsed_seconds - s.last_usage.elapsed_seconds;
            if (dt > 0) {
              rep.util_generate = (now.generate - s.last_usage.generate) / dt;
              rep.util_compile = (now.compile - s.last_usage.compile) / dt;
              rep.util_execute = (now.execute - s.last_usage.execute) / dt;
            }
            s.last_usage = now;
            count_retries(self, std::move(rep));
          },
          [self, rep](caf::error&) mutable { count_retries(self, std::move(rep)); });
    },
    [self](msg::stop_atom) { stop(self, run_end{run_end::how::interrupted, {}}); },
  };
}

} // namespace

msg::trainer_actor spawn_trainer(caf::actor_system& sys, trainer_options opts,
                                 msg::gatekeeper_actor gatekeeper, msg::learner_actor learner) {
  return sys.spawn(trainer, std::move(opts), std::move(gatekeeper), std::move(learner));
}

} // namespace leap::actors
