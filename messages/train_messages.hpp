// Messages of the LEAP training pipeline (docs/design.md "Data flow"): generation requests and
// their sampled completions, published policy versions, a group's admission and its finished
// trajectories, the judge's scores, the gatekeeper's stage usage, checkpoint requests and the
// learner's step report. Plain serialisable structs with CAF inspect() overloads; any actor may
// send them. Include only where CAF is used.
#pragma once

#include "algo/rollout.hpp"
#include "env/verdict.hpp"
#include "messages/enum_inspect.hpp"
#include "messages/float_inspect.hpp"

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
  std::uint64_t priority = 0;   // queue order in the pool, as msg::compile_request::priority
};

struct generated {
  std::vector<int> tokens;      // completion ids (eos included)
  std::vector<float> logprobs;  // behaviour log-prob of each token
  std::string finish;           // eos | stop | length (the sampler's words)
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

// The trainer (or `leap eval`) admits a group: G attempts at one task. (epoch, index) place it
// in the task order.
struct group_start {
  std::uint64_t group_id = 0;
  std::string task;
  std::int32_t epoch = 0;
  std::int32_t index = 0;
};

// One turn of one attempt, as the learner and the records need it.
struct turn_record {
  std::vector<int> prompt;
  std::vector<int> completion;
  std::vector<float> logprobs;
  std::int64_t policy_version = 0;
  bool judged = false;          // a verdict came (false: the attempt was dropped or cancelled)
  env::status status = env::status::rejected;
  std::string reason;           // the verdict's short cause: no_code, emulation_unsupported, ...
  bool timed = false;
  double speedup = 0;
  double t_generated = 0;       // seconds after the group's admission: sample received ...
  double t_verdict = 0;         // ... verdict known
  std::string code;             // the code extracted from the completion ("" without)
  std::string feedback;         // the verdict's feedback, as the attempt's next turn shows it
};

struct trajectory_record {
  std::vector<turn_record> turns;
  std::int32_t solved_turn = 0;              // 1-based; 0 = unsolved
  algo::attempt_end end = algo::attempt_end::none;
  std::string end_reason;                    // dropped: what the infrastructure said
};

// A finished group: every attempt ended (algo/rollout.hpp says how).
struct group_result {
  std::uint64_t group_id = 0;
  std::string task;
  std::int32_t epoch = 0;
  std::int32_t index = 0;
  algo::group_decision dcp = algo::group_decision::undecided;
  bool activated = false;       // some attempt reached turn 2
  std::vector<trajectory_record> trajectories;
  std::uint32_t attempts = 0;   // turns generated
  std::uint32_t compiles = 0;   // candidate compiles that ran (cache misses)
  std::uint32_t cache_hits = 0;
  std::uint32_t cancelled = 0;  // queued or running jobs cancelled by pruning
  std::uint32_t compiles_later_turns = 0; // compile requests on turns >= 2
  double seconds = 0;           // admission to finish
};

// The judge's verdict on a finished group: per-trajectory reward and per-turn advantages
// (0 for trajectories that are not ranked).
struct scored_group {
  group_result group;
  std::vector<double> rewards;
  std::vector<std::vector<double>> advantages; // [trajectory][turn]
};

// The gatekeeper's stage usage since it started: busy worker-seconds of each stage divided by
// its workers (differences over a step give that step's utilisation).
struct stage_usage {
  double elapsed_seconds = 0;
  double generate = 0, compile = 0, execute = 0;
};

// Ask the learner for a checkpoint of its current state.
struct save_request {
  std::string dir;
  std::string extra_json;       // a JSON object saved in trainer_state.json (the learner adds "progress")
};

struct checkpoint_saved {
  std::string dir;
  std::int64_t step = 0;
};

// One line of groups.jsonl: a finished group, its attempts and what each was given.
struct turn_summary {
  bool judged = false;
  env::status status = env::status::rejected;
  std::string reason;
  std::int32_t tokens = 0;
};

struct attempt_summary {
  algo::attempt_end end = algo::attempt_end::none;
  std::string end_reason;
  std::int32_t solved_turn = 0;
  double reward = 0;
  std::vector<double> advantages; // per turn
  std::vector<turn_summary> turns;
};

struct group_summary {
  std::uint64_t group_id = 0;
  std::string task;
  std::int32_t epoch = 0;
  std::int32_t index = 0;
  algo::group_decision dcp = algo::group_decision::undecided;
  bool activated = false;
  double seconds = 0;
  std::vector<attempt_summary> attempts;
};

// How a learner step went.
enum class step_outcome : std::uint8_t {
  trained,   // one or more optimizer steps; a new policy version
  no_signal, // every advantage was 0: no gradient, still a new version (steps == versions)
  failed,    // the optimizer step failed: `error` says why; the run ends
};
const char* to_string(step_outcome o);

enum class checkpoint_state : std::uint8_t {
  not_due, // no checkpoint with this step
  saved,   // written before the report was sent
  failed,  // `checkpoint_error` says why
};

// What one learner step did.
struct step_report {
  std::int64_t step = 0;
  std::int64_t policy_version = 0;
  step_outcome outcome = step_outcome::trained;
  std::string error;             // outcome failed: why
  double loss = 0, pg_loss = 0, kl = 0, clip_fraction = 0, grad_norm = 0;
  double acc_at_1 = 0, acc_at_2 = 0, acc_at_3 = 0, turns_per_pass = 0, activated_groups = 0;
  double recovery = -1;          // mean per-group recovery; -1 = no activated group had a turn-1 failure
  std::uint32_t groups = 0, attempts = 0, compiles = 0, cache_hits = 0, cancelled = 0;
  std::uint32_t compiles_later_turns = 0;
  std::uint32_t dropped = 0;     // attempts lost to the infrastructure (not ranked)
  std::uint32_t unsupported = 0; // attempts the emulation could not build (not ranked)
  std::int64_t tokens = 0;
  std::int32_t sequences = 0;
  double learn_seconds = 0;
  double max_lag = 0;            // policy versions the oldest trained token lagged
  // Busy fraction of each stage's workers since the previous report (filled by the trainer).
  double util_generate = 0, util_compile = 0, util_execute = 0;
  checkpoint_state checkpoint = checkpoint_state::not_due;
  std::string checkpoint_error;
  std::vector<std::string> tasks;
  std::vector<std::int32_t> epochs, indices;
  std::vector<group_summary> group_details; // the step's groups, for groups.jsonl
  bool budget_spent = false;     // the run's compile budget is reached: the learner's last step

  // Compile requests, all turns: every candidate sent to the compiler (build-cache hits
  // included), what train.max_compiles counts.
  std::int64_t compile_requests() const { return std::int64_t{compiles} + cache_hits; }
};

inline const char* to_string(step_outcome o) {
  switch (o) {
    case step_outcome::trained: return "trained";
    case step_outcome::no_signal: return "no_signal";
    case step_outcome::failed: return "failed";
  }
  return "?";
}

inline const char* to_string(checkpoint_state c) {
  switch (c) {
    case checkpoint_state::not_due: return "not_due";
    case checkpoint_state::saved: return "saved";
    case checkpoint_state::failed: return "failed";
  }
  return "?";
}

inline detail::checked_enum<step_outcome> enum_field(step_outcome& x) {
  return {x, "leap_step_outcome", step_outcome::failed};
}

inline detail::checked_enum<checkpoint_state> enum_field(checkpoint_state& x) {
  return {x, "leap_checkpoint_state", checkpoint_state::failed};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_request& x) {
  return f(caf::meta::type_name("leap_generate_request"), x.id, x.group_id, x.prompts,
           x.samples_per_prompt, float_field(x.temperature), float_field(x.top_p), x.max_new_tokens, x.seed, x.priority);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generated& x) {
  return f(caf::meta::type_name("leap_generated"), x.tokens, float_field(x.logprobs), x.finish);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_reply& x) {
  return f(caf::meta::type_name("leap_generate_reply"), x.id, x.samples, x.policy_version,
           float_field(x.seconds), x.worker);
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
  return f(caf::meta::type_name("leap_turn_record"), x.prompt, x.completion, float_field(x.logprobs),
           x.policy_version, x.judged, enum_field(x.status), x.reason, x.timed, float_field(x.speedup), float_field(x.t_generated),
           float_field(x.t_verdict), x.code, x.feedback);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trajectory_record& x) {
  return f(caf::meta::type_name("leap_trajectory_record"), x.turns, x.solved_turn, enum_field(x.end),
           x.end_reason);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_result& x) {
  return f(caf::meta::type_name("leap_group_result"), x.group_id, x.task, x.epoch, x.index,
           enum_field(x.dcp), x.activated, x.trajectories, x.attempts, x.compiles, x.cache_hits, x.cancelled,
           x.compiles_later_turns, float_field(x.seconds));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scored_group& x) {
  return f(caf::meta::type_name("leap_scored_group"), x.group, float_field(x.rewards), float_field(x.advantages));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stage_usage& x) {
  return f(caf::meta::type_name("leap_stage_usage"), float_field(x.elapsed_seconds), float_field(x.generate), float_field(x.compile),
           float_field(x.execute));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, save_request& x) {
  return f(caf::meta::type_name("leap_save_request"), x.dir, x.extra_json);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_saved& x) {
  return f(caf::meta::type_name("leap_checkpoint_saved"), x.dir, x.step);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_summary& x) {
  return f(caf::meta::type_name("leap_turn_summary"), x.judged, enum_field(x.status), x.reason, x.tokens);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, attempt_summary& x) {
  return f(caf::meta::type_name("leap_attempt_summary"), enum_field(x.end), x.end_reason, x.solved_turn,
           float_field(x.reward), float_field(x.advantages), x.turns);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_summary& x) {
  return f(caf::meta::type_name("leap_group_summary"), x.group_id, x.task, x.epoch, x.index,
           enum_field(x.dcp), x.activated, float_field(x.seconds), x.attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_report& x) {
  return f(caf::meta::type_name("leap_step_report"), x.step, x.policy_version, enum_field(x.outcome),
           x.error, float_field(x.loss), float_field(x.pg_loss), float_field(x.kl), float_field(x.clip_fraction), float_field(x.grad_norm), float_field(x.acc_at_1),
           float_field(x.acc_at_2), float_field(x.acc_at_3), float_field(x.turns_per_pass), float_field(x.activated_groups), float_field(x.recovery), x.groups,
           x.attempts, x.compiles, x.cache_hits, x.cancelled, x.compiles_later_turns, x.dropped,
           x.unsupported, x.tokens, x.sequences, float_field(x.learn_seconds), float_field(x.max_lag), float_field(x.util_generate),
           float_field(x.util_compile), float_field(x.util_execute), enum_field(x.checkpoint), x.checkpoint_error, x.tasks, x.epochs,
           x.indices, x.group_details, x.budget_spent);
}

} // namespace leap::msg
