#include "actors/learner.hpp"

#include "actors/batch_buffer.hpp"
#include "actors/step_summary.hpp"
#include "messages/interfaces.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>

namespace leap::actors {

namespace {

struct learner_state {
  std::shared_ptr<policy::policy_model> model;
  learner_options opts;
  caf::actor sink, subscriber;
  std::optional<batch_buffer> buffer;
  std::int64_t step = 0;
};

msg::step_report learn(learner_state& st, std::vector<msg::scored_group> groups) {
  auto t0 = std::chrono::steady_clock::now();
  msg::step_report rep = summarize_step(groups, st.opts.progress, st.opts.task_count);
  std::vector<policy::rl_sequence> batch;
  std::int64_t oldest = st.step;
  for (auto& sg : groups) {
    auto& g = sg.group;
    for (std::size_t i = 0; i < g.trajectories.size(); ++i) {
      auto& tr = g.trajectories[i];
      if (tr.cancelled || tr.turns.empty())
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
  if (any_signal) {
    auto r = st.model->grpo_step(batch, st.opts.rl);
    if (!r) {
      std::fprintf(stderr, "leap: learner step %lld failed: %s\n",
                   static_cast<long long>(st.step + 1), r.message().c_str());
    } else {
      rep.loss = r->loss;
      rep.pg_loss = r->pg_loss;
      rep.kl = r->kl;
      rep.clip_fraction = r->clip_fraction;
      rep.grad_norm = r->grad_norm;
      rep.tokens = r->tokens;
      rep.sequences = r->sequences;
    }
  }
  ++st.step;
  rep.step = st.step;
  rep.policy_version = st.step;
  rep.learn_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// Saves the model, optimizer and trainer state to `dir`; "" on success, else why not.
std::string save(learner_state& st, const std::string& dir, const std::string& extra) {
  nlohmann::json j = nlohmann::json::object();
  try {
    if (!extra.empty())
      j = nlohmann::json::parse(extra);
  } catch (const std::exception& e) {
    return std::string("the trainer state is not JSON: ") + e.what();
  }
  j["progress"] = nlohmann::json::parse(progress_to_json(st.opts.progress));
  auto r = st.model->save_with_state(dir, st.opts.tokenizer_json_path, st.step, st.step, j.dump());
  return r ? std::string() : r.message();
}

caf::behavior learner(caf::stateful_actor<learner_state>* self,
                      std::shared_ptr<policy::policy_model> model, learner_options opts,
                      caf::actor sink) {
  auto& s = self->state;
  s.model = std::move(model);
  s.opts = std::move(opts);
  s.sink = std::move(sink);
  s.step = s.opts.start_step;
  s.buffer.emplace(s.opts.batch_groups, s.opts.order);
  return {
    [self](msg::scored_atom, msg::scored_group& g) {
      auto& st = self->state;
      st.buffer->push(std::move(g));
      while (auto take = st.buffer->pop()) {
        auto rep = learn(st, std::move(*take));
        // A new policy version: every trained step is published (no-signal steps included, so
        // versions and steps stay equal).
        auto w = st.model->export_weights();
        if (w)
          self->send(st.sink, msg::weights_atom_v, msg::weights_update{rep.policy_version, std::move(*w)});
        else
          std::fprintf(stderr, "leap: publishing weights failed: %s\n", w.message().c_str());
        if (st.opts.checkpoint_every > 0 && st.step % st.opts.checkpoint_every == 0) {
          rep.checkpoint_error = save(st, st.opts.checkpoint_dir, st.opts.extra_json);
          rep.checkpointed = true;
        }
        if (st.subscriber)
          self->send(st.subscriber, msg::report_atom_v, std::move(rep));
      }
    },
    [self](msg::report_atom, caf::actor& who) { self->state.subscriber = who; },
    [self](msg::save_atom, std::string& dir, std::string& extra) -> std::string {
      return save(self->state, dir, extra);
    },
  };
}

} // namespace

caf::actor spawn_learner(caf::actor_system& sys, std::shared_ptr<policy::policy_model> model,
                         learner_options opts, caf::actor weights_sink) {
  return sys.spawn<caf::detached>(learner, std::move(model), std::move(opts), std::move(weights_sink));
}

} // namespace leap::actors
