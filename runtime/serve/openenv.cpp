#include "runtime/serve/openenv.hpp"

#include "common/json_text.hpp"
#include "common/random_id.hpp"
#include "runtime/serve/json_body.hpp"

#include <vector>

namespace leap::serve::openenv {

using nlohmann::json;

namespace {

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
         || c == '_' || c == '.' || c == ':';
}

// An episode id as the client sent it in `where` (a field or a query parameter), or why not.
result<std::string> checked_episode_id(std::string id, const std::string& where) {
  if (id.empty() || id.size() > 255)
    return make_error(where + ": 1 to 255 characters, got " + std::to_string(id.size()));
  for (char c : id)
    if (!id_char(c))
      return make_error(where + ": only letters, digits and - _ . : are allowed");
  return id;
}

result<std::string> episode_id_of(const json& j, bool required) {
  if (!j.contains("episode_id") || j["episode_id"].is_null()) {
    if (required)
      return make_error("missing field 'episode_id' (reset answers it in observation.episode_id)");
    return std::string();
  }
  if (!j["episode_id"].is_string())
    return make_error(std::string("field episode_id: expected a string, got ")
                      + j["episode_id"].type_name());
  return checked_episode_id(j["episode_id"].get<std::string>(), "field episode_id");
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace

result<reset_request> parse_reset(const std::string& body) {
  auto j = parse_object(body, {"seed", "episode_id", "task", "split"}, true);
  if (!j)
    return j.err();
  reset_request r;
  if (j->contains("seed") && !(*j)["seed"].is_null()) {
    const auto& s = (*j)["seed"];
    if (!s.is_number_integer())
      return make_error(std::string("field seed: expected an integer, got ") + s.type_name());
    if (!s.is_number_unsigned() && s.get<long long>() < 0)
      return make_error("field seed: must be >= 0, got " + s.dump());
    r.seed = s.get<std::uint64_t>();
  }
  auto id = episode_id_of(*j, false);
  if (!id)
    return id.err();
  r.episode_id = *id;
  for (const char* key : {"task", "split"}) {
    if (!j->contains(key) || (*j)[key].is_null())
      continue;
    if (!(*j)[key].is_string())
      return make_error(std::string("field ") + key + ": expected a string, got "
                        + (*j)[key].type_name());
    (std::string(key) == "task" ? r.task : r.split) = (*j)[key].get<std::string>();
  }
  if (!r.task.empty() && !r.split.empty())
    return make_error("fields task and split: name a task or a split to draw from, not both");
  if (r.task.empty() && r.split.empty())
    r.split = "train";
  if (!r.split.empty() && r.split != "train" && r.split != "eval")
    return make_error("field split: \"train\" or \"eval\", got \"" + r.split + "\"");
  return r;
}

result<std::string> pick_task(const reset_request& r, std::uint64_t seed,
                              const std::map<std::string, env::task_spec>& tasks) {
  if (!r.task.empty()) {
    if (!tasks.count(r.task))
      return make_error("field task: unknown task '" + r.task + "' (GET /v1/tasks lists them)");
    return r.task;
  }
  std::vector<std::string> names; // std::map: in name order
  for (const auto& [name, t] : tasks)
    if (env::to_string(t.split) == r.split)
      names.push_back(name);
  if (names.empty())
    return make_error("field split: this server has no " + r.split + " tasks");
  return names[splitmix64(seed) % names.size()];
}

result<step_request> parse_step(const std::string& body) {
  auto j = parse_object(body, {"action", "episode_id", "timeout_s", "request_id"}, true);
  if (!j)
    return j.err();
  step_request r;
  auto id = episode_id_of(*j, true);
  if (!id)
    return id.err();
  r.episode_id = *id;
  if (j->contains("timeout_s") && !(*j)["timeout_s"].is_null()
      && (!(*j)["timeout_s"].is_number() || (*j)["timeout_s"].get<double>() <= 0))
    return make_error("field timeout_s: expected a number > 0");
  if (j->contains("request_id") && !(*j)["request_id"].is_null()
      && (!(*j)["request_id"].is_string() || (*j)["request_id"].get<std::string>().size() > 255))
    return make_error("field request_id: expected a string of at most 255 characters");
  if (!j->contains("action"))
    return make_error("missing field 'action' ({\"code\": ...} or {\"completion\": ...})");
  const auto& a = (*j)["action"];
  if (!a.is_object())
    return make_error(std::string("field action: expected an object, got ") + a.type_name());
  for (auto it = a.begin(); it != a.end(); ++it)
    if (it.key() != "code" && it.key() != "completion" && it.key() != "tokens"
        && it.key() != "metadata")
      return make_error("unknown field 'action." + it.key() + "'");
  const bool has_code = a.contains("code"), has_comp = a.contains("completion");
  if (has_code == has_comp)
    return make_error(has_code ? "fields action.code and action.completion: send one of them, "
                                 "not both"
                               : "missing field 'action.code' (or 'action.completion')");
  const std::string key = has_code ? "code" : "completion";
  if (!a[key].is_string())
    return make_error("field action." + key + ": expected a string, got " + a[key].type_name());
  long long tokens = 0;
  if (a.contains("tokens")) {
    if (!a["tokens"].is_number_integer() || (!a["tokens"].is_number_unsigned()
                                             && a["tokens"].get<long long>() < 0))
      return make_error("field action.tokens: expected an integer >= 0");
    tokens = a["tokens"].get<long long>();
  }
  if (a.contains("metadata") && !a["metadata"].is_object())
    return make_error(std::string("field action.metadata: expected an object, got ")
                      + a["metadata"].type_name());
  r.s = submission_from(a[key].get<std::string>(), has_comp, tokens);
  return r;
}

result<std::string> state_query(const std::string& target) {
  auto q = target.find('?');
  std::string query = q == std::string::npos ? std::string() : target.substr(q + 1);
  std::size_t pos = 0;
  while (pos <= query.size()) {
    auto amp = query.find('&', pos);
    auto part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    if (part.rfind("episode_id=", 0) == 0)
      return checked_episode_id(part.substr(11), "query parameter episode_id");
    if (amp == std::string::npos)
      break;
    pos = amp + 1;
  }
  return make_error("missing query parameter 'episode_id' (GET /state?episode_id=...): this "
                    "server holds many episodes");
}

step_outcome observe(const std::string& episode_id, const msg::group_view& g, std::int32_t turn) {
  step_outcome o;
  o.group = g.id;
  o.turn = turn;
  json obs{{"episode_id", episode_id}, {"task", g.task}, {"group", g.id}, {"turn", turn}};
  if (g.attempts.empty()) {
    o.done = true;
    obs["status"] = "lost";
    obs["feedback"] = "";
    obs["prompt"] = "";
    obs["end"] = "dropped";
    o.observation = dump_lossy(obs);
    return o;
  }
  const auto& a = g.attempts.front();
  const msg::turn_view* tv = nullptr;
  for (const auto& t : a.turns)
    if (t.turn == turn)
      tv = &t;
  if (tv && tv->judged) {
    obs["status"] = env::to_string(tv->v.st);
    obs["feedback"] = tv->v.feedback;
    obs["verdict"] = json::parse(env::to_json(tv->v));
    o.reward = tv->v.st == env::status::correct ? 1.0 : 0.0;
  } else {
    obs["status"] = "lost"; // its job was lost or cancelled: no verdict
    obs["feedback"] = a.end_reason;
    obs["verdict"] = nullptr;
  }
  o.done = a.state == msg::attempt_state::ended;
  if (a.state == msg::attempt_state::awaiting_turn) {
    o.next_turn = a.next_turn;
    obs["prompt"] = a.next_prompt;
  } else {
    o.next_turn = o.done ? 0 : turn + 1;
    obs["prompt"] = "";
  }
  obs["next_turn"] = o.next_turn;
  obs["state"] = msg::to_string(a.state);
  obs["end"] = algo::to_string(a.end);
  obs["solved_turn"] = a.solved_turn;
  obs["dcp"] = algo::to_string(g.dcp);
  if (g.finished) {
    obs["group_reward"] = a.reward;
    obs["advantages"] = a.advantages;
  }
  o.observation = dump_lossy(obs);
  return o;
}

episode_table::episode_table(std::size_t max_episodes, std::chrono::steady_clock::duration ttl)
    : max_(max_episodes), ttl_(ttl) {}

void episode_table::sweep(std::chrono::steady_clock::time_point now) {
  for (auto it = eps_.begin(); it != eps_.end();)
    if (!it->second.in_flight && now - it->second.used > ttl_)
      it = eps_.erase(it);
    else
      ++it;
}

episode_table::episode* episode_table::find(const std::string& id,
                                            std::chrono::steady_clock::time_point now) {
  auto it = eps_.find(id);
  if (it == eps_.end())
    return nullptr;
  if (!it->second.in_flight && now - it->second.used > ttl_) {
    eps_.erase(it);
    return nullptr;
  }
  return &it->second;
}

maybe_problem episode_table::open(const std::string& wanted, const std::string& task,
                                  std::string& id) {
  std::lock_guard<std::mutex> lock(m_);
  auto now = std::chrono::steady_clock::now();
  sweep(now);
  if (!wanted.empty() && eps_.count(wanted))
    return problem{409, "field episode_id: episode '" + wanted + "' exists (reset without "
                        "episode_id to get a fresh one)"};
  if (eps_.size() >= max_)
    return problem{429, std::to_string(max_) + " episodes are open (serve.max_groups); finish "
                        "some or wait for idle ones to expire (serve.group_ttl_seconds)"};
  id = wanted.empty() ? random_id() : wanted;
  episode e;
  e.task = task;
  e.used = now;
  eps_[id] = std::move(e);
  return std::nullopt;
}

maybe_problem episode_table::begin_step(const std::string& id, ticket& out) {
  std::lock_guard<std::mutex> lock(m_);
  auto now = std::chrono::steady_clock::now();
  auto* e = find(id, now);
  if (!e)
    return problem{404, "field episode_id: no episode '" + id
                          + "' (never reset, or expired after serve.group_ttl_seconds idle)"};
  if (e->done)
    return problem{409, "field episode_id: episode '" + id + "' is done; POST /reset starts "
                        "another"};
  if (e->in_flight)
    return problem{409, "field episode_id: a step of episode '" + id + "' is still running"};
  e->in_flight = true;
  e->used = now;
  out.task = e->task;
  out.group = e->group;
  out.turn = e->next_turn;
  return std::nullopt;
}

void episode_table::end_step(const std::string& id, const std::optional<step_outcome>& o,
                             bool forget) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = eps_.find(id);
  if (it == eps_.end())
    return;
  if (forget) {
    eps_.erase(it);
    return;
  }
  auto& e = it->second;
  e.in_flight = false;
  e.used = std::chrono::steady_clock::now();
  if (!o)
    return;
  e.group = o->group;
  e.next_turn = o->next_turn;
  e.done = o->done;
  e.reward = o->reward;
  ++e.steps;
}

maybe_problem episode_table::state(const std::string& id, std::string& body) {
  std::lock_guard<std::mutex> lock(m_);
  auto now = std::chrono::steady_clock::now();
  auto* e = find(id, now);
  if (!e)
    return problem{404, "query parameter episode_id: no episode '" + id
                          + "' (never reset, or expired after serve.group_ttl_seconds idle)"};
  e->used = now;
  json j{{"episode_id", id},
         {"step_count", e->steps},
         {"task", e->task},
         {"group", e->group.empty() ? json() : json(e->group)},
         {"next_turn", e->done ? 0 : e->next_turn},
         {"done", e->done},
         {"reward", e->reward ? json(*e->reward) : json()},
         {"step_running", e->in_flight}};
  body = dump_lossy(j);
  return std::nullopt;
}

std::size_t episode_table::size() {
  std::lock_guard<std::mutex> lock(m_);
  return eps_.size();
}

std::string reset_body(const std::string& episode_id, const std::string& task,
                       const env::task_spec& spec, std::uint64_t seed, const std::string& prompt) {
  json obs{{"episode_id", episode_id},
           {"task", task},
           {"split", env::to_string(spec.split)},
           {"seed", seed},
           {"turn", 0},
           {"next_turn", 1},
           {"prompt", prompt},
           {"description", spec.description},
           {"signature", spec.signature},
           {"status", nullptr},
           {"feedback", ""}};
  return dump_lossy(json{{"observation", std::move(obs)}, {"reward", nullptr}, {"done", false}});
}

std::string step_body(const step_outcome& o) {
  return dump_lossy(
    json{{"observation", json::parse(o.observation)}, {"reward", o.reward}, {"done", o.done}});
}

std::string health_body(bool draining) {
  return json{{"status", draining ? "unhealthy" : "healthy"}}.dump();
}

std::string metadata_body(const std::string& version) {
  return json{{"name", "leap"},
              {"description",
               "CUDA kernel tasks judged by leap's verification environment (compile, run "
               "against the reference, feedback); one episode is one multi-turn attempt of a "
               "task, driven by the rollout state machine leap's trainer uses."},
              {"version", version},
              {"documentation_url", "docs/serve.md#openenv"}}
    .dump();
}

std::string schema_body() {
  json str{{"type", "string"}};
  json action{
    {"title", "LeapAction"},
    {"description", "Exactly one of code (a CUDA source as is) or completion (a model's whole "
                    "answer: the code is extracted as leap's trainer does, or SEARCH/REPLACE "
                    "edits are applied to the previous turn's code)."},
    {"type", "object"},
    {"properties",
     {{"code", str},
      {"completion", str},
      {"tokens", {{"type", "integer"}, {"minimum", 0}, {"description", "completion tokens"}}},
      {"metadata", {{"type", "object"}}}}},
    {"additionalProperties", false}};
  json nullable_str{{"type", json::array({"string", "null"})}};
  json observation{
    {"title", "LeapObservation"},
    {"type", "object"},
    {"properties",
     {{"episode_id", str},
      {"task", str},
      {"group", str},
      {"split", str},
      {"seed", {{"type", "integer"}}},
      {"turn", {{"type", "integer"}, {"description", "the turn just judged; 0 after reset"}}},
      {"next_turn", {{"type", "integer"}, {"description", "the turn the next step is; 0 once done"}}},
      {"prompt", {{"type", "string"}, {"description", "the next turn's prompt in leap's template"}}},
      {"status", nullable_str},
      {"feedback", str},
      {"verdict", {{"type", json::array({"object", "null"})}}},
      {"state", str},
      {"end", str},
      {"solved_turn", {{"type", "integer"}}},
      {"dcp", str},
      {"group_reward", {{"type", "number"}}},
      {"advantages", {{"type", "array"}, {"items", {{"type", "number"}}}}},
      {"description", str},
      {"signature", str},
      {"done", {{"type", "boolean"}}},
      {"reward", {{"type", json::array({"number", "null"})}}},
      {"metadata", {{"type", "object"}}}}}};
  json state{{"title", "LeapState"},
             {"type", "object"},
             {"properties",
              {{"episode_id", nullable_str},
               {"step_count", {{"type", "integer"}, {"minimum", 0}}},
               {"task", str},
               {"group", nullable_str},
               {"next_turn", {{"type", "integer"}}},
               {"done", {{"type", "boolean"}}},
               {"reward", {{"type", json::array({"number", "null"})}}},
               {"step_running", {{"type", "boolean"}}}}}};
  return json{{"action", action}, {"observation", observation}, {"state", state}}.dump();
}

std::string error_body(int status, const std::string& message) {
  return dump_lossy(json{{"schema", schema_version},
                         {"error", {{"status", status}, {"message", message}}},
                         {"detail", message}});
}

} // namespace leap::serve::openenv
