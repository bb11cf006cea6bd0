// Messages of the LEAP training pipeline (DESIGN.md "Data flow"): generation requests and their
// sampled completions, published policy versions, a group's start and its finished
// trajectories, the judge's scores and the learner's step report. Plain serialisable structs
// with CAF inspect() overloads; any actor may send them. Include only where CAF is used.
#pragma once

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace leap::msg {

// Sample completions: `samples_per_prompt` for each prompt (a turn-1 group is one prompt x G;
// later turns are one prompt x 1 per failed attempt).
struct generate_request {
  std::uint64_t id = 0;
  std::uint64_t group_id = 0;
  std::vector<std::vector<int>> prompts;
  std::int32_t samples_per_prompt = 1;
  double temperature = 1.0;
  double top_p = 1.0;
  std::int32_t max_new_tokens = 384;
  std::uint64_t seed = 0;
};

struct generated {
  std::vector<int> tokens;      // completion ids (eos included)
  std::vector<float> logprobs;  // behaviour log-prob of each token
  std::string finish;           // eos | stop | length
};

// samples[i * samples_per_prompt + j] belongs to prompts[i].
struct generate_reply {
  std::uint64_t id = 0;
  std::vector<generated> samples;
  std::int64_t policy_version = 0;  // the weights that sampled them
  double seconds = 0;
  std::uint32_t worker = 0;
};

// A policy version published by the learner: the weights as a safetensors image.
struct weights_update {
  std::int64_t version = 0;
  std::string safetensors;
};

// The trainer admits a group: G attempts at one task. (epoch, index) place it in the task order.
struct group_start {
  std::uint64_t group_id = 0;
  std::string task;
  std::int32_t epoch = 0;
  std::int32_t index = 0;
};

// One turn of one attempt, as the learner needs it.
struct turn_record {
  std::vector<int> prompt;
  std::vector<int> completion;
  std::vector<float> logprobs;
  std::int64_t policy_version = 0;
  std::string status;           // the verdict: correct, wrong_answer, compile_error, ...
  std::string reason;
  bool timed = false;
  double speedup = 0;
  double t_generated = 0;       // seconds after the group's admission: sample received ...
  double t_verdict = 0;         // ... verdict known
};

struct trajectory_record {
  std::vector<turn_record> turns;
  std::int32_t solved_turn = 0; // 1-based; 0 = unsolved
  bool cancelled = false;       // a straggler of a pruned group: no verdict, not trained on
};

// A finished group (every attempt solved, out of turns, not expanded, or cancelled by pruning).
struct group_result {
  std::uint64_t group_id = 0;
  std::string task;
  std::int32_t epoch = 0;
  std::int32_t index = 0;
  std::string dcp;              // expand | prune_easy | prune_hopeless
  bool activated = false;       // some attempt reached turn 2
  std::vector<trajectory_record> trajectories;
  std::uint32_t attempts = 0;   // turns generated
  std::uint32_t compiles = 0;   // candidate compiles that ran (cache misses)
  std::uint32_t cache_hits = 0;
  std::uint32_t cancelled = 0;  // queued or running compile/execute jobs cancelled by pruning
  std::uint32_t compiles_later_turns = 0; // compile requests on turns >= 2
  double seconds = 0;           // admission to finish
};

// The judge's verdict on a finished group: per-trajectory reward and per-turn advantages.
struct scored_group {
  group_result group;
  std::vector<double> rewards;
  std::vector<std::vector<double>> advantages; // [trajectory][turn]
};

// What one learner step did.
struct step_report {
  std::int64_t step = 0;
  std::int64_t policy_version = 0;
  double loss = 0, pg_loss = 0, kl = 0, clip_fraction = 0, grad_norm = 0;
  double acc_at_1 = 0, acc_at_2 = 0, acc_at_3 = 0, turns_per_pass = 0, activated_groups = 0;
  std::uint32_t groups = 0, attempts = 0, compiles = 0, cache_hits = 0, cancelled = 0;
  std::uint32_t compiles_later_turns = 0;
  std::int64_t tokens = 0;
  std::int32_t sequences = 0;
  double learn_seconds = 0;
  double max_lag = 0;            // policy versions the oldest trained token lagged
  // Busy fraction of each stage's workers since the previous report (filled by the trainer).
  double util_generate = 0, util_compile = 0, util_execute = 0;
  // The learner saved a checkpoint of this step before reporting it ("" error = saved).
  bool checkpointed = false;
  std::string checkpoint_error;
  std::vector<std::string> tasks;
  std::vector<std::int32_t> epochs, indices;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_request& x) {
  return f(caf::meta::type_name("leap_generate_request"), x.id, x.group_id, x.prompts,
           x.samples_per_prompt, x.temperature, x.top_p, x.max_new_tokens, x.seed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generated& x) {
  return f(caf::meta::type_name("leap_generated"), x.tokens, x.logprobs, x.finish);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_reply& x) {
  return f(caf::meta::type_name("leap_generate_reply"), x.id, x.samples, x.policy_version,
           x.seconds, x.worker);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, weights_update& x) {
  return f(caf::meta::type_name("leap_weights_update"), x.version, x.safetensors);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_start& x) {
  return f(caf::meta::type_name("leap_group_start"), x.group_id, x.task, x.epoch, x.index);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_record& x) {
  return f(caf::meta::type_name("leap_turn_record"), x.prompt, x.completion, x.logprobs,
           x.policy_version, x.status, x.reason, x.timed, x.speedup, x.t_generated, x.t_verdict);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trajectory_record& x) {
  return f(caf::meta::type_name("leap_trajectory_record"), x.turns, x.solved_turn, x.cancelled);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_result& x) {
  return f(caf::meta::type_name("leap_group_result"), x.group_id, x.task, x.epoch, x.index,
           x.dcp, x.activated, x.trajectories, x.attempts, x.compiles, x.cache_hits, x.cancelled,
           x.compiles_later_turns, x.seconds);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scored_group& x) {
  return f(caf::meta::type_name("leap_scored_group"), x.group, x.rewards, x.advantages);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_report& x) {
  return f(caf::meta::type_name("leap_step_report"), x.step, x.policy_version, x.loss,
           x.pg_loss, x.kl, x.clip_fraction, x.grad_norm, x.acc_at_1, x.acc_at_2, x.acc_at_3,
           x.turns_per_pass, x.activated_groups, x.groups, x.attempts, x.compiles, x.cache_hits,
           x.cancelled, x.compiles_later_turns, x.tokens, x.sequences, x.learn_seconds, x.max_lag,
           x.util_generate, x.util_compile, x.util_execute, x.checkpointed, x.checkpoint_error,
           x.tasks, x.epochs, x.indices);
}

} // namespace leap::msg
