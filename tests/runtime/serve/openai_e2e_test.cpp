// `leap serve --checkpoint DIR` end to end: its OpenAI-compatible endpoints over a live server
// process on loopback, with a tiny random-weight checkpoint made by the test (a byte-level
// tokenizer with leap's special tokens and a one-layer decoder).
//  - raw HTTP: GET /v1/models, completions and chat answers with `usage`, n > 1, max_tokens,
//    stop strings, greedy and seeded reproducibility, a seeded request's text unchanged when it
//    shares a batched decode with other requests (and /metrics shows batches of several rows),
//    OpenAI-shaped 400s naming the field, 405, and 404 without --checkpoint;
//  - leap's own OpenAI client (runtime/serve/openai_client.hpp) gets the sampled token ids;
//    `leap eval` with generation.source = "openai" against this server samples exactly what
//    in-process eval samples (every turn, Acc@k, tokens); an unreachable server drops the
//    attempts instead of hanging; `leap bench` samples from the server; `leap train` refuses
//    generation.source = "openai";
//  - HTTPS with a bearer token (certificates of a CA made by the test): leap's client with
//    openai.tls_ca samples what plain HTTP samples and `leap eval` samples through it; the system
//    store, another CA and a certificate for another name are refused after one try, naming the
//    URL and OpenSSL's reason; no token gets 401;
//  - a Hugging Face style checkpoint (tokenizer_config.json, generation_config.json): chats in
//    its ChatML format, sampling ends on every eos id;
// The official `openai` Python library drives the same endpoints in
// tests/python/test_openai_client.py.
#include "common/fs.hpp"
#include "policy/model/model_config.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/workflows/evaluation.hpp"
#include "runtime/config/config.hpp"
#include "runtime/pipeline/services.hpp"
#include "runtime/serve/openai_client.hpp"
#include "tests/runtime/cluster/leap_process.hpp"
#include "tests/runtime/cluster/test_pki.hpp"
#include "tests/runtime/serve/http_client.hpp"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace leap;
using namespace leap::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("leap-openai-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A random-weight policy over a byte-level tokenizer with leap's special tokens.
// A policy of random weights small enough to sample in milliseconds.
policy::model_config tiny_config(std::int64_t vocab, std::int64_t max_seq_len) {
  policy::model_config cfg;
  cfg.vocab_size = vocab;
  cfg.d_model = 32;
  cfg.n_layers = 1;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 64;
  cfg.max_seq_len = max_seq_len;
  return cfg;
}

std::string make_checkpoint(const std::string& root) {
  auto tok = policy::tokenizer::from_merges({}, policy::special::all());
  EXPECT_TRUE(tok.ok()) << tok.message();
  const std::string tok_path = root + "/tokenizer-src.json";
  EXPECT_TRUE(tok->save(tok_path).ok());
  // Room for a task's prompt (byte-level: one token per byte).
  auto cfg = tiny_config(tok->vocab_size(), 2048);
  cfg.bos_id = tok->token_id(policy::special::bos);
  cfg.eos_id = tok->token_id(policy::special::eos);
  cfg.pad_id = tok->token_id(policy::special::pad);
  auto m = policy::policy_model::create(cfg, 5);
  EXPECT_TRUE(m.ok()) << m.message();
  const std::string dir = root + "/tiny-policy";
  auto s = m->save(dir, tok_path, 0);
  EXPECT_TRUE(s.ok()) << s.message();
  return dir;
}

struct server {
  std::unique_ptr<leap_process> proc;
  int port = 0;
  std::string dir;

  // `sets`: more --set overrides; `env`: NAME=VALUE added to the server's environment.
  bool start(const std::string& name, const std::string& checkpoint,
             std::vector<std::string> sets = {}, std::vector<std::string> env = {}) {
    dir = temp_dir(name);
    std::vector<std::string> args{LEAP_BINARY};
    std::vector<std::string> all{"environment.cache_dir=" LEAP_TEST_CACHE_DIR,
                                 "environment.backend=cpu", "serve.listen=127.0.0.1:0",
                                 "compiler.workers=1", "executor.workers=1"};
    all.insert(all.end(), sets.begin(), sets.end());
    for (const auto& s : all) {
      args.push_back("--set");
      args.push_back(s);
    }
    args.push_back("--set");
    args.push_back("environment.work_dir=" + dir + "/work");
    args.push_back("serve");
    if (!checkpoint.empty()) {
      args.push_back("--checkpoint");
      args.push_back(checkpoint);
    }
    proc = std::make_unique<leap_process>(args, dir + "/serve", env);
    auto p = proc->wait_for("serving on https?://127\\.0\\.0\\.1:(\\d+)", std::chrono::seconds(90));
    if (!p)
      return false;
    port = std::stoi(*p);
    return true;
  }
  ~server() {
    if (proc && !proc->exited(std::chrono::milliseconds(0))) {
      proc->kill(SIGTERM);
      if (!proc->exited(std::chrono::seconds(30)))
        proc->kill(SIGKILL);
    }
    if (!dir.empty())
      fs::remove_all(dir);
  }
};

json post(int port, const std::string& path, const json& body, int* status = nullptr) {
  auto r = http_call(port, "POST", path, body.dump(), "Content-Type: application/json\r\n");
  if (status)
    *status = r.status;
  try {
    return json::parse(r.body);
  } catch (...) {
    return json{{"unparsed", r.body}, {"status", r.status}};
  }
}

double metric(int port, const std::string& name) {
  auto page = http_call(port, "GET", "/metrics").body;
  auto at = page.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::atof(page.c_str() + at + name.size() + 2);
}

class OpenAIServe : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    root_ = temp_dir("ckpt");
    checkpoint_ = make_checkpoint(root_);
    srv_ = std::make_unique<server>();
    ASSERT_TRUE(srv_->start("serve", checkpoint_)) << srv_->proc->err();
  }
  static void TearDownTestSuite() {
    srv_.reset();
    fs::remove_all(root_);
  }
  static int port() { return srv_->port; }
  static std::string root_;
  static std::string checkpoint_;
  static std::unique_ptr<server> srv_;
};
std::string OpenAIServe::root_;
std::string OpenAIServe::checkpoint_;
std::unique_ptr<server> OpenAIServe::srv_;

} // namespace

TEST_F(OpenAIServe, ModelsCompletionsAndChatAnswerWithUsage) {
  auto models = json::parse(http_call(port(), "GET", "/v1/models").body);
  ASSERT_EQ(models["data"].size(), 1u) << models;
  EXPECT_EQ(models["data"][0]["id"], "tiny-policy");

  int status = 0;
  auto c = post(port(), "/v1/completions",
                {{"model", "tiny-policy"}, {"prompt", "__global__"}, {"max_tokens", 7}, {"n", 3},
                 {"seed", 1}},
                &status);
  ASSERT_EQ(status, 200) << c;
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["model"], "tiny-policy");
  ASSERT_EQ(c["choices"].size(), 3u);
  long long tokens = 0;
  for (auto& ch : c["choices"]) {
    EXPECT_TRUE(ch["finish_reason"] == "length" || ch["finish_reason"] == "stop") << ch;
    EXPECT_TRUE(ch["logprobs"].is_null());
  }
  EXPECT_EQ(c["usage"]["prompt_tokens"], 10); // "__global__": ten bytes, counted once for n = 3
  tokens = c["usage"]["completion_tokens"].get<long long>();
  EXPECT_GE(tokens, 3);
  EXPECT_LE(tokens, 21);
  EXPECT_EQ(c["usage"]["total_tokens"], 10 + tokens);

  // Chat in leap's template: <|bos|><|user|>{system}\n\n{user}<|assistant|>.
  auto chat = post(port(), "/v1/chat/completions",
                   {{"model", "x"},
                    {"messages", {{{"role", "system"}, {"content", "ab"}}, {{"role", "user"}, {"content", "cd"}}}},
                    {"max_tokens", 5},
                    {"logprobs", true}},
                   &status);
  ASSERT_EQ(status, 200) << chat;
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(chat["usage"]["prompt_tokens"], 3 + 6); // bos, user, assistant + "ab\n\ncd"
  auto lps = chat["choices"][0]["logprobs"]["content"];
  EXPECT_GE(lps.size(), 1u);
  for (auto& t : lps)
    EXPECT_LE(t["logprob"].get<double>(), 0.0);

  // vLLM's return_token_ids: the sampled ids (eos included) and the prompt's.
  auto ids = post(port(), "/v1/completions",
                  {{"model", "x"}, {"prompt", "ab"}, {"max_tokens", 4}, {"seed", 2},
                   {"return_token_ids", true}});
  ASSERT_EQ(ids["prompt_token_ids"].size(), 1u) << ids;
  EXPECT_EQ(ids["prompt_token_ids"][0].size(), 2u) << ids;
  EXPECT_EQ(ids["choices"][0]["token_ids"].size(), ids["usage"]["completion_tokens"].get<std::size_t>());

  // Greedy twice: the same text.
  json greedy{{"model", "x"}, {"prompt", "kernel"}, {"max_tokens", 20}, {"temperature", 0}};
  EXPECT_EQ(post(port(), "/v1/completions", greedy)["choices"][0]["text"],
            post(port(), "/v1/completions", greedy)["choices"][0]["text"]);
}

// top_logprobs are the most likely tokens at each position, most likely first, from the same
// distribution as the token's log-prob: under greedy decoding the first one is the token itself.
TEST_F(OpenAIServe, TopLogprobsAreTheMostLikelyTokensThere) {
  int status = 0;
  auto chat = post(port(), "/v1/chat/completions",
                   {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "ab"}}}},
                    {"max_tokens", 8}, {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 3}},
                   &status);
  ASSERT_EQ(status, 200) << chat;
  auto content = chat["choices"][0]["logprobs"]["content"];
  ASSERT_GE(content.size(), 1u);
  for (auto& t : content) {
    auto top = t["top_logprobs"];
    ASSERT_EQ(top.size(), 3u) << t;
    EXPECT_EQ(top[0]["bytes"], t["bytes"]) << t;
    EXPECT_NEAR(top[0]["logprob"].get<double>(), t["logprob"].get<double>(), 1e-5);
    EXPECT_GE(top[0]["logprob"].get<double>(), top[1]["logprob"].get<double>());
    EXPECT_GE(top[1]["logprob"].get<double>(), top[2]["logprob"].get<double>());
  }
  auto comp = post(port(), "/v1/completions",
                   {{"model", "x"}, {"prompt", "ab"}, {"max_tokens", 8}, {"temperature", 0},
                    {"logprobs", 2}},
                   &status);
  ASSERT_EQ(status, 200) << comp;
  auto lp = comp["choices"][0]["logprobs"];
  ASSERT_EQ(lp["top_logprobs"].size(), lp["tokens"].size());
  for (std::size_t k = 0; k < lp["tokens"].size(); ++k) {
    auto top = lp["top_logprobs"][k];
    EXPECT_GE(top.size(), 1u);
    EXPECT_LE(top.size(), 2u); // two tokens with the same text share a key
    double best = -1e30;
    for (auto& [text, v] : top.items())
      best = std::max(best, v.get<double>());
    EXPECT_NEAR(best, lp["token_logprobs"][k].get<double>(), 1e-5) << top;
  }
}

TEST_F(OpenAIServe, StopStringsEndTheTextBeforeThem) {
  // Sample until some byte shows up, then ask again with that byte as a stop string.
  json req{{"model", "x"}, {"prompt", "void"}, {"max_tokens", 40}, {"seed", 21}};
  auto first = post(port(), "/v1/completions", req);
  std::string text = first["choices"][0]["text"];
  // A printable ASCII byte after the first one (random weights write random bytes).
  std::size_t at = 1;
  while (at < text.size() && !(text[at] > ' ' && text[at] < 127))
    ++at;
  ASSERT_LT(at, text.size()) << first;
  std::string stop = text.substr(at, 1);
  req["stop"] = {stop};
  auto cut = post(port(), "/v1/completions", req);
  EXPECT_EQ(cut["choices"][0]["finish_reason"], "stop") << cut;
  EXPECT_EQ(cut["choices"][0]["text"], text.substr(0, text.find(stop))) << cut;
  EXPECT_LE(cut["usage"]["completion_tokens"].get<std::size_t>(), at + 1);
}

TEST_F(OpenAIServe, SeededRequestsAreBatchedAndKeepTheirText) {
  json mine{{"model", "x"}, {"prompt", "__global__ void k("}, {"max_tokens", 24}, {"seed", 99}};
  auto alone = post(port(), "/v1/completions", mine);
  ASSERT_EQ(alone["choices"].size(), 1u) << alone;
  const double batches_before = metric(port(), "leap_generate_batches_total");
  // The same request among 11 others (other prompts and seeds), sent at once, twice.
  for (int round = 0; round < 2; ++round) {
    std::vector<json> answers(12);
    std::vector<std::thread> ts;
    for (int i = 0; i < 12; ++i)
      ts.emplace_back([&, i] {
        json r = i == 5 ? mine
                        : json{{"model", "x"}, {"prompt", "other prompt " + std::to_string(i)},
                               {"max_tokens", 24}, {"seed", 1000 + i}};
        answers[i] = post(port(), "/v1/completions", r);
      });
    for (auto& t : ts)
      t.join();
    for (auto& a : answers)
      ASSERT_EQ(a["choices"].size(), 1u) << a;
    EXPECT_EQ(answers[5]["choices"][0]["text"], alone["choices"][0]["text"]) << "round " << round;
  }
  const double batches = metric(port(), "leap_generate_batches_total") - batches_before;
  EXPECT_GT(batches, 0);
  EXPECT_LT(batches, 24) << "24 requests were decoded one by one";
  EXPECT_GE(metric(port(), "leap_generate_batch_rows_max"), 2);
}

TEST_F(OpenAIServe, ErrorsHaveOpenAIsShapeAndNameTheField) {
  struct bad {
    std::string path;
    std::string body;
    std::string param;
  };
  for (const auto& b : std::vector<bad>{
         {"/v1/completions", R"({"model":"x","prompt":"a","temperature":"hot"})", "temperature"},
         {"/v1/completions", R"({"model":"x","prompt":"a","n":0})", "n"},
         {"/v1/completions", R"({"model":"x","prompt":"a","top_p":1.5})", "top_p"},
         {"/v1/completions", R"({"model":"x","prompt":"a","max_tokens":-3})", "max_tokens"},
         {"/v1/completions", R"({"model":"x","prompt":"a","stop":[1]})", "stop"},
         {"/v1/completions", R"({"model":"x"})", "prompt"},
         {"/v1/completions", R"({"prompt":"a"})", "model"},
         {"/v1/chat/completions", R"({"model":"x"})", "messages"},
         {"/v1/chat/completions", R"({"model":"x","messages":[{"role":"tool","content":"a"}]})",
          "messages[0].role"},
         {"/v1/chat/completions", R"({"model":"x","messages":[{"role":"user","content":"a"}],"logprobs":3})",
          "logprobs"}}) {
    auto r = http_call(port(), "POST", b.path, b.body);
    EXPECT_EQ(r.status, 400) << b.body;
    auto j = json::parse(r.body);
    EXPECT_EQ(j["error"]["param"], b.param) << r.body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_TRUE(j["error"].contains("code"));
    EXPECT_NE(j["error"]["message"].get<std::string>().find(b.param.substr(0, b.param.find('['))),
              std::string::npos)
      << r.body;
  }
  auto malformed = http_call(port(), "POST", "/v1/chat/completions", "{nope");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_TRUE(json::parse(malformed.body)["error"].contains("message"));
  // A prompt longer than the context (2048 tokens).
  auto r = http_call(port(), "POST", "/v1/completions",
                     json{{"model", "x"}, {"prompt", std::string(2100, 'a')}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["param"], "prompt");
  auto wrong = http_call(port(), "GET", "/v1/chat/completions");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("Allow"), "POST");
  // The server is still up and the existing routes unchanged.
  EXPECT_EQ(http_call(port(), "GET", "/health").status, 200);
}

TEST_F(OpenAIServe, StreamedAnswersAreServerSentEvents) {
  auto r = http_call(port(), "POST", "/v1/chat/completions",
                     json{{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                          {"max_tokens", 6}, {"seed", 4}, {"stream", true}}
                       .dump());
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.header("Content-Type").find("text/event-stream"), std::string::npos);
  // Sent as it is decoded (chunked; http_stream_test shows the bytes leave before the end).
  EXPECT_EQ(r.header("Transfer-Encoding"), "chunked");
  EXPECT_GE(r.chunks, 1);
  EXPECT_EQ(r.body.rfind("data: [DONE]\n\n"), r.body.size() - 14);
  EXPECT_NE(r.body.find("\"usage\""), std::string::npos);
  EXPECT_NE(r.body.find("chat.completion.chunk"), std::string::npos);
  // The deltas add up to the answer of the same seeded request without streaming.
  std::string text;
  for (std::size_t at = 0; (at = r.body.find("data: {", at)) != std::string::npos;) {
    auto end = r.body.find("\n\n", at);
    auto j = json::parse(r.body.substr(at + 6, end - at - 6));
    at = end;
    for (auto& ch : j["choices"])
      if (ch["delta"].contains("content"))
        text += ch["delta"]["content"].get<std::string>();
  }
  auto plain = http_call(port(), "POST", "/v1/chat/completions",
                         json{{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                              {"max_tokens", 6}, {"seed", 4}}
                           .dump());
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(text, json::parse(plain.body)["choices"][0]["message"]["content"].get<std::string>());
}

TEST_F(OpenAIServe, LeapsOpenAIClientGetsTheSampledTokensAndLogprobs) {
  serve::openai_client_options o;
  o.url = "http://127.0.0.1:" + std::to_string(port()) + "/v1";
  o.model = "tiny-policy";
  auto c = serve::openai_client::create(o);
  ASSERT_TRUE(c.ok()) << c.message();
  serve::openai_completion_call call;
  call.prompt = {256, 259, 97, 98, 260}; // <|bos|><|user|>ab<|assistant|>
  call.n = 2;
  call.max_tokens = 9;
  call.seed = 12;
  std::promise<result<serve::openai_answer>> p;
  auto f = p.get_future();
  (*c)->complete(call, [&p](result<serve::openai_answer> r) { p.set_value(std::move(r)); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  auto a = f.get();
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_EQ(a->samples.size(), 2u);
  auto raw = post(port(), "/v1/completions",
                  {{"model", "x"}, {"prompt", call.prompt}, {"n", 2}, {"max_tokens", 9},
                   {"seed", 12}, {"return_token_ids", true}});
  for (int i = 0; i < 2; ++i) {
    const auto& s = a->samples[static_cast<std::size_t>(i)];
    EXPECT_EQ(s.tokens, raw["choices"][i]["token_ids"].get<std::vector<int>>());
    EXPECT_GE(s.tokens.size(), 1u);
    EXPECT_LE(s.tokens.size(), 9u);
    EXPECT_EQ(s.logprobs.size(), s.tokens.size()); // no stop strings: one per token
  }
  EXPECT_EQ(a->tries, 1);
  EXPECT_EQ(a->prompt_tokens, 5);
}

namespace {

// `leap eval` of the test's checkpoint with these overrides; every sampled turn's dump line
// (LEAP_EVAL_DUMP), sorted, and the summary's Acc@k.
struct eval_run {
  std::vector<std::string> lines;
  std::vector<double> acc;
  long long tokens = 0;
};
eval_run run_eval(const std::string& checkpoint, const std::string& dir,
                  const std::vector<std::string>& sets) {
  eval_run out;
  auto cfg = config::defaults();
  for (const auto& s : sets)
    EXPECT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.environment.work_dir = dir + "/work";
  const std::string dump = dir + "/dump.jsonl";
  fs::create_directories(dir);
  ::setenv("LEAP_EVAL_DUMP", dump.c_str(), 1);
  auto svc = runtime::make_services(cfg);
  EXPECT_TRUE(svc.ok()) << svc.message();
  if (!svc)
    return out;
  auto r = runtime::evaluate_checkpoint(**svc, checkpoint, false);
  ::unsetenv("LEAP_EVAL_DUMP");
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r)
    return out;
  out.acc = r->acc_at;
  out.tokens = r->generated_tokens;
  EXPECT_EQ(r->per_task.size(), 2u);
  EXPECT_GT(r->samples, 0) << "dropped " << r->dropped;
  std::ifstream f(dump);
  for (std::string line; std::getline(f, line);)
    out.lines.push_back(line);
  std::sort(out.lines.begin(), out.lines.end());
  return out;
}

} // namespace

TEST_F(OpenAIServe, EvalThroughTheServerSamplesWhatInProcessEvalSamples) {
  const std::vector<std::string> sets{
    "environment.backend=cpu", "eval.split=all", "eval.tasks=[\"vector_add\", \"relu\"]",
    "eval.group_size=2", "eval.max_turns=2", "eval.max_new_tokens=40", "eval.seed=5",
    "compiler.workers=1", "executor.workers=1"};
  auto local = run_eval(checkpoint_, root_ + "/eval-local", sets);
  auto via = sets;
  via.push_back("generation.source=openai");
  via.push_back("openai.url=http://127.0.0.1:" + std::to_string(port()) + "/v1");
  via.push_back("openai.model=tiny-policy");
  auto remote = run_eval(checkpoint_, root_ + "/eval-openai", via);
  ASSERT_GE(local.lines.size(), 4u); // 2 tasks x 2 attempts, turn 1 at least
  EXPECT_EQ(remote.lines, local.lines);
  EXPECT_EQ(remote.acc, local.acc);
  EXPECT_EQ(remote.tokens, local.tokens);

  // An unreachable server: eval fails with the client's error, it does not hang.
  auto bad = config::defaults();
  for (const auto& s : via)
    ASSERT_TRUE(config::apply_override(bad, s).ok());
  ASSERT_TRUE(config::apply_override(bad, "openai.url=http://127.0.0.1:1/v1").ok());
  ASSERT_TRUE(config::apply_override(bad, "openai.timeout_seconds=2").ok());
  bad.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  bad.environment.work_dir = root_ + "/eval-bad";
  auto svc = runtime::make_services(bad);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto r = runtime::evaluate_checkpoint(**svc, checkpoint_, false);
  if (r.ok()) { // the attempts are dropped (lost to the infrastructure), never judged
    EXPECT_EQ(r->generated_tokens, 0);
  }
}

namespace {

// One call of leap's OpenAI client, waited for.
result<serve::openai_answer> complete_once(const serve::openai_client_options& o,
                                           const serve::openai_completion_call& call) {
  auto c = serve::openai_client::create(o);
  if (!c)
    return c.err();
  std::promise<result<serve::openai_answer>> p;
  auto f = p.get_future();
  (*c)->complete(call, [&p](result<serve::openai_answer> r) { p.set_value(std::move(r)); });
  if (f.wait_for(std::chrono::seconds(120)) != std::future_status::ready)
    return make_error("the call hung");
  return f.get();
}

} // namespace

// `leap serve --checkpoint` over HTTPS (a certificate for IP:127.0.0.1 signed by the test's CA)
// requiring a bearer token: leap's client with openai.tls_ca and the token gets the tokens the
// plain-HTTP server of the same checkpoint samples, and `leap eval` with
// generation.source = "openai" samples through it. Refused, each after one try with a message
// naming the URL and OpenSSL's reason: the system's trust store (which does not know the test's
// CA), another CA's file, and a certificate of the right CA for another name; without the token
// the server answers 401.
TEST_F(OpenAIServe, HttpsGenerationVerifiesTheServerAndSendsTheToken) {
  const std::string pki = root_ + "/pki";
  fs::create_directories(pki);
  ASSERT_TRUE(make_pki(pki)) << "the openssl CLI could not make test certificates";
  server tls;
  ASSERT_TRUE(tls.start("tls", checkpoint_,
                        {"serve.tls_cert=" + pki + "/node.pem", "serve.tls_key=" + pki + "/node.key"},
                        {"LEAP_SERVE_TOKEN=tls-token"}))
    << tls.proc->err();
  ASSERT_NE(tls.proc->out().find("https://"), std::string::npos) << tls.proc->out();
  const std::string url = "https://127.0.0.1:" + std::to_string(tls.port) + "/v1";

  serve::openai_client_options o;
  o.url = url;
  o.model = "tiny-policy";
  o.api_key = "tls-token";
  o.tls_ca = pki + "/ca.pem";
  o.retries = 2;
  o.backoff = std::chrono::milliseconds(20);
  serve::openai_completion_call call;
  call.prompt = {256, 259, 97, 98, 260}; // <|bos|><|user|>ab<|assistant|>
  call.n = 2;
  call.max_tokens = 9;
  call.seed = 31;
  auto over_tls = complete_once(o, call);
  ASSERT_TRUE(over_tls.ok()) << over_tls.message();
  EXPECT_EQ(over_tls->tries, 1);
  ASSERT_EQ(over_tls->samples.size(), 2u);
  auto plain_options = o; // the fixture's server: plain HTTP, no token
  plain_options.url = "http://127.0.0.1:" + std::to_string(port()) + "/v1";
  auto over_http = complete_once(plain_options, call);
  ASSERT_TRUE(over_http.ok()) << over_http.message();
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_GE(over_tls->samples[i].tokens.size(), 1u);
    EXPECT_EQ(over_tls->samples[i].tokens, over_http->samples[i].tokens) << i;
  }

  auto refused = [&](serve::openai_client_options bad, const std::string& reason) {
    auto r = complete_once(bad, call);
    ASSERT_FALSE(r.ok()) << bad.url << " with tls_ca \"" << bad.tls_ca << "\" was accepted";
    std::printf("refused as expected: %s\n", r.message().c_str());
    EXPECT_NE(r.message().find("after 1 try: TLS handshake with " + bad.url + " failed: "),
              std::string::npos)
      << r.message();
    EXPECT_NE(r.message().find("certificate verify failed"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find(reason), std::string::npos) << r.message();
  };
  auto system_store = o;
  system_store.tls_ca = "";
  refused(system_store, "set openai.tls_ca");
  auto other_ca = o;
  other_ca.tls_ca = pki + "/other_ca.pem";
  refused(other_ca, "other_ca.pem) do not vouch");

  auto no_token = o;
  no_token.api_key = "";
  auto unauthorized = complete_once(no_token, call);
  ASSERT_FALSE(unauthorized.ok());
  EXPECT_NE(unauthorized.message().find("after 1 try: HTTP 401"), std::string::npos)
    << unauthorized.message();

  // `leap eval` through the HTTPS server, the token from openai.api_key_env.
  ::setenv("LEAP_TEST_OPENAI_TOKEN", "tls-token", 1);
  auto remote = run_eval(checkpoint_, root_ + "/eval-https",
                         {"environment.backend=cpu", "eval.split=all",
                          "eval.tasks=[\"vector_add\", \"relu\"]", "eval.group_size=2",
                          "eval.max_turns=1", "eval.max_new_tokens=24", "eval.seed=5",
                          "compiler.workers=1", "executor.workers=1", "generation.source=openai",
                          "openai.url=" + url, "openai.model=tiny-policy",
                          "openai.tls_ca=" + pki + "/ca.pem",
                          "openai.api_key_env=LEAP_TEST_OPENAI_TOKEN"});
  ::unsetenv("LEAP_TEST_OPENAI_TOKEN");
  EXPECT_EQ(remote.lines.size(), 4u); // 2 tasks x 2 attempts, one turn
  EXPECT_GT(remote.tokens, 0);

  // The right CA, but a certificate for another name (DNS:head.example) at 127.0.0.1.
  server misnamed;
  ASSERT_TRUE(misnamed.start("tls-misnamed", checkpoint_,
                             {"serve.tls_cert=" + pki + "/head.pem",
                              "serve.tls_key=" + pki + "/head.key"}))
    << misnamed.proc->err();
  auto wrong_name = o;
  wrong_name.url = "https://127.0.0.1:" + std::to_string(misnamed.port) + "/v1";
  refused(wrong_name, "IP address mismatch); the server's certificate does not name 127.0.0.1");
}

TEST_F(OpenAIServe, BenchSamplesFromTheServer) {
  const std::string dir = root_ + "/bench";
  fs::create_directories(dir);
  const std::string scenario = dir + "/openai.toml";
  std::ofstream(scenario) << "[environment]\nbackend = \"cpu\"\n"
                             "[train]\nsteps = 1\nbatch_groups = 1\ngroup_size = 2\n"
                             "max_turns = 1\nmax_new_tokens = 16\ntasks = [\"vector_add\"]\n"
                             "[generation]\nsource = \"openai\"\n"
                             "[openai]\nurl = \"http://127.0.0.1:"
                          << port()
                          << "/v1\"\nmodel = \"tiny-policy\"\n"
                             "[bench]\nseed = 1\n"
                             "[bench.generate]\nmodel = \"policy\"\ncheckpoint = \""
                          << checkpoint_
                          << "\"\n[bench.compile]\nmodel = \"nvcc\"\n"
                             "[bench.execute]\nmodel = \"backend\"\n"
                             "[bench.learner]\nseconds = 0.01\n";
  const double before = metric(port(), "leap_generate_tokens_total");
  leap_process bench({LEAP_BINARY, "--set", "environment.cache_dir=" LEAP_TEST_CACHE_DIR, "bench",
                      "--config", scenario, "--out", dir + "/out"},
                     dir + "/bench");
  ASSERT_TRUE(bench.exited(std::chrono::seconds(300))) << bench.err();
  EXPECT_TRUE(bench.exited_ok()) << bench.out() << bench.err();
  EXPECT_GT(metric(port(), "leap_generate_tokens_total"), before) << bench.err();
}

TEST(OpenAIServeWithout, CheckpointAnswers404SayingToStartWithIt) {
  server s;
  ASSERT_TRUE(s.start("plain", "")) << s.proc->err();
  for (auto path : {"/v1/completions", "/v1/chat/completions"}) {
    auto r = http_call(s.port, "POST", path, R"({"model":"x","prompt":"a"})");
    EXPECT_EQ(r.status, 404);
    EXPECT_NE(r.body.find("--checkpoint"), std::string::npos) << r.body;
  }
  auto m = http_call(s.port, "GET", "/v1/models");
  EXPECT_EQ(m.status, 404);
  EXPECT_NE(json::parse(m.body)["error"]["message"].get<std::string>().find("--checkpoint"),
            std::string::npos);
  EXPECT_EQ(http_call(s.port, "GET", "/v1/tasks").status, 200);
}

TEST(OpenAISource, LeapTrainRefusesItNamingWhy) {
  const std::string dir = temp_dir("train");
  leap_process train({LEAP_BINARY, "--set", "generation.source=openai", "--set",
                      "environment.backend=cpu", "--set", "environment.cache_dir=" + dir + "/cache",
                      "train", "--out", dir + "/run"},
                     dir + "/train");
  ASSERT_TRUE(train.exited(std::chrono::seconds(60)));
  EXPECT_FALSE(train.exited_ok());
  EXPECT_NE(train.err().find("generation.source = \"openai\" cannot train"), std::string::npos)
    << train.err();
  EXPECT_FALSE(fs::exists(dir + "/run/metrics.jsonl"));
  fs::remove_all(dir);
}

// A Hugging Face style checkpoint (tokenizer_config.json with a ChatML chat_template and its
// eos_token, generation_config.json with three eos ids): policy.chat_format = auto writes chat
// requests in ChatML, and sampling ends on any eos id (config.json has only <|endoftext|>;
// <|eom|> is one only through generation_config.json, <|im_end|> also as the end of turn).
TEST(OpenAIServeHf, ChatmlCheckpointRendersChatmlAndStopsOnEveryEosId) {
  const std::string root = temp_dir("hf");
  auto tok = policy::tokenizer::from_merges({}, {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|eom|>"});
  ASSERT_TRUE(tok.ok()) << tok.message();
  ASSERT_TRUE(tok->save(root + "/tokenizer-src.json").ok());
  const int end_text = tok->token_id("<|endoftext|>"), im_start = tok->token_id("<|im_start|>"),
            im_end = tok->token_id("<|im_end|>"), eom = tok->token_id("<|eom|>");
  auto cfg = tiny_config(tok->vocab_size(), 512);
  cfg.eos_id = end_text;
  auto m = policy::policy_model::create(cfg, 11);
  ASSERT_TRUE(m.ok()) << m.message();
  const std::string dir = root + "/hf-policy";
  ASSERT_TRUE(m->save(dir, root + "/tokenizer-src.json", 0).ok());
  json added = json::object();
  for (int id : {end_text, im_start, im_end, eom})
    added[std::to_string(id)] = {{"content", std::string(tok->token_bytes(id))}, {"special", true}};
  json tc = {{"added_tokens_decoder", added},
             {"eos_token", "<|im_end|>"},
             {"pad_token", "<|endoftext|>"},
             {"chat_template", "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                               "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
                               "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"}};
  ASSERT_TRUE(write_file_atomic(dir + "/tokenizer_config.json", tc.dump()).ok());
  ASSERT_TRUE(write_file_atomic(dir + "/generation_config.json",
                                json{{"eos_token_id", {im_end, end_text, eom}}}.dump()).ok());

  {
    server srv;
    ASSERT_TRUE(srv.start("hf-serve", dir)) << srv.proc->err();
    int status = 0;
    auto chat = post(srv.port, "/v1/chat/completions",
                     {{"model", "x"},
                      {"messages", {{{"role", "system"}, {"content", "ab"}}, {{"role", "user"}, {"content", "cd"}}}},
                      {"max_tokens", 40},
                      {"n", 16},
                      {"seed", 4},
                      {"return_token_ids", true}},
                     &status);
    ASSERT_EQ(status, 200) << chat;
    EXPECT_EQ(chat["prompt_token_ids"][0].get<std::vector<int>>(),
              tok->encode("<|im_start|>system\nab<|im_end|>\n<|im_start|>user\ncd<|im_end|>\n<|im_start|>assistant\n",
                          true));
    int stopped = 0;
    for (const auto& ch : chat["choices"]) {
      auto ids = ch["token_ids"].get<std::vector<int>>();
      ASSERT_FALSE(ids.empty()) << ch;
      for (std::size_t k = 0; k + 1 < ids.size(); ++k)
        EXPECT_TRUE(ids[k] != im_end && ids[k] != end_text && ids[k] != eom)
          << "sampling went on after eos id " << ids[k] << ": " << ch;
      const bool eos = ids.back() == im_end || ids.back() == end_text || ids.back() == eom;
      EXPECT_EQ(ch["finish_reason"], eos ? "stop" : "length") << ch;
      stopped += eos;
      const auto text = ch["message"]["content"].get<std::string>();
      EXPECT_EQ(text.find("<|im_end|>"), std::string::npos) << ch;
      EXPECT_EQ(text.find("<|endoftext|>"), std::string::npos) << ch;
    }
    std::printf("%d of 16 chat samples ended on an eos id\n", stopped);
    EXPECT_GT(stopped, 0) << "no sample reached an eos id: the check above proved nothing";
  }
  fs::remove_all(root);
}
