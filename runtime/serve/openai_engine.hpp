// The model behind `leap serve --checkpoint DIR`'s OpenAI-compatible endpoints
// (runtime/serve/openai_api.hpp, docs/serve.md): a checkpoint's policy and tokenizer on one
// decode thread of its own. Requests are parsed on the HTTP I/O thread and queued; whenever the
// decoder is free it takes everything queued and decodes compatible requests (same temperature,
// top_p, max_tokens and stop strings, within serve's row limit and the model's context) as one
// left-padded batch (policy::sample_batch), every row drawing from its own generator seeded from
// the request's `seed` and the row's index (row_seed), so a seeded request gets the same text
// whatever else shares its batch. A JSON answer is sent through the request's respond function
// from the decode thread when its batch ends; a streamed one (`stream: true`) answers when its
// batch starts, with a body_stream the decode thread writes each token's events to as they are
// sampled (openai::stream_encoder). The I/O threads never wait on it.
#pragma once

#include "common/passkey.hpp"
#include "common/result.hpp"
#include "policy/text/prompt.hpp"
#include "runtime/config/config.hpp"
#include "runtime/serve/http_server.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace leap::prom {
class registry;
}

namespace leap::serve {

struct openai_engine_options {
  std::string checkpoint_dir;
  std::string model_name;         // answers' `model` and GET /v1/models; empty: the dir's basename
  int max_batch_rows = 64;        // rows (prompts x n) decoded together at most
  int default_max_tokens = 256;   // chat requests without max_tokens
  std::shared_ptr<prom::registry> metrics; // may be null
  // How chat messages are written (policy.chat_format; auto: the checkpoint's chat_template).
  config::chat_format_choice chat_format = config::chat_format_choice::auto_detect;
};

// Declares leap_generate_* (requests, batches, rows, tokens).
void declare_openai_metrics(prom::registry& m);

class openai_engine {
public:
  // Loads the checkpoint (config.json, model.safetensors or a sharded index, tokenizer.json,
  // generation_config.json / tokenizer_config.json when present), resolves the chat format, and
  // starts the thread. Chat requests also stop on the format's end-of-turn token.
  static result<std::unique_ptr<openai_engine>> create(openai_engine_options opts);
  ~openai_engine(); // queued requests are answered 503; the running batch finishes first

  // POST /v1/completions, POST /v1/chat/completions, GET /v1/models (the caller matched the
  // route and the method). Any thread; never blocks.
  void handle(const http_request& req, respond_fn respond);
  const std::string& model_name() const;
  policy::chat_format chat_format() const;  // as resolved from policy.chat_format

  struct impl;
  explicit openai_engine(passkey<openai_engine>); // create() only

private:
  std::unique_ptr<impl> impl_;
};

} // namespace leap::serve
