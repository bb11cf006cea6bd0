// tokenizer.json reading and writing (Hugging Face tokenizers format, byte-level BPE subset).
#include "policy/text/tokenizer.hpp"

#include "common/fs.hpp"
#include "policy/text/byte_level.hpp"
#include "policy/text/tokenizer_model.hpp"

#include <nlohmann/json.hpp>

namespace leap::policy {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string type_of(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

// Token ids of a hostile or damaged file must not size allocations: 2^24 is far above any real
// vocabulary (and finish() also refuses ids much sparser than the token count).
constexpr std::int64_t max_token_id = (std::int64_t{1} << 24) - 1;

result<int> read_id(const json& j, const std::string& where) {
  if (!j.is_number_integer()) return make_error(where + ": id is not an integer");
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(max_token_id))
    return make_error(where + ": id " + j.dump() + " is out of range (0.." + std::to_string(max_token_id) + ")");
  auto v = j.get<std::int64_t>();
  if (v < 0 || v > max_token_id)
    return make_error(where + ": id " + std::to_string(v) + " is out of range (0.." + std::to_string(max_token_id) + ")");
  return static_cast<int>(v);
}

bool is_true(const json& obj, const char* key) {
  return obj.contains(key) && obj[key].is_boolean() && obj[key].get<bool>();
}

result<void> read_normalizer(const json& n, detail::tokenizer_model& m) {
  if (n.is_null()) return {};
  std::string t = type_of(n);
  if (t == "NFC") {
    m.nfc = true;
    return {};
  }
  if (t == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
    for (const auto& x : n["normalizers"])
      if (auto r = read_normalizer(x, m); !r) return r;
    return {};
  }
  return make_error("normalizer '" + (t.empty() ? n.dump() : t)
                    + "' is not supported (only none or NFC)");
}

result<void> read_byte_level(const json& p, bool& use_regex) {
  if (is_true(p, "add_prefix_space"))
    return make_error("pre_tokenizer ByteLevel add_prefix_space=true is not supported");
  use_regex = !p.contains("use_regex") || is_true(p, "use_regex");
  return {};
}

result<void> read_pre_tokenizer(const json& p, detail::tokenizer_model& m) {
  std::string t = type_of(p);
  if (t == "ByteLevel") {
    bool use_regex = true;
    if (auto r = read_byte_level(p, use_regex); !r) return r;
    m.pattern = use_regex ? split_pattern::gpt2 : split_pattern::none;
    return {};
  }
  if (t == "Sequence" && p.contains("pretokenizers") && p["pretokenizers"].is_array()) {
    const auto& seq = p["pretokenizers"];
    if (seq.size() == 2 && type_of(seq[0]) == "Split" && type_of(seq[1]) == "ByteLevel") {
      const auto& s = seq[0];
      if (!s.contains("pattern") || !s["pattern"].is_object() || !s["pattern"].contains("Regex"))
        return make_error("pre_tokenizer Split: only a {\"Regex\": ...} pattern is supported");
      std::string behavior = s.value("behavior", std::string("Isolated"));
      if (behavior != "Isolated" || is_true(s, "invert"))
        return make_error("pre_tokenizer Split: only behavior Isolated with invert=false is supported");
      auto pat = split_pattern_from_regex(s["pattern"]["Regex"].get<std::string>());
      if (!pat) return pat.err();
      bool use_regex = false;
      if (auto r = read_byte_level(seq[1], use_regex); !r) return r;
      if (use_regex) return make_error("pre_tokenizer: Split followed by ByteLevel use_regex=true is not supported");
      m.pattern = *pat;
      return {};
    }
    if (seq.size() == 1) return read_pre_tokenizer(seq[0], m);
  }
  return make_error("pre_tokenizer '" + (t.empty() ? p.dump() : t)
                    + "' is not supported (ByteLevel, or Sequence[Split(Regex), ByteLevel])");
}

result<void> read_decoder(const json& d) {
  std::string t = type_of(d);
  if (t == "ByteLevel") return {};
  if (t == "Sequence" && d.contains("decoders") && d["decoders"].is_array()
      && d["decoders"].size() == 1)
    return read_decoder(d["decoders"][0]);
  return make_error("decoder '" + (t.empty() ? d.dump() : t) + "' is not supported (ByteLevel only)");
}

result<void> read_model(const json& mo, detail::tokenizer_model& m) {
  if (type_of(mo) != "BPE")
    return make_error("model.type must be \"BPE\", got '" + type_of(mo) + "'");
  if (is_true(mo, "byte_fallback"))
    return make_error("model.byte_fallback=true (SentencePiece-style BPE) is not supported: byte-level BPE only");
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (mo.contains(k) && mo[k].is_string() && !mo[k].get<std::string>().empty())
      return make_error(std::string("model.") + k + " is not supported");
  if (mo.contains("dropout") && mo["dropout"].is_number() && mo["dropout"].get<double>() != 0.0)
    return make_error("model.dropout is not supported (must be null or 0)");
  m.ignore_merges = is_true(mo, "ignore_merges");
  if (!mo.contains("vocab") || !mo["vocab"].is_object()) return make_error("model.vocab: missing");
  if (!mo.contains("merges") || !mo["merges"].is_array()) return make_error("model.merges: missing");
  // Vocab keyed by the byte-level spelling during merge resolution.
  std::unordered_map<std::string, int> by_symbol;
  by_symbol.reserve(mo["vocab"].size());
  m.vocab.reserve(mo["vocab"].size());
  for (const auto& [sym, idj] : mo["vocab"].items()) {
    auto idr = read_id(idj, "model.vocab['" + sym + "']");
    if (!idr) return idr.err();
    auto bytes = symbols_to_bytes(sym);
    if (!bytes) return make_error("model.vocab: " + bytes.message());
    int id = *idr;
    by_symbol.emplace(sym, id);
    if (!m.vocab.emplace(std::move(*bytes), id).second)
      return make_error("model.vocab: token '" + sym + "' is listed twice");
  }
  const auto& merges = mo["merges"];
  m.merges.reserve(merges.size());
  m.merge_list.reserve(merges.size());
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const auto& e = merges[r];
    std::string a, b;
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      auto sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        return make_error("model.merges[" + std::to_string(r) + "]: '" + s + "' is not \"a b\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      return make_error("model.merges[" + std::to_string(r) + "]: neither \"a b\" nor [a, b]");
    }
    auto ia = by_symbol.find(a), ib = by_symbol.find(b), ic = by_symbol.find(a + b);
    if (ia == by_symbol.end() || ib == by_symbol.end() || ic == by_symbol.end())
      return make_error("model.merges[" + std::to_string(r) + "]: '" + a + " " + b
                        + "' uses or makes a token missing from model.vocab");
    if (m.merges.add(ia->second, ib->second, static_cast<int>(m.merge_list.size()), ic->second))
      m.merge_list.emplace_back(ia->second, ib->second);
  }
  return {};
}

result<void> read_added(const json& arr, detail::tokenizer_model& m) {
  if (arr.is_null()) return {};
  if (!arr.is_array()) return make_error("added_tokens: not an array");
  for (const auto& t : arr) {
    if (!t.is_object() || !t.contains("id") || !t.contains("content") || !t["id"].is_number_integer()
        || !t["content"].is_string())
      return make_error("added_tokens: each entry needs an integer id and a string content");
    std::string content = t["content"].get<std::string>();
    auto id = read_id(t["id"], "added_tokens['" + content + "']");
    if (!id) return id.err();
    for (const char* k : {"lstrip", "rstrip", "single_word"})
      if (is_true(t, k))
        return make_error("added_tokens: '" + content + "' has " + k + "=true, which is not supported");
    m.added.push_back({*id, std::move(content), t.value("special", false)});
  }
  return {};
}

result<std::shared_ptr<detail::tokenizer_model>> parse(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return make_error(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return make_error("not a tokenizer.json object");
  auto m = std::make_shared<detail::tokenizer_model>();
  try {
    if (!j.contains("model")) return make_error("model: missing");
    if (auto r = read_model(j["model"], *m); !r) return r.err();
    if (auto r = read_normalizer(j.value("normalizer", json()), *m); !r) return r.err();
    if (!j.contains("pre_tokenizer") || j["pre_tokenizer"].is_null())
      return make_error("pre_tokenizer: missing (a byte-level BPE needs ByteLevel)");
    if (auto r = read_pre_tokenizer(j["pre_tokenizer"], *m); !r) return r.err();
    if (!j.contains("decoder") || j["decoder"].is_null())
      return make_error("decoder: missing (ByteLevel expected)");
    if (auto r = read_decoder(j["decoder"]); !r) return r.err();
    if (auto r = read_added(j.value("added_tokens", json()), *m); !r) return r.err();
  } catch (const json::exception& e) {
    return make_error(std::string("unexpected JSON shape: ") + e.what());
  }
  if (auto r = m->finish(); !r) return r.err();
  return m;
}

ojson pre_tokenizer_json(split_pattern p) {
  ojson bl = {{"type", "ByteLevel"},
              {"add_prefix_space", false},
              {"trim_offsets", true},
              {"use_regex", p == split_pattern::gpt2}};
  if (p == split_pattern::none || p == split_pattern::gpt2) return bl;
  ojson split = {{"type", "Split"},
                 {"pattern", {{"Regex", split_regex(p)}}},
                 {"behavior", "Isolated"},
                 {"invert", false}};
  return {{"type", "Sequence"}, {"pretokenizers", ojson::array({split, bl})}};
}

} // namespace

result<tokenizer> tokenizer::from_json(std::string_view text) {
  auto m = parse(text);
  if (!m) return make_error("tokenizer.json: " + m.message());
  return tokenizer(std::move(*m));
}

result<tokenizer> tokenizer::load(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.err();
  auto m = parse(*text);
  if (!m) return make_error(path + ": " + m.message());
  return tokenizer(std::move(*m));
}

std::string tokenizer::to_json() const {
  const auto& m = *m_;
  ojson added = ojson::array();
  for (const auto& t : m.added)
    added.push_back({{"id", t.id},
                     {"content", t.content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", t.special}});
  ojson vocab = ojson::object();
  for (std::size_t id = 0; id < m.id_bytes.size(); ++id) {
    // Model vocab entries only (added tokens live in added_tokens).
    auto it = m.vocab.find(m.id_bytes[id]);
    if (it != m.vocab.end() && it->second == static_cast<int>(id))
      vocab[bytes_to_symbols(m.id_bytes[id])] = id;
  }
  ojson merges = ojson::array();
  for (const auto& [a, b] : m.merge_list)
    merges.push_back(bytes_to_symbols(m.id_bytes[a]) + " " + bytes_to_symbols(m.id_bytes[b]));
  ojson j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = std::move(added);
  j["normalizer"] = m.nfc ? ojson{{"type", "NFC"}} : ojson();
  j["pre_tokenizer"] = pre_tokenizer_json(m.pattern);
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true},
                  {"use_regex", true}};
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", m.ignore_merges},
                {"vocab", std::move(vocab)},
                {"merges", std::move(merges)}};
  return j.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

} // namespace leap::policy
