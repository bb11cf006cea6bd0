// OpenAI's answers rendered from finished choices: the JSON body of a completion or a chat
// completion (with logprobs and token ids when asked), and the server-sent events of a streamed
// one (stream_encoder), each event as it comes.
#include "runtime/serve/openai_api.hpp"

#include "common/json_text.hpp"

#include <nlohmann/json.hpp>

namespace leap::serve::openai {

using nlohmann::json;

namespace {

std::string token_text(const std::string& bytes) { return bytes; }

json bytes_of(const std::string& s) {
  json a = json::array();
  for (unsigned char c : s)
    a.push_back(static_cast<int>(c));
  return a;
}

// Length of the longest prefix of `s` that ends on a UTF-8 character boundary (an incomplete
// trailing sequence is held back; invalid bytes are passed through).
std::size_t complete_prefix(const std::string& s) {
  std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80)
      continue; // a continuation byte: look further back
    std::size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

// The legacy completions' top_logprobs entry of one position: {text: log-prob} of the `top` most
// likely tokens (the sampled one alone when the alternatives are not known).
json completion_top(const std::string& piece, float lp, const alternatives* alts, int top) {
  json t = json::object();
  if (top <= 0)
    return t;
  if (!alts || alts->empty()) {
    t[token_text(piece)] = lp;
    return t;
  }
  for (std::size_t k = 0; k < alts->size() && k < static_cast<std::size_t>(top); ++k) {
    const auto key = token_text((*alts)[k].first);
    if (!t.contains(key)) // two tokens with the same text: the likelier one
      t[key] = (*alts)[k].second;
  }
  return t;
}

// The legacy completions' logprobs object, a token at a time (its bytes start at `offset` in the
// choice's text).
struct completion_logprobs_builder {
  json tokens = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
  void add(const std::string& piece, float lp, const alternatives* alts, std::size_t offset, int top) {
    tokens.push_back(token_text(piece));
    lps.push_back(lp);
    tops.push_back(completion_top(piece, lp, alts, top));
    offsets.push_back(offset);
  }
  json done() const {
    return {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", tops},
            {"text_offset", offsets}};
  }
};

json completion_logprobs(const choice& c, int top) {
  completion_logprobs_builder b;
  std::size_t offset = 0;
  for (std::size_t k = 0; k < c.pieces.size(); ++k) {
    b.add(c.pieces[k], c.logprobs[k], k < c.top.size() ? &c.top[k] : nullptr, offset, top);
    offset += c.pieces[k].size();
  }
  return b.done();
}

// A chat logprobs entry: the token, its log-prob and bytes, and the `top` most likely tokens at
// its position (the sampled one alone when the alternatives are not known).
json chat_logprob_entry(const std::string& piece, float lp, const alternatives* alts, int top) {
  json e{{"token", token_text(piece)}, {"logprob", lp}, {"bytes", bytes_of(piece)}};
  json tops = json::array();
  if (top > 0 && (!alts || alts->empty()))
    tops.push_back({{"token", token_text(piece)}, {"logprob", lp}, {"bytes", bytes_of(piece)}});
  else if (top > 0)
    for (std::size_t k = 0; k < alts->size() && k < static_cast<std::size_t>(top); ++k)
      tops.push_back({{"token", token_text((*alts)[k].first)},
                      {"logprob", (*alts)[k].second},
                      {"bytes", bytes_of((*alts)[k].first)}});
  e["top_logprobs"] = tops;
  return e;
}

json chat_logprobs(const choice& c, int top) {
  json content = json::array();
  for (std::size_t k = 0; k < c.pieces.size(); ++k)
    content.push_back(
      chat_logprob_entry(c.pieces[k], c.logprobs[k], k < c.top.size() ? &c.top[k] : nullptr, top));
  return {{"content", content}, {"refusal", nullptr}};
}

json usage_json(const usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json chunk_head(const completion_request& r, const answer_meta& m) {
  return {{"id", m.id},
          {"object", r.chat ? "chat.completion.chunk" : "text_completion"},
          {"created", m.created},
          {"model", m.model}};
}

} // namespace

std::string answer_body(const completion_request& r, const answer_meta& m,
                        const std::vector<choice>& choices, const usage& u) {
  json cs = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const auto& c = choices[i];
    json o{{"index", i}, {"finish_reason", c.finish_reason}};
    if (r.chat) {
      o["message"] = {{"role", "assistant"}, {"content", c.text}, {"refusal", nullptr}};
      o["logprobs"] = r.logprobs ? chat_logprobs(c, r.top_logprobs) : json(nullptr);
    } else {
      o["text"] = c.text;
      o["logprobs"] = r.logprobs ? completion_logprobs(c, r.top_logprobs) : json(nullptr);
    }
    if (r.return_token_ids)
      o["token_ids"] = c.tokens;
    cs.push_back(std::move(o));
  }
  json a{{"id", m.id},
         {"object", r.chat ? "chat.completion" : "text_completion"},
         {"created", m.created},
         {"model", m.model},
         {"choices", cs},
         {"usage", usage_json(u)}};
  if (r.return_token_ids)
    a["prompt_token_ids"] = u.prompt_ids;
  return dump_lossy(a);
}

namespace {

std::string event_of(const json& j) { return "data: " + dump_lossy(j) + "\n\n"; }

// The longest proper prefix of a stop string that `text` ends with (its bytes are held back).
std::size_t stop_prefix_at_end(const std::string& text, const std::vector<std::string>& stops) {
  std::size_t hold = 0;
  for (const auto& st : stops)
    for (std::size_t k = std::min(st.size() - 1, text.size()); k > hold; --k)
      if (text.compare(text.size() - k, k, st, 0, k) == 0) {
        hold = k;
        break;
      }
  return hold;
}

} // namespace

stream_encoder::stream_encoder(completion_request r, answer_meta m, std::size_t choices)
    : r_(std::move(r)), m_(std::move(m)), c_(choices) {}

const std::string& stream_encoder::text(std::size_t i) const { return c_.at(i).text; }

std::string stream_encoder::open(std::size_t i) {
  if (!r_.chat)
    return {};
  json ch{{"index", i}, {"logprobs", nullptr}, {"finish_reason", nullptr},
          {"delta", {{"role", "assistant"}, {"content", ""}}}};
  auto j = chunk_head(r_, m_);
  j["choices"] = json::array({ch});
  return event_of(j);
}

std::string stream_encoder::token(std::size_t i, int id, const std::string& piece, float logprob,
                                  const alternatives& top) {
  auto& c = c_.at(i);
  if (c.done)
    return {};
  c.tokens.push_back(id);
  if (c.cut)
    return {};
  const auto start = c.text.size();
  c.text += piece;
  c.held.push_back({start, c.text.size(), piece, logprob, top});
  // A stop string ends the text where it begins (it may have begun in earlier, held bytes).
  std::size_t cut = std::string::npos;
  for (const auto& st : r_.stop) {
    auto at = c.text.find(st, c.sent);
    if (at != std::string::npos && (cut == std::string::npos || at < cut))
      cut = at;
  }
  if (cut != std::string::npos) {
    c.cut = true;
    c.text.resize(cut);
    // As the non-streamed answer: tokens that start before the cut keep their bytes up to it.
    std::vector<pending_token> kept;
    for (auto& t : c.held)
      if (t.start < cut || (t.start == cut && t.piece.empty())) {
        t.end = std::min(t.end, cut);
        t.piece.resize(t.end - t.start);
        kept.push_back(std::move(t));
      }
    c.held = std::move(kept);
    return emit(i, cut, nullptr);
  }
  auto upto = c.text.size() - stop_prefix_at_end(c.text, r_.stop);
  upto = c.sent + complete_prefix(c.text.substr(c.sent, upto - c.sent));
  return upto > c.sent ? emit(i, upto, nullptr) : std::string();
}

void stream_encoder::token_after_cut(std::size_t i, int id) {
  auto& c = c_.at(i);
  if (!c.done)
    c.tokens.push_back(id);
}

std::string stream_encoder::finish(std::size_t i, const std::string& finish_reason) {
  auto& c = c_.at(i);
  if (c.done)
    return {};
  c.done = true;
  std::string out;
  if (c.sent < c.text.size() || !c.held.empty())
    out += emit(i, c.text.size(), nullptr);
  out += emit(i, c.text.size(), c.cut ? "stop" : finish_reason.c_str());
  return out;
}

// One chunk of choice i: text [sent, upto) and the log-probs of the held tokens that end by
// `upto`; with a finish reason, the choice's last chunk (no text, token_ids when asked).
std::string stream_encoder::emit(std::size_t i, std::size_t upto, const char* finish_reason) {
  auto& c = c_[i];
  const std::string text = finish_reason ? std::string() : c.text.substr(c.sent, upto - c.sent);
  json lp = nullptr;
  if (!finish_reason) {
    std::vector<pending_token> ready, rest;
    for (auto& t : c.held)
      (t.end <= upto ? ready : rest).push_back(std::move(t));
    c.held = std::move(rest);
    if (r_.logprobs) {
      if (r_.chat) {
        json entries = json::array();
        for (const auto& t : ready)
          entries.push_back(chat_logprob_entry(t.piece, t.logprob, &t.top, r_.top_logprobs));
        lp = {{"content", entries}, {"refusal", nullptr}};
      } else {
        completion_logprobs_builder b;
        for (const auto& t : ready)
          b.add(t.piece, t.logprob, &t.top, t.start, r_.top_logprobs);
        lp = b.done();
      }
    }
    c.sent = upto;
  }
  json ch{{"index", i},
          {"logprobs", lp},
          {"finish_reason", finish_reason ? json(finish_reason) : json(nullptr)}};
  if (r_.return_token_ids && finish_reason)
    ch["token_ids"] = c.tokens;
  if (r_.chat) {
    json delta = json::object();
    if (!text.empty())
      delta["content"] = text;
    ch["delta"] = delta;
  } else {
    ch["text"] = text;
  }
  auto j = chunk_head(r_, m_);
  j["choices"] = json::array({ch});
  return event_of(j);
}

std::string stream_encoder::close(const usage& u) {
  auto tail = chunk_head(r_, m_);
  tail["choices"] = json::array();
  tail["usage"] = usage_json(u);
  return event_of(tail) + "data: [DONE]\n\n";
}

std::string stream_body(const completion_request& r, const answer_meta& m,
                        const std::vector<choice>& choices, const usage& u) {
  stream_encoder enc(r, m, choices.size());
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const auto& c = choices[i];
    out += enc.open(i);
    // choice_of cut pieces and log-probs at a stop string; the tokens after it only count.
    for (std::size_t k = 0; k < c.tokens.size(); ++k) {
      if (k < c.pieces.size())
        out += enc.token(i, c.tokens[k], c.pieces[k], k < c.logprobs.size() ? c.logprobs[k] : 0.0f,
                         k < c.top.size() ? c.top[k] : alternatives{});
      else
        enc.token_after_cut(i, c.tokens[k]);
    }
    out += enc.finish(i, c.finish_reason);
  }
  out += enc.close(u);
  return out;
}

} // namespace leap::serve::openai
