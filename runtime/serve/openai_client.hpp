// A client of an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp's server, or
// `leap serve --checkpoint`): POST {url}/completions with a prompt of token ids, answered with
// each choice's tokens (vLLM's `token_ids`, asked for with return_token_ids), behaviour
// log-probs when the server returns them, text and finish reason. Boost.Beast over Asio on one
// I/O thread of its own: complete() never blocks, its callback runs on that thread. http:// or
// https:// (Asio's OpenSSL stream: SNI, the peer's certificate verified against tls_ca or the
// system store and checked to name the URL's host). At most
// max_concurrency calls are on the wire; the rest wait in order. A call that times out, cannot
// connect, or is answered 429 or 5xx is tried again after a back-off (doubling from `backoff`,
// or the server's Retry-After when larger), up to `retries` more times; then its callback gets
// an error naming the last failure and the number of tries. 4xx other than 429 are not retried,
// nor is a TLS handshake the server or its certificate failed (the error names the URL and
// OpenSSL's reason, e.g. "certificate verify failed (unable to get local issuer certificate)").
// create() and the destructor are for one owning thread; complete() and retried() may be called
// from any thread.
// `leap eval` samples through it with generation.source = "openai"
// (runtime/workflows/openai_generation.cpp, docs/serve.md).
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
  std::string url;         // http(s)://HOST[:PORT][/v1] (ports 80 and 443 by default)
  std::string model;
  std::string api_key;     // sent as Authorization: Bearer (empty: no header)
  std::string tls_ca;      // https only: PEM file of trusted CAs (empty: the system store)
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
  // Parses the URL and, for https://, loads the CA file (or the system store); an error names
  // the URL or the file.
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
