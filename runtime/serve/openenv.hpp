// OpenEnv's HTTP protocol (meta-pytorch/OpenEnv, src/openenv/core/env_server/http_server.py and
// types.py) on `leap serve`, without the sockets: POST /reset, POST /step, GET /state and the
// health, metadata and schema routes, in OpenEnv's JSON shapes (docs/serve.md "OpenEnv"). One
// episode is one attempt of a one-attempt LEAP group in the environment service: reset picks
// the task (by name, or drawn from a split with a seed) and answers its turn-1 prompt; each
// step sends the action's code as the attempt's next turn (the first step opens the group) and
// answers the verdict's feedback and next prompt, the turn's reward and whether the attempt
// ended. OpenEnv's HTTP routes are stateless (its sessions live on a WebSocket); here the
// episode is named by `episode_id`, which reset answers and step and state take.
//
// The parse and render functions are pure (any thread). episode_table holds the episodes the
// serve layer knows (episode id -> task, group, next turn), bounded and expiring idle ones; it
// is locked inside and called from the HTTP I/O threads and the CAF threads that carry the
// service's answers (runtime/serve/service_bridge.cpp).
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"
#include "messages/serve_messages.hpp"
#include "runtime/serve/api.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace leap::serve::openenv {

// The body of POST /reset. Exactly one of task and split may be given (neither: split train).
struct reset_request {
  std::string task;  // by name
  std::string split; // "train" or "eval": drawn from that split
  std::optional<std::uint64_t> seed;
  std::string episode_id; // the client's own name for the episode; empty: the server makes one
};
result<reset_request> parse_reset(const std::string& body);

// The task a reset names or draws: the split's tasks in name order, index splitmix64(seed) mod
// their count. Errors name the field (task: unknown; split: no tasks).
result<std::string> pick_task(const reset_request& r, std::uint64_t seed,
                              const std::map<std::string, env::task_spec>& tasks);

// The body of POST /step: {"episode_id", "action": {"code"} or {"completion"}, optional
// "tokens" and "metadata" in the action, optional "timeout_s" and "request_id"}.
struct step_request {
  std::string episode_id;
  msg::submission s;
};
result<step_request> parse_step(const std::string& body);

// The episode_id of GET /state?episode_id=...
result<std::string> state_query(const std::string& target);

// What one judged step did to its episode (from the group view the service answered).
struct step_outcome {
  std::string group;
  std::int32_t turn = 0;      // the turn just judged
  std::int32_t next_turn = 0; // the turn the next step sends (0 once done)
  bool done = false;
  double reward = 0;          // 1 when this turn's verdict is correct, else 0
  std::string observation;    // the observation object (JSON)
};
step_outcome observe(const std::string& episode_id, const msg::group_view& g, std::int32_t turn);

// A problem with an HTTP status, or nothing.
using maybe_problem = std::optional<problem>;

// The serve layer's episodes. At most `max_episodes` (serve.max_groups); one nobody touched for
// `ttl` (serve.group_ttl_seconds) is forgotten, as the service forgets its group.
class episode_table {
public:
  episode_table(std::size_t max_episodes, std::chrono::steady_clock::duration ttl);

  // A new episode of `task`; `wanted` its id (empty: 128 random bits). 409 if that id is in
  // use, 429 when the table is full.
  maybe_problem open(const std::string& wanted, const std::string& task, std::string& id);

  // Claims the episode for one step: its task, group (empty before the first step) and the
  // turn to send. 404 unknown or expired, 409 done or a step of it still running.
  struct ticket {
    std::string task, group;
    std::int32_t turn = 1;
  };
  maybe_problem begin_step(const std::string& id, ticket& out);
  // The step's outcome, or nullopt when the call failed (the episode may step again; with
  // `forget`, it is gone: its group expired).
  void end_step(const std::string& id, const std::optional<step_outcome>& o, bool forget = false);

  // GET /state's object, or 404.
  maybe_problem state(const std::string& id, std::string& body);

  std::size_t size();

private:
  struct episode {
    std::string task, group;
    std::int32_t next_turn = 1;
    std::int32_t steps = 0;
    bool done = false, in_flight = false;
    std::optional<double> reward;
    std::chrono::steady_clock::time_point used;
  };
  void sweep(std::chrono::steady_clock::time_point now);
  episode* find(const std::string& id, std::chrono::steady_clock::time_point now);

  std::mutex m_;
  std::map<std::string, episode> eps_;
  std::size_t max_;
  std::chrono::steady_clock::duration ttl_;
};

// Bodies in OpenEnv's shapes.
std::string reset_body(const std::string& episode_id, const std::string& task,
                       const env::task_spec& spec, std::uint64_t seed, const std::string& prompt);
std::string step_body(const step_outcome& o);
std::string health_body(bool draining); // {"status":"healthy"} or "unhealthy"
std::string metadata_body(const std::string& version);
std::string schema_body();
// leap's error body plus FastAPI's "detail", which OpenEnv clients read.
std::string error_body(int status, const std::string& message);

} // namespace leap::serve::openenv
