// A client of an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp's server, or
// `leap serve --checkpoint`): POST {url}/completions with a prompt of token ids, answered with
// each choice's tokens (vLLM's `token_ids`, asked for with return_token_ids), behaviour
// log-probs when the server returns them, text and finish reason. Boost.Beast over Asio on one
// I/O thread of its own: complete() never blocks, its callback runs on that thread. At most
// max_concurrency calls are on the wire; the rest wait in order. A call that times out, cannot
// connect, or is answered 429 or 5xx is tried again after a back-off (doubling from `backoff`,
// or the server's Retry-After when larger), up to `retries` more times; then its callback gets
// an error naming the last failure and the number of tries. 4xx other than 429 are not retried.
// `leap eval` samples through it with generation.source = "openai" (runtime/commands/eval.cpp,
// docs/serve.md).
#pragma once

#include "common/passkey.hpp"
#include "common/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace leap::serve {

struct openai_client_options {
  std::string url;         // http://HOST:PORT or http://HOST:PORT/v1 (plain HTTP)
  std::string model;
  std::string api_key;     // sent as Authorization: Bearer (empty: no header)
  int max_concurrency = 8;
  std::chrono::milliseconds timeout{std::chrono::seconds(120)}; // one try, connect to last byte
  int retries = 4;
  std::chrono::milliseconds backoff{std::chrono::milliseconds(250)};
};

struct openai_completion_call {
  std::vector<int> prompt;          // token ids
  int n = 1;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_tokens = 256;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;
};

struct openai_sample {
  std::vector<int> tokens;          // empty when the server sends no token ids
  std::vector<float> logprobs;      // empty when the server sends none
  std::string text;
  std::string finish_reason;        // "stop", "length", ...
};

struct openai_answer {
  std::vector<openai_sample> samples;  // n of them
  int tries = 1;                       // 1 + the retries it took
  long long prompt_tokens = 0, completion_tokens = 0; // the server's usage
};

class openai_client {
public:
  // Parses the URL; an error names it.
  static result<std::unique_ptr<openai_client>> create(openai_client_options opts);
  ~openai_client(); // calls still running get an error ("the client stopped")

  using done_fn = std::function<void(result<openai_answer>)>;
  void complete(openai_completion_call call, done_fn done);

  // Tries repeated so far (all calls).
  std::uint64_t retried() const;

  struct impl;
  explicit openai_client(passkey<openai_client>) {} // create() only

private:
  std::shared_ptr<impl> impl_;
};

// The answer body of POST /completions as samples (exposed for the tests).
result<openai_answer> parse_completion_answer(const std::string& body);

} // namespace leap::serve
