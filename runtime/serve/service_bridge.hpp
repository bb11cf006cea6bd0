// The handler of `leap serve`'s HTTP server: matches the route (runtime/serve/api.hpp), answers
// what needs no work at once (health, tasks, parse errors), and hands checks, groups and turns to
// the environment service actor (actors/env_service.hpp) through a short-lived CAF actor per
// call, whose answer comes back on the connection's strand. A call the service has not answered
// within `request_timeout` is answered 504. /metrics asks the service for its gauges, then
// renders the registry. OpenEnv's routes (runtime/serve/openenv.hpp) keep their episodes in a
// table of the bridge's and step them as one-attempt groups and turns of the same service.
// Called on the HTTP I/O threads; never blocks them.
#pragma once

#include "messages/interfaces.hpp"
#include "runtime/serve/http_server.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace leap::env {
struct task_spec;
}

namespace leap::serve {

struct bridge_options {
  int max_group_size = 64;
  std::chrono::milliseconds request_timeout{std::chrono::minutes(15)};
  std::string backend;       // shown by /health
  std::string version;       // shown by /health
  // A task's turn-1 prompt in leap's template (GET /v1/tasks/{name}).
  std::function<std::string(const env::task_spec&)> first_prompt;
  std::function<bool()> draining; // /health says so (503) while the server drains
  // The OpenAI-compatible routes (/v1/completions, /v1/chat/completions, /v1/models), served by
  // `leap serve --checkpoint`'s model (runtime/serve/openai_engine.hpp); unset: they answer 404
  // saying to start with --checkpoint.
  handler_fn openai;
  // OpenEnv episodes (POST /reset): at most this many (serve.max_groups); idle ones expire.
  std::size_t max_episodes = 4096;
  std::chrono::milliseconds episode_ttl{std::chrono::minutes(30)}; // serve.group_ttl_seconds
};

// Declares the service's gauge families (queue depth, busy workers, open groups, ...).
void declare_bridge_metrics(prom::registry& m);

handler_fn make_service_handler(caf::actor_system& sys, msg::env_service_actor service,
                                std::shared_ptr<const std::map<std::string, env::task_spec>> tasks,
                                std::shared_ptr<prom::registry> metrics, bridge_options opts);

} // namespace leap::serve
