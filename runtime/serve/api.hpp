// The HTTP API of `leap serve` (schema v1, docs/serve.md) without the sockets: which route a
// method and path name (OpenEnv's routes too; their bodies are runtime/serve/openenv.hpp's), request bodies parsed into the service's typed calls (every error names
// the JSON field), and the service's answers rendered as JSON. Kept apart from the Beast server
// (runtime/serve/http_server.hpp) so the API is testable without a network. Pure functions; any
// thread.
#pragma once

#include "common/result.hpp"
#include "env/task.hpp"
#include "messages/serve_messages.hpp"

#include <map>
#include <string>

namespace leap::serve {

inline constexpr const char* schema_version = "v1";

enum class route_kind {
  health,    // GET /health
  metrics,   // GET /metrics
  tasks,     // GET /v1/tasks
  task,      // GET /v1/tasks/{name}
  check,     // POST /v1/check
  open_group, // POST /v1/groups
  view_group, // GET /v1/groups/{id}
  turn,      // POST /v1/groups/{id}/turns
  completions,      // POST /v1/completions (OpenAI-compatible; needs --checkpoint)
  chat_completions, // POST /v1/chat/completions (idem)
  models,           // GET /v1/models (idem)
  // OpenEnv's protocol (runtime/serve/openenv.hpp), at the root and under /openenv (whose
  // /openenv/health answers OpenEnv's {"status":"healthy"}; the root /health is leap's own).
  openenv_health,   // GET /openenv/health
  openenv_metadata, // GET /metadata
  openenv_schema,   // GET /schema
  openenv_reset,    // POST /reset
  openenv_step,     // POST /step
  openenv_state,    // GET /state?episode_id=...
  unknown,   // no such path: 404
  wrong_method, // a known path, another method: 405 with `allow`
};

struct route {
  route_kind kind = route_kind::unknown;
  std::string name;  // task: the task's name; view_group, turn: the group id
  std::string allow; // wrong_method: the methods the path takes
  // The label of this route in metrics ("check", "groups", ...; "unknown" for the rest).
  std::string label() const;
};

// `target` is the request target; a query string is ignored.
route match(const std::string& method, const std::string& target);

// An HTTP status and a JSON error body naming what was wrong.
struct problem {
  int status = 400;
  std::string message;
};

// A submission from a source (code as is) or a completion (code extracted as the trainer does,
// or SEARCH/REPLACE edits the service applies to the attempt's previous code).
msg::submission submission_from(const std::string& text, bool is_completion, long long tokens);

result<msg::check_call> parse_check(const std::string& body);
// `max_group_size`: serve.max_group_size.
result<msg::group_call> parse_group(const std::string& body, int max_group_size);
result<msg::turn_call> parse_turn(const std::string& body, const std::string& group_id);

// The HTTP status of a service answer.
int http_status(msg::serve_status s);

// {"schema":"v1","error":{"status":N,"message":"..."}}
std::string error_body(int status, const std::string& message);

// The same object `leap check --json` prints.
std::string check_body(const env::verdict& v);
std::string group_body(const msg::group_view& g);

// The task list and one task (with its turn-1 prompt in leap's template).
std::string tasks_body(const std::map<std::string, env::task_spec>& tasks);
std::string task_body(const env::task_spec& t, const std::string& prompt);

} // namespace leap::serve
