#include "actors/learner.hpp"

#include "actors/batch_buffer.hpp"
#include "actors/group_scoring.hpp"
#include "actors/step_summary.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>

namespace leap::actors {

namespace {

struct learner_state {
  std::shared_ptr<policy::policy_model> model;
  learner_options opts;
  msg::weights_sink_actor sink;
  msg::trainer_actor subscriber;
  std::optional<batch_buffer> buffer;
  std::int64_t step = 0;
  bool failed = false; // a step failed: no further step
  std::int64_t compile_requests = 0; // spent by the steps learned, earlier segments included
  bool budget_spent = false;         // the compile budget is reached: no further step
};

// One learner step over the B groups of `groups`.
msg::step_report learn(learner_state& st, std::vector<msg::scored_group> groups) {
  auto t0 = std::chrono::steady_clock::now();
  auto progress = st.opts.progress; // committed only when the step succeeds
  msg::step_report rep = summarize_step(groups, progress, st.opts.task_count);
  std::vector<policy::rl_sequence> batch;
  std::int64_t oldest = st.step;
  for (auto& sg : groups) {
    auto& g = sg.group;
    for (std::size_t i = 0; i < g.trajectories.size(); ++i) {
      auto& tr = g.trajectories[i];
      if (!is_ranked(tr))
        continue;
      for (std::size_t j = 0; j < tr.turns.size(); ++j) {
        auto& t = tr.turns[j];
        if (t.completion.empty())
          continue;
        double adv = j < sg.advantages[i].size() ? sg.advantages[i][j] : 0.0;
        oldest = std::min(oldest, t.policy_version);
        batch.push_back({std::move(t.prompt), std::move(t.completion), std::move(t.logprobs), adv});
      }
    }
  }
  rep.max_lag = static_cast<double>(st.step - oldest);
  bool any_signal = false;
  for (auto& s : batch)
    any_signal = any_signal || s.advantage != 0.0;
  rep.outcome = any_signal ? msg::step_outcome::trained : msg::step_outcome::no_signal;
  if (any_signal) {
    auto r = st.model->grpo_step(batch, st.opts.rl);
    if (!r) {
      rep.outcome = msg::step_outcome::failed;
      rep.error = "learner step " + std::to_string(st.step + 1) + " failed: " + r.message();
      rep.step = st.step + 1;
      rep.policy_version = st.step;
      st.failed = true;
      return rep;
    }
    rep.loss = r->loss;
    rep.pg_loss = r->pg_loss;
    rep.kl = r->kl;
    rep.clip_fraction = r->clip_fraction;
    rep.grad_norm = r->grad_norm;
    rep.tokens = r->tokens;
    rep.sequences = r->sequences;
  }
  st.opts.progress = std::move(progress);
  ++st.step;
  rep.step = st.step;
  rep.policy_version = st.step;
  rep.learn_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// Saves the model, optimizer and trainer state to `dir`.
result<void> save(learner_state& st, const std::string& dir, const std::string& extra) {
  nlohmann::json j = nlohmann::json::object();
  try {
    if (!extra.empty())
      j = nlohmann::json::parse(extra);
  } catch (const std::exception& e) {
    return make_error(std::string("the trainer state is not JSON: ") + e.what());
  }
  j["progress"] = nlohmann::json::parse(progress_to_json(st.opts.progress));
  return st.model->save_with_state(dir, st.opts.tokenizer_json, st.step, st.step, j.dump());
}

using learner_actor_ptr = msg::learner_actor::stateful_pointer<learner_state>;

msg::learner_actor::behavior_type learner(learner_actor_ptr self,
                                          std::shared_ptr<policy::policy_model> model,
                                          learner_options opts, msg::weights_sink_actor sink) {
  auto& s = self->state;
  s.model = std::move(model);
  s.opts = std::move(opts);
  s.sink = std::move(sink);
  s.step = s.opts.start_step;
  s.compile_requests = s.opts.compile_requests_before;
  s.buffer.emplace(s.opts.batch_groups, s.opts.order);
  return {
    [self](msg::scored_atom, msg::scored_group& g) {
      auto& st = self->state;
      if (st.failed || st.budget_spent)
        return;
      st.buffer->push(std::move(g));
      while (!st.failed && !st.budget_spent) {
        auto take = st.buffer->pop();
        if (!take)
          break;
        auto rep = learn(st, std::move(*take));
        if (rep.outcome != msg::step_outcome::failed) {
          st.compile_requests += rep.compile_requests();
          if (st.opts.max_compile_requests > 0
              && st.compile_requests >= st.opts.max_compile_requests)
            st.budget_spent = rep.budget_spent = true;
          // A new policy version: every step is published (no-signal steps included, so
          // versions and steps stay equal). Without a sink no generator follows these weights
          // (stand-in generators).
          if (st.sink) {
            auto w = st.model->export_weights();
            if (w)
              self->send(st.sink, msg::weights_atom_v,
                         msg::weights_update{rep.policy_version, std::move(*w)});
            else
              std::fprintf(stderr, "leap: publishing weights failed: %s\n", w.message().c_str());
          }
          if (st.opts.checkpoint_every > 0 && st.step % st.opts.checkpoint_every == 0) {
            auto dir = st.opts.stage_by_step
                         ? st.opts.checkpoint_dir + "." + std::to_string(st.step)
                         : st.opts.checkpoint_dir;
            auto saved = save(st, dir, st.opts.extra_json);
            rep.checkpoint = saved ? msg::checkpoint_state::saved : msg::checkpoint_state::failed;
            if (!saved)
              rep.checkpoint_error = saved.message();
          }
        }
        if (st.subscriber)
          self->send(st.subscriber, msg::report_atom_v, std::move(rep));
      }
    },
    [self](msg::subscribe_atom, msg::trainer_actor& who) { self->state.subscriber = who; },
    [self](msg::save_atom, msg::save_request& req) -> caf::result<msg::checkpoint_saved> {
      auto r = save(self->state, req.dir, req.extra_json);
      if (!r)
        return caf::make_error(caf::sec::runtime_error, r.message());
      return msg::checkpoint_saved{req.dir, self->state.step};
    },
  };
}

} // namespace

msg::learner_actor spawn_learner(caf::actor_system& sys, std::shared_ptr<policy::policy_model> model,
                                 learner_options opts, msg::weights_sink_actor weights_sink) {
  return sys.spawn<caf::detached>(learner, std::move(model), std::move(opts),
                                  std::move(weights_sink));
}

} // namespace leap::actors
