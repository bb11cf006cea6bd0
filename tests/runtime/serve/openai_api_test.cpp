// The OpenAI-compatible API of `leap serve --checkpoint` without sockets or a model
// (runtime/serve/openai_api.hpp): routes, request parsing (errors name the field), answers and
// server-sent events, per-row seeds.
#include "runtime/serve/api.hpp"
#include "runtime/serve/openai_api.hpp"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <set>

using namespace leap::serve;
using nlohmann::json;

TEST(OpenAIApi, RoutesAreMatched) {
  EXPECT_EQ(match("POST", "/v1/completions").kind, route_kind::completions);
  EXPECT_EQ(match("POST", "/v1/chat/completions").kind, route_kind::chat_completions);
  EXPECT_EQ(match("GET", "/v1/models").kind, route_kind::models);
  auto wrong = match("GET", "/v1/chat/completions");
  EXPECT_EQ(wrong.kind, route_kind::wrong_method);
  EXPECT_EQ(wrong.allow, "POST");
  EXPECT_EQ(match("POST", "/v1/chat").kind, route_kind::unknown);
}

TEST(OpenAIApi, RequestsAreParsed) {
  auto c = openai::parse_completion(
    R"({"model":"m","prompt":["a","b"],"n":2,"temperature":0.5,"top_p":0.9,"max_tokens":7,)"
    R"("stop":"x","seed":3,"logprobs":2,"stream":true,"user":"ignored"})");
  ASSERT_TRUE(c.request) << c.error.message;
  EXPECT_EQ(c.request->prompts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.request->n, 2);
  EXPECT_EQ(c.request->max_tokens, 7);
  EXPECT_EQ(c.request->stop, (std::vector<std::string>{"x"}));
  EXPECT_EQ(*c.request->seed, 3u);
  EXPECT_TRUE(c.request->logprobs);
  EXPECT_EQ(c.request->top_logprobs, 2);
  EXPECT_TRUE(c.request->stream);
  auto ids = openai::parse_completion(R"({"model":"m","prompt":[1,2,3]})");
  ASSERT_TRUE(ids.request);
  EXPECT_EQ(ids.request->prompt_ids, (std::vector<std::vector<int>>{{1, 2, 3}}));
  EXPECT_EQ(ids.request->max_tokens, 16); // OpenAI's default for completions

  auto chat = openai::parse_chat(
    R"({"model":"m","messages":[{"role":"developer","content":"S"},)"
    R"({"role":"user","content":[{"type":"text","text":"U"}]}],"logprobs":true,"top_logprobs":1})");
  ASSERT_TRUE(chat.request) << chat.error.message;
  EXPECT_EQ(chat.request->prompts.at(0), "<|bos|><|user|>S\n\nU<|assistant|>");
  EXPECT_TRUE(chat.request->logprobs);
  EXPECT_EQ(chat.request->max_tokens, 0); // the server's default
  // The chat format of the served checkpoint (policy.chat_format): a developer message is system.
  const std::string two = R"({"model":"m","messages":[{"role":"developer","content":"S"},)"
                          R"({"role":"user","content":" U "}]})";
  auto chatml = openai::parse_chat(two, leap::policy::chat_format::chatml);
  ASSERT_TRUE(chatml.request) << chatml.error.message;
  EXPECT_EQ(chatml.request->prompts.at(0),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n U <|im_end|>\n<|im_start|>assistant\n");
  auto llama3 = openai::parse_chat(two, leap::policy::chat_format::llama3);
  ASSERT_TRUE(llama3.request) << llama3.error.message;
  EXPECT_EQ(llama3.request->prompts.at(0),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");

  auto many = openai::parse_completion(R"({"model":"m","prompt":["a","b","c"],"n":30})");
  ASSERT_FALSE(many.request);
  EXPECT_EQ(many.error.param, "n");
  auto bad = openai::parse_chat(R"({"model":"m","messages":[{"role":"user","content":"a"}],"n":99})");
  ASSERT_FALSE(bad.request);
  EXPECT_EQ(bad.error.param, "n");
  auto body = json::parse(openai::error_body(bad.error));
  EXPECT_EQ(body["error"]["param"], "n");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(body["error"]["code"].is_null());
}

TEST(OpenAIApi, RowSeedsDifferPerRowAndRequest) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t s = 0; s < 10; ++s)
    for (std::uint64_t i = 0; i < 10; ++i)
      seen.insert(openai::row_seed(s, i));
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(openai::row_seed(7, 0), openai::row_seed(7, 0));
}

namespace {

// The text deltas, log-prob entries and finish reasons of a piece of an event stream.
struct stream_seen {
  std::vector<std::string> deltas; // one per event with text
  std::string text;
  int logprob_tokens = 0;
  std::vector<std::string> finish;
  json token_ids;
  bool usage = false; // a chunk carried usage
};

stream_seen read_events(const std::string& s, bool chat) {
  stream_seen out;
  std::size_t at = 0;
  while ((at = s.find("data: ", at)) != std::string::npos) {
    auto end = s.find("\n\n", at);
    auto data = s.substr(at + 6, end - at - 6);
    at = end;
    if (data == "[DONE]")
      break;
    auto j = json::parse(data);
    out.usage = out.usage || j.contains("usage");
    for (auto& ch : j["choices"]) {
      std::string t;
      if (chat && ch["delta"].contains("content"))
        t = ch["delta"]["content"].get<std::string>();
      if (!chat)
        t = ch["text"].get<std::string>();
      if (!t.empty())
        out.deltas.push_back(t);
      out.text += t;
      if (!ch["logprobs"].is_null())
        out.logprob_tokens += static_cast<int>(
          (chat ? ch["logprobs"]["content"] : ch["logprobs"]["tokens"]).size());
      if (!ch["finish_reason"].is_null())
        out.finish.push_back(ch["finish_reason"].get<std::string>());
      if (ch.contains("token_ids"))
        out.token_ids = ch["token_ids"];
    }
  }
  return out;
}

} // namespace

TEST(OpenAIApi, AnswersAndStreamsCarryUsageAndTheSameText) {
  openai::completion_request r;
  r.chat = true;
  r.logprobs = true;
  openai::choice c;
  // "é" split over two tokens: the stream holds its first byte back.
  c.pieces = {"a", "\xC3", "\xA9", "b"};
  c.logprobs = {-0.1f, -0.2f, -0.3f, -0.4f};
  c.tokens = {1, 2, 3, 4};
  c.text = "a\xC3\xA9" "b";
  c.finish_reason = "length";
  openai::answer_meta m{"chatcmpl-1", "tiny", 5};
  openai::usage u;
  u.prompt_tokens = 3;
  u.completion_tokens = 4;
  auto a = json::parse(openai::answer_body(r, m, {c}, u));
  EXPECT_EQ(a["choices"][0]["message"]["content"], "a\xC3\xA9" "b");
  EXPECT_EQ(a["choices"][0]["logprobs"]["content"].size(), 4u);
  EXPECT_EQ(a["usage"]["total_tokens"], 7);
  auto s = openai::stream_body(r, m, {c}, u);
  auto seen = read_events(s, true);
  EXPECT_EQ(seen.text, c.text);
  EXPECT_EQ(seen.logprob_tokens, 4);
  EXPECT_TRUE(seen.usage);
  EXPECT_EQ(s.substr(s.size() - 14), "data: [DONE]\n\n");
}


// The live encoder: each token's text goes out as soon as it is sure, one event per token here.
TEST(OpenAIStreamEncoder, EveryTokenIsAnEventAsItComes) {
  openai::completion_request r;
  r.chat = true;
  r.logprobs = true;
  openai::stream_encoder enc(r, {"chatcmpl-2", "tiny", 5}, 1);
  auto open = read_events(enc.open(0), true);
  EXPECT_TRUE(open.deltas.empty());
  std::vector<std::string> per_token;
  for (auto [id, piece] : std::vector<std::pair<int, std::string>>{{7, "int"}, {8, " x"}, {9, ";"}}) {
    auto ev = read_events(enc.token(0, id, piece, -0.5f), true);
    ASSERT_EQ(ev.deltas.size(), 1u) << piece;
    EXPECT_EQ(ev.deltas[0], piece);
    EXPECT_EQ(ev.logprob_tokens, 1);
  }
  auto end = read_events(enc.finish(0, "length"), true);
  EXPECT_TRUE(end.deltas.empty());
  EXPECT_EQ(end.finish, std::vector<std::string>{"length"});
  EXPECT_EQ(enc.text(0), "int x;");
  EXPECT_NE(enc.close({}).find("data: [DONE]"), std::string::npos);
}

// A character split over tokens waits for its last byte, with its tokens' log-probs.
TEST(OpenAIStreamEncoder, ASplitCharacterWaitsForItsLastByte) {
  openai::completion_request r;
  r.logprobs = true;
  openai::stream_encoder enc(r, {"cmpl-3", "tiny", 5}, 1);
  EXPECT_EQ(enc.token(0, 1, "\xC3", -0.1f), "");
  auto ev = read_events(enc.token(0, 2, "\xA9", -0.2f), false);
  ASSERT_EQ(ev.deltas.size(), 1u);
  EXPECT_EQ(ev.deltas[0], "\xC3\xA9");
  EXPECT_EQ(ev.logprob_tokens, 2);
}

// Text that may begin a stop string is held; a stop string that spans tokens ends the text where
// it begins, and what comes after is never sent (its tokens still count in token_ids).
TEST(OpenAIStreamEncoder, StopStringsAreHeldBackAndCutAcrossTokens) {
  openai::completion_request r;
  r.stop = {"END"};
  r.return_token_ids = true;
  {
    openai::stream_encoder enc(r, {"cmpl-4", "tiny", 5}, 1);
    auto a = read_events(enc.token(0, 1, "ab E", 0), false);
    EXPECT_EQ(a.text, "ab "); // "E" may begin "END"
    auto b = read_events(enc.token(0, 2, "N", 0), false);
    EXPECT_EQ(b.text, "");    // "EN" still may
    auto c = read_events(enc.token(0, 3, "Dzz", 0), false);
    EXPECT_EQ(c.text, "");    // "END": cut where it began
    EXPECT_EQ(enc.token(0, 4, "more", 0), "");
    auto d = read_events(enc.finish(0, "length"), false);
    EXPECT_EQ(d.finish, std::vector<std::string>{"stop"});
    EXPECT_EQ(d.token_ids, json::array({1, 2, 3, 4}));
    EXPECT_EQ(enc.text(0), "ab ");
  }
  {
    openai::stream_encoder enc(r, {"cmpl-5", "tiny", 5}, 1);
    EXPECT_EQ(read_events(enc.token(0, 1, "xE", 0), false).text, "x");
    EXPECT_EQ(read_events(enc.token(0, 2, "Nd", 0), false).text, "ENd"); // not "END" after all
    auto f = read_events(enc.finish(0, "length"), false);
    EXPECT_EQ(f.finish, std::vector<std::string>{"length"});
    EXPECT_EQ(enc.text(0), "xENd");
  }
}

// Several choices interleave; each keeps its own state, and a held tail comes out at finish.
TEST(OpenAIStreamEncoder, ChoicesInterleaveAndAHeldTailComesOutAtFinish) {
  openai::completion_request r;
  r.chat = true;
  r.n = 2;
  r.stop = {"##"};
  openai::stream_encoder enc(r, {"chatcmpl-6", "tiny", 5}, 2);
  std::string all = enc.open(0) + enc.open(1);
  all += enc.token(0, 1, "a#", 0);
  all += enc.token(1, 1, "b", 0);
  all += enc.finish(1, "length");
  all += enc.finish(0, "length"); // "#" alone is no stop string: it goes out now
  EXPECT_EQ(enc.text(0), "a#");
  EXPECT_EQ(enc.text(1), "b");
  auto ev = read_events(all, true);
  EXPECT_EQ(ev.text, "ab#");
  EXPECT_EQ(ev.finish.size(), 2u);
}

// top_logprobs shows the alternatives the engine gives, up to the number asked.
TEST(OpenAIApi, TopLogprobsShowTheAlternativesUpToTheNumberAsked) {
  openai::choice c;
  c.pieces = {"a", "b"};
  c.logprobs = {-0.5f, -1.0f};
  c.tokens = {1, 2};
  c.text = "ab";
  c.finish_reason = "length";
  c.top = {{{"a", -0.5f}, {"x", -1.5f}, {"y", -2.5f}}, {{"z", -0.2f}, {"b", -1.0f}, {"w", -3.0f}}};
  openai::answer_meta m{"id", "tiny", 1};
  openai::completion_request chat;
  chat.chat = true;
  chat.logprobs = true;
  chat.top_logprobs = 2;
  auto a = json::parse(openai::answer_body(chat, m, {c}, {}));
  auto e = a["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(e.size(), 2u);
  ASSERT_EQ(e[1]["top_logprobs"].size(), 2u);
  EXPECT_EQ(e[1]["top_logprobs"][0]["token"], "z");
  EXPECT_EQ(e[1]["top_logprobs"][1]["token"], "b");
  openai::completion_request comp;
  comp.logprobs = true;
  comp.top_logprobs = 3;
  auto b = json::parse(openai::answer_body(comp, m, {c}, {}));
  auto t = b["choices"][0]["logprobs"]["top_logprobs"];
  EXPECT_EQ(t[0], json({{"a", -0.5}, {"x", -1.5}, {"y", -2.5}}));
  // The stream carries the same alternatives.
  auto s = openai::stream_body(chat, m, {c}, {});
  EXPECT_NE(s.find("\"token\":\"z\""), std::string::npos);
}
