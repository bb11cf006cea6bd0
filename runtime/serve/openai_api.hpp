// The OpenAI-compatible part of `leap serve --checkpoint` (docs/serve.md "OpenAI-compatible
// endpoints") without sockets or a model: request bodies of POST /v1/completions and
// POST /v1/chat/completions parsed into a completion_request (an error names the field, as
// OpenAI's `param`), the finished choices rendered as OpenAI's JSON answer or as its server-sent
// events, GET /v1/models, and OpenAI's error shape. Chat messages are rendered with leap's own
// template (policy::render_chat). Pure functions; any thread.
#pragma once

#include "policy/text/prompt.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leap::serve::openai {

struct completion_request {
  bool chat = false;                 // /v1/chat/completions
  std::string model;                 // as sent (answers carry the served model's name)
  // Completions: one or more prompt texts (in leap's template if the caller wants leap's
  // format; special tokens in the text are encoded as such) or one prompt of token ids.
  // Chat: the rendered conversation, one prompt.
  std::vector<std::string> prompts;
  std::vector<std::vector<int>> prompt_ids; // token-id prompts (completions only); else empty
  int n = 1;
  double temperature = 1.0;          // 0: greedy
  double top_p = 1.0;
  int max_tokens = 0;                // 0: not given (the server's default)
  std::vector<std::string> stop;     // up to 4; not part of the text returned
  std::optional<std::uint64_t> seed;
  bool logprobs = false;             // completions: `logprobs` given; chat: `logprobs: true`
  int top_logprobs = 0;              // completions: the `logprobs` integer; chat: top_logprobs
  bool stream = false;
  bool include_usage = true;         // streams always end with a usage chunk
  // vLLM's extension `return_token_ids`: each choice also carries `token_ids`, every sampled
  // token (the end-of-sequence token included, nothing cut at a stop string), and the answer
  // `prompt_token_ids` (one list per prompt): what a trainer needs to score the sample.
  bool return_token_ids = false;
};

// An OpenAI-shaped error: status, message, the request field at fault (may be empty), type.
struct api_error {
  int status = 400;
  std::string message;
  std::string param;
  std::string type = "invalid_request_error";
};

struct parsed_request {
  std::optional<completion_request> request;
  api_error error; // when !request
};

inline constexpr int max_n = 64; // completions (prompts x n) per request
inline constexpr int max_stop = 4;

// The seed of row `index` (prompt i, sample j: i * n + j) of a request seeded with `seed`
// (policy::sequence_seed): every row draws from its own generator, so a seeded request's text
// does not depend on what else shares its batch, and equals in-process sampling's.
std::uint64_t row_seed(std::uint64_t seed, std::uint64_t index);

parsed_request parse_completion(const std::string& body);
// Chat messages are written in `format` (policy::render_chat).
parsed_request parse_chat(const std::string& body, policy::chat_format format = policy::chat_format::leap);

// {"error":{"message","type","param","code"}}
std::string error_body(const api_error& e);

// GET /v1/models: one model.
std::string models_body(const std::string& model, std::int64_t created);

// The most likely tokens at one position (each one's bytes and log-prob), most likely first:
// what `top_logprobs` shows.
using alternatives = std::vector<std::pair<std::string, float>>;

// One finished choice, in the order of the answer's `choices` (prompt i, sample j at i * n + j).
struct choice {
  std::vector<int> tokens;           // the completion's token ids (the eos token included)
  std::vector<float> logprobs;       // one per token
  std::vector<std::string> pieces;   // the bytes each token adds to `text` (see below)
  std::vector<alternatives> top;     // per piece when top_logprobs > 0 (else empty)
  std::string text;                  // decoded, without the eos token, cut before a stop string
  std::string finish_reason;         // "stop" or "length"
};

struct usage {
  std::vector<std::vector<int>> prompt_ids; // for return_token_ids
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
};

struct answer_meta {
  std::string id;                    // "cmpl-..." / "chatcmpl-..."
  std::string model;
  std::int64_t created = 0;          // unix seconds
};

// The non-streaming answer.
std::string answer_body(const completion_request& r, const answer_meta& m,
                        const std::vector<choice>& choices, const usage& u);
// A streamed answer's events ("data: {...}\n\n"), made as the tokens come: the live path of
// `stream: true` (runtime/serve/openai_engine.cpp) and, fed a finished answer, stream_body. Per
// choice it holds back the bytes of a character split over tokens and text that may be the start
// of a stop string; text from a stop string on is never sent (its tokens still count in
// token_ids and usage). Each event carries what became sure, with the log-probs of the tokens
// whose bytes it completes. Not thread-safe: one request's decode thread.
class stream_encoder {
public:
  stream_encoder(completion_request r, answer_meta m, std::size_t choices);
  // Chat: choice i's first chunk (role "assistant"); completions: nothing.
  std::string open(std::size_t i);
  // Token `id` of choice i and the bytes it adds to the text (empty for an end-of-sequence
  // token): the events now ready (often one, possibly none).
  std::string token(std::size_t i, int id, const std::string& piece, float logprob,
                    const alternatives& top = {});
  // Choice i ended with `finish_reason` ("stop" or "length"; "stop" whenever a stop string cut
  // its text): what it held back, then its last chunk. Later tokens of it are ignored.
  std::string finish(std::size_t i, const std::string& finish_reason);
  // A token of choice i that adds nothing to the text: one after its text was cut at a stop
  // string by the caller (stream_body's finished choices). It counts in token_ids only.
  void token_after_cut(std::size_t i, int id);
  // The usage chunk (no choices) and "data: [DONE]".
  std::string close(const usage& u);
  // The text sent for choice i so far (after finish: all of it).
  const std::string& text(std::size_t i) const;

private:
  struct pending_token {
    std::size_t start = 0, end = 0; // its bytes in the choice's text
    std::string piece;
    float logprob = 0;
    alternatives top;
  };
  struct choice_state {
    std::string text;                  // the text so far, cut before a stop string
    std::size_t sent = 0;              // bytes of it already in events
    std::vector<int> tokens;           // every token (for return_token_ids)
    std::vector<pending_token> held;   // tokens whose log-probs are not sent yet
    bool cut = false;                  // a stop string ended the text
    bool done = false;                 // finished
  };
  std::string emit(std::size_t i, std::size_t upto, const char* finish_reason);
  completion_request r_;
  answer_meta m_;
  std::vector<choice_state> c_;
};

// The streamed answer: every event ("data: {...}\n\n") of a chunk per token and choice, a
// final chunk per choice with its finish_reason, a usage chunk (no choices), then "data: [DONE]".
std::string stream_body(const completion_request& r, const answer_meta& m,
                        const std::vector<choice>& choices, const usage& u);

} // namespace leap::serve::openai
