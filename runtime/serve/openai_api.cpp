// OpenAI's requests: the bodies of /v1/completions and /v1/chat/completions parsed into a
// completion_request (every error names its field), the error and model-list bodies; the
// answers are rendered in openai_answers.cpp.
#include "runtime/serve/openai_api.hpp"

#include "common/json_text.hpp"
#include "policy/model/sampler.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace leap::serve::openai {

using nlohmann::json;

namespace {

api_error bad(const std::string& param, const std::string& message) {
  api_error e;
  e.status = 400;
  e.param = param;
  e.message = message;
  return e;
}

parsed_request fail(api_error e) {
  parsed_request p;
  p.error = std::move(e);
  return p;
}

// The body as an object, or the error.
std::optional<api_error> parse_object(const std::string& body, json& j) {
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    return bad("", "malformed JSON at byte " + std::to_string(e.byte));
  }
  if (!j.is_object())
    return bad("", "the body must be a JSON object");
  return std::nullopt;
}

bool given(const json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

// The keys both endpoints share: model, n, temperature, top_p, max_tokens, stop, seed, stream.
std::optional<api_error> common_fields(const json& j, completion_request& r) {
  if (!j.contains("model") || !j["model"].is_string())
    return bad("model", "field model: expected a string");
  r.model = j["model"].get<std::string>();
  if (given(j, "n")) {
    if (!j["n"].is_number_integer() || j["n"].get<long long>() < 1 || j["n"].get<long long>() > max_n)
      return bad("n", "field n: expected an integer in [1, " + std::to_string(max_n) + "], got "
                        + j["n"].dump());
    r.n = j["n"].get<int>();
  }
  if (given(j, "temperature")) {
    if (!j["temperature"].is_number() || j["temperature"].get<double>() < 0
        || j["temperature"].get<double>() > 2)
      return bad("temperature", "field temperature: expected a number in [0, 2], got "
                                  + j["temperature"].dump());
    r.temperature = j["temperature"].get<double>();
  }
  if (given(j, "top_p")) {
    if (!j["top_p"].is_number() || !(j["top_p"].get<double>() > 0) || j["top_p"].get<double>() > 1)
      return bad("top_p", "field top_p: expected a number in (0, 1], got " + j["top_p"].dump());
    r.top_p = j["top_p"].get<double>();
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (!given(j, key))
      continue;
    if (!j[key].is_number_integer() || j[key].get<long long>() < 1
        || j[key].get<long long>() > 1'000'000)
      return bad(key, std::string("field ") + key + ": expected a positive integer, got "
                        + j[key].dump());
    r.max_tokens = j[key].get<int>();
  }
  if (given(j, "stop")) {
    const auto& s = j["stop"];
    if (s.is_string()) {
      r.stop.push_back(s.get<std::string>());
    } else if (s.is_array()) {
      for (const auto& x : s) {
        if (!x.is_string())
          return bad("stop", "field stop: expected a string or an array of strings");
        r.stop.push_back(x.get<std::string>());
      }
    } else {
      return bad("stop", "field stop: expected a string or an array of strings");
    }
    if (r.stop.size() > static_cast<std::size_t>(max_stop))
      return bad("stop", "field stop: at most " + std::to_string(max_stop) + " stop strings");
    for (const auto& x : r.stop)
      if (x.empty())
        return bad("stop", "field stop: an empty stop string");
  }
  if (given(j, "seed")) {
    if (!j["seed"].is_number_integer())
      return bad("seed", "field seed: expected an integer, got " + j["seed"].dump());
    r.seed = j["seed"].is_number_unsigned() ? j["seed"].get<std::uint64_t>()
                                            : static_cast<std::uint64_t>(j["seed"].get<std::int64_t>());
  }
  if (given(j, "return_token_ids")) {
    if (!j["return_token_ids"].is_boolean())
      return bad("return_token_ids", "field return_token_ids: expected a boolean");
    r.return_token_ids = j["return_token_ids"].get<bool>();
  }
  if (given(j, "stream")) {
    if (!j["stream"].is_boolean())
      return bad("stream", "field stream: expected a boolean");
    r.stream = j["stream"].get<bool>();
  }
  return std::nullopt;
}

} // namespace

std::uint64_t row_seed(std::uint64_t seed, std::uint64_t index) {
  return policy::sequence_seed(seed, index);
}

parsed_request parse_completion(const std::string& body) {
  json j;
  if (auto e = parse_object(body, j))
    return fail(*e);
  completion_request r;
  r.chat = false;
  r.max_tokens = 16; // OpenAI's default for completions
  if (auto e = common_fields(j, r))
    return fail(*e);
  if (!j.contains("prompt"))
    return fail(bad("prompt", "missing field 'prompt'"));
  const auto& p = j["prompt"];
  if (p.is_string()) {
    r.prompts.push_back(p.get<std::string>());
  } else if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
    std::vector<int> ids;
    for (const auto& x : p) {
      if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > (1LL << 30))
        return fail(bad("prompt", "field prompt: an array of token ids must hold only ids"));
      ids.push_back(x.get<int>());
    }
    r.prompt_ids.push_back(std::move(ids));
  } else if (p.is_array() && !p.empty()) {
    for (const auto& x : p) {
      if (!x.is_string())
        return fail(bad("prompt", "field prompt: expected a string, an array of strings or an "
                                  "array of token ids"));
      r.prompts.push_back(x.get<std::string>());
    }
  } else {
    return fail(bad("prompt", "field prompt: expected a string, an array of strings or an array "
                              "of token ids"));
  }
  if ((r.prompts.size() + r.prompt_ids.size()) * static_cast<std::size_t>(r.n)
      > static_cast<std::size_t>(max_n))
    return fail(bad(r.n > 1 ? "n" : "prompt", "fields prompt and n: at most " + std::to_string(max_n)
                                                + " completions (prompts x n) per request"));
  if (given(j, "logprobs")) {
    if (!j["logprobs"].is_number_integer() || j["logprobs"].get<long long>() < 0
        || j["logprobs"].get<long long>() > 5)
      return fail(bad("logprobs", "field logprobs: expected an integer in [0, 5], got "
                                    + j["logprobs"].dump()));
    r.logprobs = true;
    r.top_logprobs = j["logprobs"].get<int>();
  }
  if (given(j, "echo") && j["echo"] != false)
    return fail(bad("echo", "field echo: not supported"));
  if (given(j, "best_of") && j["best_of"] != r.n && j["best_of"] != 1)
    return fail(bad("best_of", "field best_of: not supported"));
  if (given(j, "suffix"))
    return fail(bad("suffix", "field suffix: not supported"));
  return {r, {}};
}

parsed_request parse_chat(const std::string& body, policy::chat_format format) {
  json j;
  if (auto e = parse_object(body, j))
    return fail(*e);
  completion_request r;
  r.chat = true;
  if (auto e = common_fields(j, r))
    return fail(*e);
  if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
    return fail(bad("messages", "field messages: expected a non-empty array of messages"));
  std::vector<policy::chat_message> msgs;
  for (std::size_t i = 0; i < j["messages"].size(); ++i) {
    const auto& m = j["messages"][i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return fail(bad(at + ".role", "field " + at + ".role: expected a string"));
    auto role = m["role"].get<std::string>();
    if (role == "developer")
      role = "system";
    if (role != "system" && role != "user" && role != "assistant")
      return fail(bad(at + ".role", "field " + at + ".role: \"" + role
                                      + "\" is not supported (system, developer, user, assistant)"));
    std::string content;
    const auto c = m.contains("content") ? m["content"] : json();
    if (c.is_string()) {
      content = c.get<std::string>();
    } else if (c.is_array()) {
      for (const auto& part : c) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text")
            || !part["text"].is_string())
          return fail(bad(at + ".content", "field " + at + ".content: only text parts are supported"));
        content += part["text"].get<std::string>();
      }
    } else if (!(c.is_null() && role == "assistant")) {
      return fail(bad(at + ".content", "field " + at + ".content: expected a string"));
    }
    msgs.push_back({role, content});
  }
  r.prompts.push_back(policy::render_chat(msgs, format));
  if (given(j, "logprobs")) {
    if (!j["logprobs"].is_boolean())
      return fail(bad("logprobs", "field logprobs: expected a boolean"));
    r.logprobs = j["logprobs"].get<bool>();
  }
  if (given(j, "top_logprobs")) {
    if (!j["top_logprobs"].is_number_integer() || j["top_logprobs"].get<long long>() < 0
        || j["top_logprobs"].get<long long>() > 20)
      return fail(bad("top_logprobs", "field top_logprobs: expected an integer in [0, 20]"));
    if (!r.logprobs)
      return fail(bad("top_logprobs", "field top_logprobs: needs logprobs: true"));
    r.top_logprobs = j["top_logprobs"].get<int>();
  }
  if (given(j, "tools") || given(j, "functions"))
    return fail(bad(given(j, "tools") ? "tools" : "functions", "tool calls are not supported"));
  if (given(j, "response_format") && j["response_format"].value("type", "text") != "text")
    return fail(bad("response_format", "field response_format: only {\"type\": \"text\"}"));
  return {r, {}};
}

std::string error_body(const api_error& e) {
  json err{{"message", e.message},
           {"type", e.type},
           {"param", e.param.empty() ? json(nullptr) : json(e.param)},
           {"code", nullptr}};
  return dump_lossy(json{{"error", err}});
}

std::string models_body(const std::string& model, std::int64_t created) {
  return dump_lossy(json{{"object", "list"},
                         {"data", json::array({{{"id", model},
                                                {"object", "model"},
                                                {"created", created},
                                                {"owned_by", "leap"}}})}});
}
} // namespace leap::serve::openai
