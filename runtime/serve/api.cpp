#include "runtime/serve/api.hpp"

#include "common/json_text.hpp"
#include "runtime/serve/json_body.hpp"
#include "policy/text/code_edit.hpp"
#include "policy/text/code_extract.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <vector>

namespace leap::serve {

using nlohmann::json;

namespace {

std::vector<std::string> split_path(const std::string& target) {
  auto path = target.substr(0, target.find('?'));
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty())
        parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    parts.push_back(cur);
  return parts;
}

route known(route_kind k, const std::string& method, const char* wanted, std::string name = {}) {
  route r;
  r.name = std::move(name);
  if (method == wanted) {
    r.kind = k;
  } else {
    r.kind = route_kind::wrong_method;
    r.allow = wanted;
  }
  return r;
}

result<std::string> string_field(const json& j, const std::string& key) {
  if (!j.contains(key))
    return make_error("missing field '" + key + "'");
  if (!j[key].is_string())
    return make_error("field " + key + ": expected a string, got " + j[key].type_name());
  return j[key].get<std::string>();
}

// `v` as an integer in [lo, hi]; `key` names it in the error.
result<long long> int_value(const json& v, const std::string& key, long long lo, long long hi) {
  if (!v.is_number_integer())
    return make_error("field " + key + ": expected an integer, got " + v.type_name());
  long long x = v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi)
                  ? hi + 1
                  : v.get<long long>();
  if (x < lo || x > hi)
    return make_error("field " + key + ": " + v.dump() + " is not in [" + std::to_string(lo)
                      + ", " + std::to_string(hi) + "]");
  return x;
}

result<long long> int_field(const json& j, const std::string& key, long long lo, long long hi) {
  if (!j.contains(key))
    return make_error("missing field '" + key + "'");
  return int_value(j[key], key, lo, hi);
}

} // namespace

msg::submission submission_from(const std::string& text, bool is_completion, long long tokens) {
  msg::submission s;
  s.tokens = tokens;
  if (!is_completion) {
    s.has_code = true;
    s.code = text;
    return s;
  }
  if (policy::has_edits(text)) { // applied to the attempt's previous code by the service
    s.edit = text;
    s.no_code_reason = "an edit answer needs a previous turn's code to change";
    return s;
  }
  auto ex = policy::extract_code(text);
  s.has_code = ex.ok;
  if (ex.ok)
    s.code = std::move(ex.code);
  else
    s.no_code_reason = std::move(ex.reason);
  return s;
}

namespace {

constexpr long long max_tokens = 1LL << 40;

json verdict_json(const env::verdict& v) { return json::parse(env::to_json(v)); }

} // namespace

std::string route::label() const {
  switch (kind) {
    case route_kind::health: return "health";
    case route_kind::metrics: return "metrics";
    case route_kind::tasks: return "tasks";
    case route_kind::task: return "task";
    case route_kind::check: return "check";
    case route_kind::open_group: return "groups";
    case route_kind::view_group: return "group";
    case route_kind::turn: return "turns";
    case route_kind::completions: return "completions";
    case route_kind::chat_completions: return "chat_completions";
    case route_kind::models: return "models";
    case route_kind::openenv_health: return "openenv_health";
    case route_kind::openenv_metadata: return "openenv_metadata";
    case route_kind::openenv_schema: return "openenv_schema";
    case route_kind::openenv_reset: return "openenv_reset";
    case route_kind::openenv_step: return "openenv_step";
    case route_kind::openenv_state: return "openenv_state";
    case route_kind::unknown:
    case route_kind::wrong_method: return "unknown";
  }
  return "unknown";
}

route match(const std::string& method, const std::string& target) {
  auto p = split_path(target);
  if (p.size() == 1 && p[0] == "health")
    return known(route_kind::health, method, "GET");
  if (p.size() == 1 && p[0] == "metrics")
    return known(route_kind::metrics, method, "GET");
  if (p.size() == 2 && p[0] == "openenv" && p[1] == "health")
    return known(route_kind::openenv_health, method, "GET");
  if ((p.size() == 1 || (p.size() == 2 && p[0] == "openenv"))) {
    const auto& last = p.back();
    if (last == "metadata")
      return known(route_kind::openenv_metadata, method, "GET");
    if (last == "schema")
      return known(route_kind::openenv_schema, method, "GET");
    if (last == "reset")
      return known(route_kind::openenv_reset, method, "POST");
    if (last == "step")
      return known(route_kind::openenv_step, method, "POST");
    if (last == "state")
      return known(route_kind::openenv_state, method, "GET");
  }
  if (p.size() >= 2 && p[0] == schema_version) {
    if (p.size() == 2 && p[1] == "tasks")
      return known(route_kind::tasks, method, "GET");
    if (p.size() == 3 && p[1] == "tasks")
      return known(route_kind::task, method, "GET", p[2]);
    if (p.size() == 2 && p[1] == "check")
      return known(route_kind::check, method, "POST");
    if (p.size() == 2 && p[1] == "groups")
      return known(route_kind::open_group, method, "POST");
    if (p.size() == 3 && p[1] == "groups")
      return known(route_kind::view_group, method, "GET", p[2]);
    if (p.size() == 4 && p[1] == "groups" && p[3] == "turns")
      return known(route_kind::turn, method, "POST", p[2]);
    if (p.size() == 2 && p[1] == "completions")
      return known(route_kind::completions, method, "POST");
    if (p.size() == 3 && p[1] == "chat" && p[2] == "completions")
      return known(route_kind::chat_completions, method, "POST");
    if (p.size() == 2 && p[1] == "models")
      return known(route_kind::models, method, "GET");
  }
  return {};
}

// `source` (code as is) or `completion` (code extracted), exactly one of them.
static result<msg::submission> one_text(const json& j, const std::string& source_key,
                                 const std::string& completion_key, long long tokens) {
  const bool has_src = j.contains(source_key), has_comp = j.contains(completion_key);
  if (has_src == has_comp)
    return make_error(has_src ? "fields " + source_key + " and " + completion_key
                                  + ": send one of them, not both"
                              : "missing field '" + source_key + "' (or '" + completion_key + "')");
  auto text = string_field(j, has_src ? source_key : completion_key);
  if (!text)
    return text.err();
  return submission_from(*text, has_comp, tokens);
}

result<msg::check_call> parse_check(const std::string& body) {
  auto j = parse_object(body, {"schema", "task", "source", "completion"});
  if (!j)
    return j.err();
  auto task = string_field(*j, "task");
  if (!task)
    return task.err();
  auto s = one_text(*j, "source", "completion", 0);
  if (!s)
    return s.err();
  return msg::check_call{*task, std::move(*s)};
}

result<msg::group_call> parse_group(const std::string& body, int max_group_size) {
  auto j = parse_object(body, {"schema", "task", "sources", "completions", "tokens"});
  if (!j)
    return j.err();
  auto task = string_field(*j, "task");
  if (!task)
    return task.err();
  const bool has_src = j->contains("sources"), has_comp = j->contains("completions");
  if (has_src == has_comp)
    return make_error(has_src ? "fields sources and completions: send one of them, not both"
                              : "missing field 'sources' (or 'completions')");
  const std::string key = has_src ? "sources" : "completions";
  const auto& arr = (*j)[key];
  if (!arr.is_array())
    return make_error("field " + key + ": expected an array of strings, got " + arr.type_name());
  if (arr.empty() || arr.size() > static_cast<std::size_t>(max_group_size))
    return make_error("field " + key + ": a group has 1 to " + std::to_string(max_group_size)
                      + " attempts (serve.max_group_size), got " + std::to_string(arr.size()));
  std::vector<long long> tokens(arr.size(), 0);
  if (j->contains("tokens")) {
    const auto& t = (*j)["tokens"];
    if (!t.is_array() || t.size() != arr.size())
      return make_error("field tokens: expected an array of " + std::to_string(arr.size())
                        + " integers (one per attempt)");
    for (std::size_t i = 0; i < t.size(); ++i) {
      auto n = int_value(t[i], "tokens[" + std::to_string(i) + "]", 0, max_tokens);
      if (!n)
        return n.err();
      tokens[i] = *n;
    }
  }
  msg::group_call call;
  call.task = *task;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string())
      return make_error("field " + key + "[" + std::to_string(i) + "]: expected a string, got "
                        + arr[i].type_name());
    call.attempts.push_back(submission_from(arr[i].get<std::string>(), has_comp, tokens[i]));
  }
  return call;
}

result<msg::turn_call> parse_turn(const std::string& body, const std::string& group_id) {
  auto j = parse_object(body, {"schema", "attempt", "turn", "source", "completion", "tokens"});
  if (!j)
    return j.err();
  auto attempt = int_field(*j, "attempt", 0, 1 << 20);
  if (!attempt)
    return attempt.err();
  auto turn = int_field(*j, "turn", 1, 1 << 20);
  if (!turn)
    return turn.err();
  long long tokens = 0;
  if (j->contains("tokens")) {
    auto t = int_field(*j, "tokens", 0, max_tokens);
    if (!t)
      return t.err();
    tokens = *t;
  }
  auto s = one_text(*j, "source", "completion", tokens);
  if (!s)
    return s.err();
  msg::turn_call call;
  call.group = group_id;
  call.attempt = static_cast<std::int32_t>(*attempt);
  call.turn = static_cast<std::int32_t>(*turn);
  call.s = std::move(*s);
  return call;
}

int http_status(msg::serve_status s) {
  switch (s) {
    case msg::serve_status::ok: return 200;
    case msg::serve_status::bad_request: return 400;
    case msg::serve_status::not_found: return 404;
    case msg::serve_status::conflict: return 409;
    case msg::serve_status::busy: return 429;
    case msg::serve_status::failed: return 502;
  }
  return 500;
}

std::string error_body(int status, const std::string& message) {
  json j{{"schema", schema_version}, {"error", {{"status", status}, {"message", message}}}};
  return dump_lossy(j);
}

std::string check_body(const env::verdict& v) { return env::to_json(v); }

std::string group_body(const msg::group_view& g) {
  json j;
  j["schema"] = schema_version;
  j["group"] = g.id;
  j["task"] = g.task;
  j["finished"] = g.finished;
  j["dcp"] = algo::to_string(g.dcp);
  j["activated"] = g.activated;
  j["turn1"] = {{"failed", g.turn1_failed}, {"passed", g.turn1_passed}, {"lost", g.turn1_lost}};
  j["estimator"] = g.estimator;
  j["expires_in_seconds"] = g.expires_in_seconds;
  json atts = json::array();
  json rewards = json::array();
  for (const auto& a : g.attempts) {
    json aj;
    aj["attempt"] = a.attempt;
    aj["state"] = msg::to_string(a.state);
    aj["end"] = algo::to_string(a.end);
    if (!a.end_reason.empty())
      aj["end_reason"] = a.end_reason;
    aj["solved_turn"] = a.solved_turn;
    json turns = json::array();
    for (const auto& t : a.turns)
      turns.push_back({{"turn", t.turn}, {"verdict", t.judged ? verdict_json(t.v) : json()}});
    aj["turns"] = std::move(turns);
    if (a.next_turn > 0) {
      aj["next_turn"] = a.next_turn;
      aj["next_prompt"] = a.next_prompt;
    }
    if (g.finished) {
      aj["reward"] = a.reward;
      aj["advantages"] = a.advantages;
      rewards.push_back(a.reward);
    }
    atts.push_back(std::move(aj));
  }
  j["attempts"] = std::move(atts);
  if (g.finished)
    j["rewards"] = std::move(rewards);
  return dump_lossy(j);
}

std::string tasks_body(const std::map<std::string, env::task_spec>& tasks) {
  json list = json::array();
  for (const auto& [name, t] : tasks)
    list.push_back({{"name", name}, {"level", t.level}, {"split", env::to_string(t.split)},
                    {"category", env::to_string(t.category)}, {"signature", t.signature}});
  return dump_lossy(json{{"schema", schema_version}, {"tasks", std::move(list)}});
}

std::string task_body(const env::task_spec& t, const std::string& prompt) {
  json j{{"schema", schema_version},
         {"name", t.name},
         {"level", t.level},
         {"split", env::to_string(t.split)},
         {"category", env::to_string(t.category)},
         {"signature", t.signature},
         {"description", t.description},
         {"allowed_libraries", t.allowed_libraries},
         {"prompt", prompt}};
  return dump_lossy(j);
}

} // namespace leap::serve
