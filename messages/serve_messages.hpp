// Messages of the environment service (actors/env_service.hpp), the typed core behind `leap
// serve`: a check of one candidate, a LEAP group opened with G submissions, a later turn of one
// attempt, a group's current view, and the service's own counters. Each answer carries a status
// the HTTP layer maps to a code (runtime/serve/api.hpp); the actor itself knows nothing of HTTP.
// Plain structs with inspect(); include only where CAF is used.
#pragma once

#include "algo/rollout.hpp"
#include "env/verdict.hpp"
#include "messages/enum_inspect.hpp"
#include "messages/float_inspect.hpp"
#include "messages/env_messages.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace leap::msg {

// What became of a service call. ok: the payload holds the answer; the rest carry `message`
// naming what was wrong (the field, the group, the turn expected) and no payload.
enum class serve_status : std::uint8_t {
  ok,
  bad_request, // a field is missing, of the wrong type or out of range
  not_found,   // no such task, or no such group (never made, or expired)
  conflict,    // a turn that is not the attempt's next one, or an attempt that has ended
  busy,        // over serve.max_queue waiting jobs or serve.max_groups open groups: retry later
  failed,      // leap could not evaluate it (a broken reference, every try of a job lost)
};
const char* to_string(serve_status s);

// Where one attempt of a served group stands.
enum class attempt_state : std::uint8_t {
  running,       // its current turn is being built or run (or waits for DCP)
  awaiting_turn, // DCP expanded it: the client sends turn `next_turn`
  ended,         // see `end`
};
const char* to_string(attempt_state s);

// One turn's submission: extracted code, or a completion without code (a failed turn whose
// feedback says why). `tokens` are the completion's tokens (the tournament's tie key; 0 when the
// client does not say).
struct submission {
  bool has_code = false;
  std::string code;
  std::string no_code_reason; // has_code false: the extractor's reason
  std::int64_t tokens = 0;
  // A completion of SEARCH/REPLACE edits (policy/text/code_edit.hpp), has_code false: the service
  // applies it to the attempt's previous code, as the trainer's gatekeeper does.
  std::string edit;
};

struct check_call {
  std::string task;
  submission s;             // its tokens are not used
  bool reference = false;   // check the task's own reference (s is not used)
  bool dump_inputs = false; // keep the run's inputs and outputs (check_answer::kept_dir)
};

struct check_answer {
  serve_status status = serve_status::failed;
  std::string message;
  double retry_after = 0;  // busy: seconds until the queue has likely drained
  env::verdict v;          // ok: the verdict, as `leap check --json` prints it
  std::string kept_dir;    // with dump_inputs, when it ran: inputs.bin and outputs.bin
  std::uint64_t seed = 0;  // the input seed of its run (0: it did not run)
};

struct group_call {
  std::string task;
  std::vector<submission> attempts; // turn 1 of each of the G attempts
};

struct turn_call {
  std::string group;
  std::int32_t attempt = 0; // 0-based
  std::int32_t turn = 0;    // 1-based; must be the attempt's next turn (or a repeat of one sent)
  submission s;
};

struct turn_view {
  std::int32_t turn = 0;
  bool judged = false;   // false while it runs, or when its job was lost or cancelled
  env::verdict v;        // judged: the verdict of this turn
};

struct attempt_view {
  std::int32_t attempt = 0;
  attempt_state state = attempt_state::running;
  algo::attempt_end end = algo::attempt_end::none;
  std::string end_reason;       // dropped: what the infrastructure said
  std::int32_t solved_turn = 0;
  std::vector<turn_view> turns;
  std::int32_t next_turn = 0;   // awaiting_turn: the turn to send
  std::string next_prompt;      // awaiting_turn: the next turn's prompt in leap's template
  double reward = 0;            // finished groups: the estimator's trajectory reward
  std::vector<double> advantages; // finished groups: one per turn
};

struct group_view {
  std::string id;
  std::string task;
  algo::group_decision dcp = algo::group_decision::undecided;
  bool activated = false;       // some attempt was given a second turn
  bool finished = false;
  std::int32_t turn1_failed = 0, turn1_passed = 0, turn1_lost = 0;
  std::string estimator;        // the advantages' estimator (train.estimator)
  double expires_in_seconds = 0;
  std::vector<attempt_view> attempts;
};

struct group_answer {
  serve_status status = serve_status::failed;
  std::string message;
  double retry_after = 0;
  group_view g;
};

// The service's gauges for /metrics and back-pressure.
struct service_stats {
  std::uint32_t groups_open = 0;
  std::uint32_t compile_jobs = 0; // sent to the compiler pool and not answered
  std::uint32_t exec_jobs = 0;    // sent to the executor pool and not answered
  std::uint32_t waiting_jobs = 0; // of those, beyond the pools' workers (queued)
  std::uint64_t groups_expired = 0;
  pool_stats compiler, executor;
};

inline detail::checked_enum<serve_status> enum_field(serve_status& x) {
  return {x, "leap_serve_status", serve_status::failed};
}
inline detail::checked_enum<attempt_state> enum_field(attempt_state& x) {
  return {x, "leap_attempt_state", attempt_state::ended};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submission& x) {
  return f(caf::meta::type_name("leap_submission"), x.has_code, x.code, x.no_code_reason,
           x.tokens, x.edit);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, check_call& x) {
  return f(caf::meta::type_name("leap_check_call"), x.task, x.s, x.reference, x.dump_inputs);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, check_answer& x) {
  return f(caf::meta::type_name("leap_check_answer"), enum_field(x.status), x.message,
           float_field(x.retry_after), x.v, x.kept_dir, x.seed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_call& x) {
  return f(caf::meta::type_name("leap_group_call"), x.task, x.attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_call& x) {
  return f(caf::meta::type_name("leap_turn_call"), x.group, x.attempt, x.turn, x.s);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_view& x) {
  return f(caf::meta::type_name("leap_turn_view"), x.turn, x.judged, x.v);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, attempt_view& x) {
  return f(caf::meta::type_name("leap_attempt_view"), x.attempt, enum_field(x.state),
           enum_field(x.end), x.end_reason, x.solved_turn, x.turns, x.next_turn, x.next_prompt,
           float_field(x.reward), float_field(x.advantages));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_view& x) {
  return f(caf::meta::type_name("leap_group_view"), x.id, x.task, enum_field(x.dcp), x.activated,
           x.finished, x.turn1_failed, x.turn1_passed, x.turn1_lost, x.estimator,
           float_field(x.expires_in_seconds), x.attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_answer& x) {
  return f(caf::meta::type_name("leap_group_answer"), enum_field(x.status), x.message,
           float_field(x.retry_after), x.g);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, service_stats& x) {
  return f(caf::meta::type_name("leap_service_stats"), x.groups_open, x.compile_jobs, x.exec_jobs,
           x.waiting_jobs, x.groups_expired, x.compiler, x.executor);
}

} // namespace leap::msg
