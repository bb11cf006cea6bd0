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
  std::string text;
  int logprob_tokens = 0;
  bool usage = false;
  std::size_t at = 0;
  while ((at = s.find("data: ", at)) != std::string::npos) {
    auto end = s.find("\n\n", at);
    auto data = s.substr(at + 6, end - at - 6);
    at = end;
    if (data == "[DONE]")
      break;
    auto j = json::parse(data);
    usage = usage || j.contains("usage");
    for (auto& ch : j["choices"]) {
      if (ch["delta"].contains("content"))
        text += ch["delta"]["content"].get<std::string>();
      if (!ch["logprobs"].is_null())
        logprob_tokens += static_cast<int>(ch["logprobs"]["content"].size());
    }
  }
  EXPECT_EQ(text, c.text);
  EXPECT_EQ(logprob_tokens, 4);
  EXPECT_TRUE(usage);
  EXPECT_EQ(s.substr(s.size() - 14), "data: [DONE]\n\n");
}
