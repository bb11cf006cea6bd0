// tokenizer_config.json and generation_config.json: see hf_files.hpp.
#include "policy/text/hf_files.hpp"

#include "common/fs.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace leap::policy {
namespace {

using json = nlohmann::json;

result<json> parse_object(std::string_view text, const std::string& source) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(source + ": not valid JSON");
  if (!j.is_object()) return make_error(source + ": the top level must be a JSON object");
  return j;
}

std::string key_error(const std::string& source, const std::string& key, const std::string& what) {
  return source + ": key '" + key + "': " + what;
}

// A special token: null, a string, or an AddedToken object with a string "content".
result<std::string> read_token(const json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) return c->get<std::string>();
  }
  return make_error(key_error(source, key, "expected a string, an object with a string \"content\", or null; got " +
                                               it->dump()));
}

// An id: null, a non-negative integer, or (when `list` is given) a list of them.
result<void> read_id(const json& j, const char* key, const std::string& source, std::int64_t& one,
                     std::vector<std::int64_t>* list) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  auto ok = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0; };
  if (ok(*it)) {
    one = it->get<std::int64_t>();
    if (list) list->push_back(one);
    return {};
  }
  if (list && it->is_array() && !it->empty()) {
    for (const auto& v : *it) {
      if (!ok(v)) return make_error(key_error(source, key, "list element " + v.dump() + " is not a non-negative integer"));
      list->push_back(v.get<std::int64_t>());
    }
    one = list->front();
    return {};
  }
  return make_error(key_error(source, key,
                              std::string("expected a non-negative integer") +
                                  (list ? " or a non-empty list of them" : "") + ", got " + it->dump()));
}

// <dir>/<name> parsed by `parse`; the default value when the file does not exist.
template <class T>
result<T> load_optional(const std::string& dir, const char* name,
                        result<T> (*parse)(std::string_view, const std::string&)) {
  const std::string path = dir + "/" + name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return T{};
  auto text = read_file(path);
  if (!text) return text.err();
  return parse(*text, path);
}

} // namespace

std::int64_t hf_tokenizer_config::id_of(const std::string& token) const {
  if (token.empty()) return -1;
  for (const auto& [id, content] : added_tokens)
    if (content == token) return id;
  return -1;
}

result<hf_tokenizer_config> parse_tokenizer_config(std::string_view text, const std::string& source) {
  auto j = parse_object(text, source);
  if (!j) return j.err();
  hf_tokenizer_config c;
  for (auto [key, out] : {std::pair{"bos_token", &c.bos_token}, {"eos_token", &c.eos_token}, {"pad_token", &c.pad_token}}) {
    auto t = read_token(*j, key, source);
    if (!t) return t.err();
    *out = *t;
  }
  if (auto it = j->find("added_tokens_decoder"); it != j->end() && !it->is_null()) {
    if (!it->is_object()) return make_error(key_error(source, "added_tokens_decoder", "expected an object, got " + it->dump()));
    for (const auto& [id_text, tok] : it->items()) {
      const std::string key = "added_tokens_decoder." + id_text;
      errno = 0;
      char* end = nullptr;
      long long id = std::strtoll(id_text.c_str(), &end, 10);
      if (id_text.empty() || *end != '\0' || errno != 0 || id < 0)
        return make_error(key_error(source, key, "the key is not a token id"));
      if (!tok.is_object() || !tok.contains("content") || !tok["content"].is_string())
        return make_error(key_error(source, key, "expected an object with a string \"content\", got " + tok.dump()));
      c.added_tokens[id] = tok["content"].get<std::string>();
    }
  }
  if (auto it = j->find("chat_template"); it != j->end() && !it->is_null()) {
    if (it->is_string()) {
      c.chat_template = it->get<std::string>();
    } else if (it->is_array()) {
      for (const auto& t : *it) {
        if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("template") ||
            !t["template"].is_string())
          return make_error(key_error(source, "chat_template", "a list element is not {\"name\": string, \"template\": string}"));
        if (t["name"] == "default") c.chat_template = t["template"].get<std::string>();
      }
    } else {
      return make_error(key_error(source, "chat_template", "expected a string or a list of named templates, got " + it->dump()));
    }
  }
  return c;
}

result<hf_generation_config> parse_generation_config(std::string_view text, const std::string& source) {
  auto j = parse_object(text, source);
  if (!j) return j.err();
  hf_generation_config g;
  std::int64_t first_eos = -1;
  if (auto r = read_id(*j, "eos_token_id", source, first_eos, &g.eos_ids); !r) return r.err();
  if (auto r = read_id(*j, "bos_token_id", source, g.bos_id, nullptr); !r) return r.err();
  if (auto r = read_id(*j, "pad_token_id", source, g.pad_id, nullptr); !r) return r.err();
  return g;
}

result<hf_tokenizer_config> load_tokenizer_config(const std::string& dir) {
  return load_optional(dir, "tokenizer_config.json", &parse_tokenizer_config);
}

result<hf_generation_config> load_generation_config(const std::string& dir) {
  return load_optional(dir, "generation_config.json", &parse_generation_config);
}

} // namespace leap::policy
