// generation.source = "openai": see openai_generation.hpp.
#include "runtime/workflows/openai_generation.hpp"

#include "policy/generation_engine.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/serve/openai_client.hpp"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace leap::runtime {

result<std::shared_ptr<policy::generation_engine>>
openai_generation_engine(const config::leap_config& cfg,
                         std::shared_ptr<const policy::tokenizer> tok,
                         policy::chat_format format) {
  if (cfg.openai.model.empty())
    return make_error("generation.source = \"openai\" needs openai.model (the served model's "
                      "name)");
  serve::openai_client_options o;
  o.url = cfg.openai.url;
  o.model = cfg.openai.model;
  if (const char* key = std::getenv(cfg.openai.api_key_env.c_str()))
    o.api_key = key;
  o.tls_ca = cfg.openai.tls_ca;
  o.max_concurrency = cfg.openai.max_concurrency;
  o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(cfg.openai.timeout_seconds));
  auto c = serve::openai_client::create(o);
  if (!c)
    return c.err();
  std::shared_ptr<serve::openai_client> client = std::move(*c);
  const int eos = tok->token_id(policy::end_of_turn(format));
  struct gather {
    std::mutex m;
    std::vector<std::vector<policy::sampled>> per_prompt;
    std::size_t left = 0;
    bool failed = false;
    policy::generation_engine::remote_done done;
  };
  auto remote = [client, tok, eos](const policy::generation_job& job,
                                   policy::generation_engine::remote_done done) {
    const std::size_t P = job.prompts.size();
    const int G = job.samples_per_prompt;
    if (P == 0)
      return done(std::vector<policy::sampled>{});
    auto g = std::make_shared<gather>();
    g->per_prompt.resize(P);
    g->left = P;
    g->done = std::move(done);
    for (std::size_t i = 0; i < P; ++i) {
      serve::openai_completion_call call;
      call.prompt = job.prompts[i];
      call.n = G;
      call.temperature = job.sampling.temperature;
      call.top_p = job.sampling.top_p;
      call.max_tokens = job.sampling.max_new_tokens;
      call.seed = job.sampling.seed + i;
      client->complete(call, [g, i, G, tok, eos](result<serve::openai_answer> r) {
        result<std::vector<policy::sampled>> finished = std::vector<policy::sampled>{};
        bool call_done = false;
        {
          std::lock_guard<std::mutex> lk(g->m);
          if (g->failed)
            return;
          if (!r || r->samples.size() != static_cast<std::size_t>(G)) {
            g->failed = true;
            finished = make_error(!r ? r.message()
                                     : "the server answered " + std::to_string(r->samples.size())
                                         + " choices for n = " + std::to_string(G));
            call_done = true;
          } else {
            for (auto& s : r->samples) {
              policy::sampled x;
              x.tokens = std::move(s.tokens);
              if (x.tokens.empty()) {
                x.tokens = tok->encode(s.text, false);
                if (s.finish_reason == "stop" && eos >= 0)
                  x.tokens.push_back(eos);
              }
              x.logprobs = s.logprobs.size() == x.tokens.size()
                             ? std::move(s.logprobs)
                             : std::vector<float>(x.tokens.size(), 0.0f);
              x.finish = s.finish_reason == "length"                        ? "length"
                         : !x.tokens.empty() && x.tokens.back() == eos ? "eos"
                                                                            : "stop";
              g->per_prompt[i].push_back(std::move(x));
            }
            if (--g->left == 0) {
              std::vector<policy::sampled> all;
              for (auto& p : g->per_prompt)
                for (auto& x : p)
                  all.push_back(std::move(x));
              finished = std::move(all);
              call_done = true;
            }
          }
        }
        if (call_done)
          g->done(std::move(finished));
      });
    }
  };
  return std::shared_ptr<policy::generation_engine>(
    policy::generation_engine::create_remote(cfg.openai.max_concurrency, remote));
}

} // namespace leap::runtime
