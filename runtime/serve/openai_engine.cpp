#include "runtime/serve/openai_engine.hpp"

#include "common/prometheus.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/serve/openai_api.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

namespace leap::serve {

namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

std::string random_hex(std::mt19937_64& rng) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 24; ++i)
    s += digits[rng() & 15];
  return s;
}

http_response error_response(const openai::api_error& e, const std::string& route) {
  http_response res;
  res.status = e.status;
  res.body = openai::error_body(e);
  res.route = route;
  return res;
}

} // namespace

void declare_openai_metrics(prom::registry& m) {
  m.declare("leap_generate_requests_total", "OpenAI-compatible generation requests, by route.",
            prom::kind::counter);
  m.declare("leap_generate_batches_total", "Batched decodes run for them.", prom::kind::counter);
  m.declare("leap_generate_rows_total", "Rows (prompts x n) decoded in those batches.",
            prom::kind::counter);
  m.declare("leap_generate_batch_rows_max", "The most rows one batched decode held.",
            prom::kind::gauge);
  m.declare("leap_generate_tokens_total", "Tokens generated.", prom::kind::counter);
}

struct openai_engine::impl {
  openai_engine_options opts;
  std::string model_name;
  std::int64_t created = 0;
  std::shared_ptr<const policy::tokenizer> tok;
  std::unique_ptr<policy::policy_model> model;
  std::int64_t max_seq_len = 0;
  policy::chat_format format = policy::chat_format::leap;
  int turn_end_id = -1;  // the format's end-of-turn token: a stop token of chat requests

  struct pending {
    openai::completion_request req;
    respond_fn respond;
    std::string route;
    // Filled on the decode thread:
    std::vector<std::vector<int>> prompts;
    int max_tokens = 0;
  };
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<pending> queue;
  bool stopping = false;
  std::thread thread;
  std::mt19937_64 rng{std::random_device{}()}; // ids and unseeded requests' seeds (thread only)
  double max_rows_seen = 0;

  // Tokenizes the prompts and settles max_tokens; false when it answered an error.
  bool prepare(pending& p) {
    const auto& r = p.req;
    for (const auto& text : r.prompts)
      p.prompts.push_back(tok->encode(text, true));
    for (const auto& ids : r.prompt_ids) {
      for (int t : ids)
        if (t >= tok->vocab_size() || t >= model->config().vocab_size) {
          p.respond(error_response({400, "field prompt: token id " + std::to_string(t)
                                           + " is outside the vocabulary",
                                    "prompt"},
                                   p.route));
          return false;
        }
      p.prompts.push_back(ids);
    }
    std::size_t longest = 0;
    for (const auto& ids : p.prompts) {
      if (ids.empty()) {
        p.respond(error_response({400, "field prompt: an empty prompt", "prompt"}, p.route));
        return false;
      }
      longest = std::max(longest, ids.size());
    }
    const char* what = r.chat ? "messages" : "prompt";
    const auto room = max_seq_len - static_cast<std::int64_t>(longest);
    if (room < 1) {
      p.respond(error_response({400, std::string("field ") + what + ": " + std::to_string(longest)
                                       + " tokens leave no room in this model's maximum context "
                                         "length of "
                                       + std::to_string(max_seq_len) + " tokens",
                                what},
                               p.route));
      return false;
    }
    const int wanted = r.max_tokens > 0 ? r.max_tokens : opts.default_max_tokens;
    p.max_tokens = static_cast<int>(std::min<std::int64_t>(wanted, room));
    return true;
  }

  static bool compatible(const openai::completion_request& a, const openai::completion_request& b) {
    return a.temperature == b.temperature && (a.temperature <= 0 || a.top_p == b.top_p)
           && a.stop == b.stop;
  }

  struct batch {
    std::vector<pending*> items;
    std::size_t rows = 0, longest = 0;
    int max_tokens = 0;
  };

  // Groups the requests into batches of compatible ones within the row limit and the context.
  std::vector<batch> plan(std::vector<pending>& ready) const {
    std::vector<batch> out;
    for (auto& p : ready) {
      std::size_t rows = p.prompts.size() * static_cast<std::size_t>(p.req.n), longest = 0;
      for (auto& ids : p.prompts)
        longest = std::max(longest, ids.size());
      batch* into = nullptr;
      for (auto& b : out) {
        const auto L = std::max(b.longest, longest);
        if (compatible(b.items.front()->req, p.req) && b.max_tokens == p.max_tokens
            && b.rows + rows <= static_cast<std::size_t>(opts.max_batch_rows)
            && static_cast<std::int64_t>(L) + p.max_tokens <= max_seq_len) {
          into = &b;
          break;
        }
      }
      if (!into) {
        out.emplace_back();
        into = &out.back();
        into->max_tokens = p.max_tokens;
      }
      into->items.push_back(&p);
      into->rows += rows;
      into->longest = std::max(into->longest, longest);
    }
    return out;
  }

  // An answer's id (new for each), the served model's name and the time (decode thread only).
  openai::answer_meta meta_of(const openai::completion_request& r) {
    return {(r.chat ? "chatcmpl-" : "cmpl-") + random_hex(rng), model_name, unix_now()};
  }

  // The bytes token `t` adds to an answer's text: none for an eos token (any of the model's eos
  // ids) nor, in a chat answer, for the format's end-of-turn token (a stop token there).
  std::string piece_of(int t, bool chat) const {
    const bool ends = model->config().is_eos(t) || (chat && t == turn_end_id);
    return ends ? std::string() : std::string(tok->token_bytes(t));
  }

  // The alternatives the sampler gives (token ids) as top_logprobs shows them (their bytes; a
  // special token by its text).
  openai::alternatives alternatives_of(const std::vector<std::pair<int, float>>& top) const {
    openai::alternatives a;
    for (const auto& [id, lp] : top)
      a.emplace_back(std::string(tok->token_bytes(id)), lp);
    return a;
  }

  // The text and per-token pieces of a sample: piece_of; the text ends before
  // the first stop string.
  openai::choice choice_of(const policy::sampled& s, const std::vector<std::string>& stops,
                           bool chat) const {
    openai::choice c;
    c.tokens = s.tokens;
    for (std::size_t k = 0; k < s.tokens.size(); ++k) {
      const int t = s.tokens[k];
      c.pieces.push_back(piece_of(t, chat));
      c.logprobs.push_back(k < s.logprobs.size() ? s.logprobs[k] : 0.0f);
      if (k < s.top_logprobs.size())
        c.top.push_back(alternatives_of(s.top_logprobs[k]));
      c.text += c.pieces.back();
    }
    c.finish_reason = s.finish == "length" ? "length" : "stop";
    std::size_t cut = std::string::npos;
    for (const auto& st : stops) {
      auto at = c.text.find(st);
      if (at != std::string::npos && (cut == std::string::npos || at < cut))
        cut = at;
    }
    if (cut != std::string::npos) {
      c.finish_reason = "stop";
      c.text.resize(cut);
      std::size_t at = 0, k = 0;
      for (; k < c.pieces.size() && at < cut; ++k) {
        if (at + c.pieces[k].size() > cut)
          c.pieces[k].resize(cut - at);
        at += c.pieces[k].size();
      }
      c.pieces.resize(k);
      c.logprobs.resize(k);
      if (c.top.size() > k)
        c.top.resize(k);
    }
    return c;
  }

  void run_batch(batch& b) {
    const auto& first = b.items.front()->req;
    std::vector<std::vector<int>> prompts;
    policy::group_sampling gs;
    gs.temperature = first.temperature;
    gs.top_p = first.temperature <= 0 ? 1.0 : first.top_p;
    gs.max_new_tokens = b.max_tokens;
    for (auto* p : b.items) // each request shows its own number of them
      if (p->req.logprobs)
        gs.top_logprobs = std::max(gs.top_logprobs, p->req.top_logprobs);
    gs.stop_strings = first.stop;
    if (first.chat && turn_end_id >= 0)
      gs.stop_ids.push_back(turn_end_id);
    auto t = tok;
    if (!gs.stop_strings.empty())
      gs.decode = [t](const std::vector<int>& ids) { return t->decode(ids); };
    // Streamed requests answer now (the header) and send each token's text as it is drawn.
    struct live {
      std::unique_ptr<openai::stream_encoder> enc;
      std::shared_ptr<body_stream> out;
    };
    std::vector<live> streams(b.items.size());
    std::vector<std::pair<std::size_t, std::size_t>> row_owner; // row -> (item, choice)
    for (std::size_t it = 0; it < b.items.size(); ++it) {
      auto* p = b.items[it];
      const std::uint64_t seed = p->req.seed ? *p->req.seed : rng();
      std::uint64_t index = 0;
      for (auto& ids : p->prompts)
        for (int j = 0; j < p->req.n; ++j) {
          prompts.push_back(ids);
          gs.row_seeds.push_back(openai::row_seed(seed, index));
          row_owner.emplace_back(it, static_cast<std::size_t>(index++));
        }
      if (p->req.stream) {
        const auto m = meta_of(p->req);
        auto& l = streams[it];
        l.enc = std::make_unique<openai::stream_encoder>(p->req, m, static_cast<std::size_t>(index));
        l.out = make_body_stream();
        std::string head;
        for (std::size_t c = 0; c < index; ++c)
          head += l.enc->open(c);
        l.out->write(std::move(head));
        http_response res;
        res.route = p->route;
        res.content_type = "text/event-stream";
        res.stream = l.out;
        p->respond(std::move(res));
      }
    }
    if (std::any_of(streams.begin(), streams.end(), [](const live& l) { return l.out != nullptr; }))
      gs.on_token = [this, &b, &streams, &row_owner](std::size_t row, int t, float lp,
                                                     const std::vector<std::pair<int, float>>& top) {
        const auto [it, c] = row_owner[row];
        auto& l = streams[it];
        if (!l.out)
          return;
        auto events = l.enc->token(c, t, piece_of(t, b.items[it]->req.chat), lp, alternatives_of(top));
        if (!events.empty())
          l.out->write(std::move(events));
      };
    auto r = model->sample_each(prompts, gs);
    if (opts.metrics) {
      opts.metrics->inc("leap_generate_batches_total");
      opts.metrics->inc("leap_generate_rows_total", {}, static_cast<double>(prompts.size()));
      max_rows_seen = std::max(max_rows_seen, static_cast<double>(prompts.size()));
      opts.metrics->set("leap_generate_batch_rows_max", {}, max_rows_seen);
    }
    std::size_t at = 0;
    for (std::size_t it = 0; it < b.items.size(); ++it) {
      auto* p = b.items[it];
      auto& l = streams[it];
      const auto rows = p->prompts.size() * static_cast<std::size_t>(p->req.n);
      if (!r) {
        openai::api_error e{500, "generation failed: " + r.message(), "", "server_error"};
        if (l.out) { // the 200 and its header are gone: the error goes in the stream
          l.out->write("data: " + openai::error_body(e) + "\n\n");
          l.out->end();
        } else {
          p->respond(error_response(e, p->route));
        }
        continue;
      }
      std::vector<openai::choice> choices;
      openai::usage u;
      for (auto& ids : p->prompts)
        u.prompt_tokens += static_cast<long long>(ids.size());
      if (p->req.return_token_ids)
        u.prompt_ids = p->prompts;
      for (std::size_t k = 0; k < rows; ++k) {
        choices.push_back(choice_of((*r)[at + k], p->req.stop, p->req.chat));
        u.completion_tokens += static_cast<long long>((*r)[at + k].tokens.size());
      }
      at += rows;
      if (opts.metrics)
        opts.metrics->inc("leap_generate_tokens_total", {}, static_cast<double>(u.completion_tokens));
      if (l.out) {
        std::string tail;
        for (std::size_t k = 0; k < rows; ++k)
          tail += l.enc->finish(k, choices[k].finish_reason);
        tail += l.enc->close(u);
        l.out->write(std::move(tail));
        l.out->end();
        continue;
      }
      const auto m = meta_of(p->req);
      http_response res;
      res.route = p->route;
      res.body = openai::answer_body(p->req, m, choices, u);
      p->respond(std::move(res));
    }
  }

  void run() {
    for (;;) {
      std::vector<pending> taken;
      {
        std::unique_lock<std::mutex> lk(mtx);
        cv.wait(lk, [&] { return stopping || !queue.empty(); });
        if (stopping)
          return;
        // Everything queued while the decoder was busy goes into this round.
        while (!queue.empty()) {
          taken.push_back(std::move(queue.front()));
          queue.pop_front();
        }
      }
      std::vector<pending> ready;
      for (auto& p : taken)
        if (prepare(p))
          ready.push_back(std::move(p));
      for (auto& b : plan(ready))
        run_batch(b);
    }
  }
};

result<std::unique_ptr<openai_engine>> openai_engine::create(openai_engine_options opts) {
  const auto& dir = opts.checkpoint_dir;
  auto tok_path = policy::checkpoint_tokenizer_path(dir);
  if (!tok_path)
    return make_error("--checkpoint " + dir + ": " + tok_path.message());
  auto tok = policy::tokenizer::load(*tok_path);
  if (!tok)
    return make_error("--checkpoint " + dir + ": " + tok.message());
  auto model = policy::policy_model::load(dir);
  if (!model)
    return make_error("--checkpoint " + dir + ": " + model.message());
  auto e = std::make_unique<openai_engine>(passkey<openai_engine>());
  e->impl_ = std::make_unique<impl>();
  auto& i = *e->impl_;
  i.tok = std::make_shared<const policy::tokenizer>(std::move(*tok));
  i.model = std::make_unique<policy::policy_model>(std::move(*model));
  i.max_seq_len = i.model->config().max_seq_len;
  auto format = runtime::chat_format_for(opts.chat_format, dir, *i.tok);
  if (!format)
    return make_error("--checkpoint " + dir + ": " + format.message());
  i.format = *format;
  i.turn_end_id = i.tok->token_id(policy::end_of_turn(i.format));
  i.model_name = opts.model_name;
  if (i.model_name.empty()) {
    auto p = std::filesystem::path(dir);
    if (!p.has_filename())
      p = p.parent_path();
    i.model_name = p.filename().string();
  }
  i.created = unix_now();
  opts.max_batch_rows = std::max(1, opts.max_batch_rows);
  i.opts = std::move(opts);
  i.thread = std::thread([p = &i] { p->run(); });
  return e;
}

openai_engine::openai_engine(passkey<openai_engine>) {}

openai_engine::~openai_engine() {
  std::deque<impl::pending> left;
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    impl_->stopping = true;
    left.swap(impl_->queue);
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable())
    impl_->thread.join();
  for (auto& p : left)
    p.respond(error_response({503, "the server is stopping", "", "server_error"}, p.route));
}

const std::string& openai_engine::model_name() const { return impl_->model_name; }

policy::chat_format openai_engine::chat_format() const { return impl_->format; }

void openai_engine::handle(const http_request& req, respond_fn respond) {
  auto path = req.target.substr(0, req.target.find('?'));
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  if (path == "/v1/models") {
    http_response res;
    res.route = "models";
    res.body = openai::models_body(impl_->model_name, impl_->created);
    return respond(std::move(res));
  }
  const bool chat = path == "/v1/chat/completions";
  const std::string route = chat ? "chat_completions" : "completions";
  auto parsed = chat ? openai::parse_chat(req.body, impl_->format) : openai::parse_completion(req.body);
  if (!parsed.request)
    return respond(error_response(parsed.error, route));
  if (impl_->opts.metrics)
    impl_->opts.metrics->inc("leap_generate_requests_total", {{"route", route}});
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    if (impl_->stopping)
      return respond(error_response({503, "the server is stopping", "", "server_error"}, route));
    impl::pending p;
    p.req = std::move(*parsed.request);
    p.respond = std::move(respond);
    p.route = route;
    impl_->queue.push_back(std::move(p));
  }
  impl_->cv.notify_one();
}

} // namespace leap::serve
