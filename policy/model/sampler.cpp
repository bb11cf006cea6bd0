// Batched group sampling with a KV cache: see sampler.hpp.
#include "policy/model/sampler.hpp"

#include "policy/model/decode_step.hpp"
#include "policy/model/decoder.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <mutex>

namespace leap::policy {
namespace {

// A private generator for `device`, seeded. On the CPU (where leap samples: multinomial_one
// needs a CPU generator) it is made directly. Not cloned from the default generator: LibTorch
// 1.13's GeneratorImpl::clone() takes its result over with a raw incref and no weak count, so a
// clone is never freed (100,000 clones held 251 MiB); sampling cloned one per call and one per
// seeded row, which held about 0.08 MiB more for every learner step of the soak (heaptrack).
// Other devices still clone (no LibTorch API makes their generators without the device's
// headers); leap does not sample on them.
at::Generator seeded_generator(const torch::Device& device, std::uint64_t seed) {
  if (device.is_cpu()) return at::make_generator<at::CPUGeneratorImpl>(seed);
  auto def = at::globalContext().defaultGenerator(device);
  at::Generator gen;
  {
    std::lock_guard<std::mutex> lock(def.mutex());
    gen = def.clone();
  }
  gen.set_current_seed(seed);
  return gen;
}

result<void> check_params(const decoder_impl& model, const std::vector<int>& prompt, const sampling_params& p) {
  const auto& cfg = model.config();
  if (prompt.empty()) return make_error("sample_group: empty prompt");
  for (int t : prompt) {
    if (t < 0 || t >= cfg.vocab_size) {
      return make_error("sample_group: prompt token " + std::to_string(t) + " outside the vocabulary [0, " +
                        std::to_string(cfg.vocab_size) + ")");
    }
  }
  if (p.group_size < 1) return make_error("sample_group: group_size must be >= 1");
  if (p.max_new_tokens < 0) return make_error("sample_group: max_new_tokens must be >= 0");
  if (p.top_logprobs < 0) return make_error("sample_group: top_logprobs must be >= 0");
  if (!(p.top_p > 0.0 && p.top_p <= 1.0)) return make_error("sample_group: top_p must be in (0, 1]");
  if (!p.stop_strings.empty() && !p.decode) return make_error("sample_group: stop_strings need a decode function");
  if (!p.row_seeds.empty() && static_cast<int>(p.row_seeds.size()) != p.group_size)
    return make_error("sample_group: " + std::to_string(p.row_seeds.size()) + " row seeds for " +
                      std::to_string(p.group_size) + " rows");
  for (const auto& s : p.stop_strings) {
    if (s.empty()) return make_error("sample_group: empty stop string");
  }
  if (static_cast<std::int64_t>(prompt.size()) >= cfg.max_seq_len) {
    return make_error("sample_group: prompt of " + std::to_string(prompt.size()) +
                      " tokens leaves no room below max_position_embeddings = " + std::to_string(cfg.max_seq_len));
  }
  return {};
}

// Earliest end (exclusive) of any stop string in `text`, or npos.
std::size_t find_stop(const std::string& text, const std::vector<std::string>& stops) {
  std::size_t best = std::string::npos, best_end = std::string::npos;
  for (const auto& s : stops) {
    auto at = text.find(s);
    if (at != std::string::npos && (best == std::string::npos || at < best)) {
      best = at;
      best_end = at + s.size();
    }
  }
  return best_end;
}

} // namespace

// torch::multinomial(probs, 1, false, gen) [R, 1]; on the CPU in float32 the same draws without
// most of their logarithms (decode_step.hpp).
static torch::Tensor draw(const torch::Tensor& probs, at::Generator& gen) {
  if (probs.device().is_cpu() && probs.scalar_type() == torch::kFloat && probs.dim() == 2)
    return multinomial_one(probs, gen);
  return torch::multinomial(probs, 1, false, gen);
}

std::uint64_t sequence_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

const char* finish_reason_name(finish_reason r) {
  switch (r) {
    case finish_reason::eos: return "eos";
    case finish_reason::stop: return "stop";
    case finish_reason::length: return "length";
  }
  return "?";
}

// Samples until every row finished or max_new tokens: rows of `cache` and `logits` [R, V] map
// to out[0..R). Finished rows are dropped from the batch. Steps run through `fused` when given
// (with `prefix`, if any, as keys shared by every row), else through forward_cached.
static void decode_rows(decoder_impl& model, kv_cache& cache, torch::Tensor logits, std::int64_t max_new,
                        const sampling_params& params, at::Generator& gen, std::vector<sample>& out,
                        const decode_step* fused, kv_cache* prefix) {
  const auto& cfg = model.config();
  const bool greedy = params.temperature <= 0.0;
  const auto G = static_cast<std::int64_t>(out.size());
  std::vector<std::int64_t> active(static_cast<std::size_t>(G));  // cache row -> sample index
  for (std::int64_t i = 0; i < G; ++i) active[static_cast<std::size_t>(i)] = i;
  // Per-row generators (params.row_seeds): row r of `p` draws from its sample's own generator.
  std::vector<at::Generator> row_gens;
  for (auto s : params.row_seeds) row_gens.push_back(seeded_generator(logits.device(), s));
  auto draw_rows = [&](const torch::Tensor& p) {
    if (row_gens.empty()) return draw(p, gen);
    std::vector<torch::Tensor> picks;
    for (std::size_t r = 0; r < active.size(); ++r) {
      auto row = p.slice(0, static_cast<std::int64_t>(r), static_cast<std::int64_t>(r) + 1).contiguous();
      picks.push_back(draw(row, row_gens[static_cast<std::size_t>(active[r])]));
    }
    return torch::cat(picks, 0);
  };

  for (std::int64_t step = 0; step < max_new && !active.empty(); ++step) {
    auto lf = logits.to(torch::kFloat);                                                    // [R, V]
    torch::Tensor logp, next;                                                              // [R, V], [R]
    if (greedy) {
      logp = torch::log_softmax(lf, -1);
      next = lf.argmax(-1);
    } else {
      logp = torch::log_softmax(params.temperature == 1.0 ? lf : lf / params.temperature, -1);
      auto probs = logp.exp();
      if (params.top_p < 1.0) {
        auto [sorted, order] = torch::sort(probs, /*stable=*/true, -1, /*descending=*/true);  // [R, V]
        // Keep a token while the mass before it is below top_p (the first is always kept).
        auto drop = (sorted.cumsum(-1) - sorted) >= params.top_p;
        auto pick = draw_rows(sorted.masked_fill(drop, 0.0));                                 // [R, 1]
        next = order.gather(1, pick).squeeze(1);
      } else {
        next = draw_rows(probs).squeeze(1);
      }
    }
    auto lp = logp.gather(1, next.unsqueeze(1)).squeeze(1);                                // [R]
    const auto top_k = std::min<std::int64_t>(params.top_logprobs, logp.size(1));
    torch::Tensor top_v, top_i;                                                            // [R, k]
    if (top_k > 0) {
      auto [v, i] = logp.topk(top_k, -1);
      top_v = v.to(torch::kCPU, torch::kFloat).contiguous();
      top_i = i.to(torch::kCPU, torch::kLong).contiguous();
    }
    auto next_cpu = next.to(torch::kCPU, torch::kLong).contiguous();
    auto lp_cpu = lp.to(torch::kCPU, torch::kFloat).contiguous();
    const auto* nt = next_cpu.data_ptr<std::int64_t>();
    const auto* nl = lp_cpu.data_ptr<float>();

    std::vector<std::int64_t> keep_rows, keep_active;
    for (std::size_t r = 0; r < active.size(); ++r) {
      sample& s = out[static_cast<std::size_t>(active[r])];
      const int tok = static_cast<int>(nt[r]);
      s.tokens.push_back(tok);
      s.logprobs.push_back(nl[r]);
      std::vector<std::pair<int, float>> top;
      if (top_k > 0) {
        const auto* tv = top_v.data_ptr<float>() + static_cast<std::int64_t>(r) * top_k;
        const auto* ti = top_i.data_ptr<std::int64_t>() + static_cast<std::int64_t>(r) * top_k;
        for (std::int64_t k = 0; k < top_k; ++k) top.emplace_back(static_cast<int>(ti[k]), tv[k]);
      }
      if (params.on_token) params.on_token(static_cast<std::size_t>(active[r]), tok, nl[r], top);
      if (top_k > 0) s.top_logprobs.push_back(std::move(top));
      bool done = true;
      if (cfg.is_eos(tok)) {
        s.finish = finish_reason::eos;
      } else if (std::find(params.stop_token_ids.begin(), params.stop_token_ids.end(), tok) !=
                 params.stop_token_ids.end()) {
        s.finish = finish_reason::stop;
      } else if (!params.stop_strings.empty()) {
        std::string text = params.decode(s.tokens);
        auto end = find_stop(text, params.stop_strings);
        if (end != std::string::npos) {
          s.finish = finish_reason::stop;
          s.text = text.substr(0, end);
        } else {
          done = false;
        }
      } else {
        done = false;
      }
      if (!done) {
        keep_rows.push_back(static_cast<std::int64_t>(r));
        keep_active.push_back(active[r]);
      }
    }
    if (keep_rows.size() != active.size()) {  // drop finished rows from the batch
      if (keep_rows.empty()) break;
      auto rows = torch::tensor(keep_rows, torch::kLong);
      cache.select_rows(rows);
      next = next.index_select(0, rows.to(next.device()));
      active = std::move(keep_active);
    }
    if (step + 1 < max_new) {
      logits = fused ? (*fused)(next, cache, prefix)                                       // [R, V]
                     : model.forward_cached(next.view({-1, 1}), cache).select(1, 0);
    }
  }
}

result<std::vector<sample>> sample_group(decoder_impl& model, const std::vector<int>& prompt,
                                         const sampling_params& params) {
  if (auto r = check_params(model, prompt, params); !r) return r.err();
  const auto& cfg = model.config();
  const auto P = static_cast<std::int64_t>(prompt.size());
  const auto G = static_cast<std::int64_t>(params.group_size);
  const std::int64_t max_new = std::min<std::int64_t>(params.max_new_tokens, cfg.max_seq_len - P);
  std::vector<sample> out(static_cast<std::size_t>(G));
  try {
    c10::InferenceMode inference;
    const auto dev = model.device();
    auto gen = seeded_generator(dev, params.seed);

    // Prefill once at batch 1. The fused step keeps the prompt's cache as a prefix shared by
    // the group's rows, which then cache only their own tokens; otherwise the cache is expanded
    // to the group.
    auto fused = max_new > 1 ? model.fused_step() : nullptr;
    auto cache = model.make_cache(1, fused ? P : P + max_new);
    auto ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end()), torch::kLong)
                   .view({1, P}).to(dev);                                                    // [1, P]
    auto logits = fused ? fused->prefill(ids.view({P}), cache)                              // [1, V]
                        : model.forward_cached_last(ids, cache);
    logits = logits.expand({G, cfg.vocab_size});                                             // [G, V]
    if (fused) {
      auto own = model.make_cache(G, max_new);
      own.next_pos = cache.next_pos.expand({G}).clone();
      decode_rows(model, own, logits, max_new, params, gen, out, fused.get(), &cache);
    } else {
      cache.select_rows(torch::zeros({G}, torch::kLong));
      decode_rows(model, cache, logits, max_new, params, gen, out, nullptr, nullptr);
    }
  } catch (const c10::Error& e) {
    return make_error(std::string("sample_group: ") + e.what_without_backtrace());
  }
  for (auto& s : out) {
    s.length = static_cast<int>(s.tokens.size());
    if (params.decode && s.text.empty()) s.text = params.decode(s.tokens);
  }
  return out;
}

result<std::vector<sample>> sample_batch(decoder_impl& model,
                                         const std::vector<std::vector<int>>& prompts,
                                         const sampling_params& params) {
  const auto& cfg = model.config();
  std::int64_t P = 0;
  for (auto& p : prompts) {
    auto one = params;
    one.group_size = 1;
    one.row_seeds.clear();
    if (auto r = check_params(model, p, one); !r) return r.err();
    P = std::max<std::int64_t>(P, static_cast<std::int64_t>(p.size()));
  }
  const auto N = static_cast<std::int64_t>(prompts.size());
  if (!params.row_seeds.empty() && params.row_seeds.size() != prompts.size())
    return make_error("sample_batch: " + std::to_string(params.row_seeds.size()) + " row seeds for " +
                      std::to_string(prompts.size()) + " prompts");
  std::vector<sample> out(static_cast<std::size_t>(N));
  if (N == 0) return out;
  const std::int64_t max_new = std::min<std::int64_t>(params.max_new_tokens, cfg.max_seq_len - P);
  if (max_new <= 0)
    return make_error("sample_batch: the longest prompt (" + std::to_string(P)
                      + " tokens) leaves no room under max_seq_len " + std::to_string(cfg.max_seq_len));
  try {
    c10::InferenceMode inference;
    const auto dev = model.device();
    auto gen = seeded_generator(dev, params.seed);
    // Left-padded prefill: every row's last prompt token sits at position P - 1.
    const std::int64_t pad = cfg.pad_id >= 0 ? cfg.pad_id : 0;
    auto ids = torch::full({N, P}, pad, torch::kLong);                                       // [N, P]
    auto mask = torch::zeros({N, P}, torch::kLong);                                          // [N, P]
    auto ia = ids.accessor<std::int64_t, 2>();
    auto ma = mask.accessor<std::int64_t, 2>();
    for (std::int64_t r = 0; r < N; ++r) {
      const auto& p = prompts[static_cast<std::size_t>(r)];
      const auto off = P - static_cast<std::int64_t>(p.size());
      for (std::size_t k = 0; k < p.size(); ++k) {
        ia[r][off + static_cast<std::int64_t>(k)] = p[k];
        ma[r][off + static_cast<std::int64_t>(k)] = 1;
      }
    }
    auto fused = max_new > 1 ? model.fused_step() : nullptr;
    auto cache = model.make_cache(N, P + max_new);
    auto logits = model.forward_cached_last(ids.to(dev), cache, mask.to(dev));              // [N, V]
    decode_rows(model, cache, logits, max_new, params, gen, out, fused.get(), nullptr);
  } catch (const c10::Error& e) {
    return make_error(std::string("sample_batch: ") + e.what_without_backtrace());
  }
  for (auto& s : out) {
    s.length = static_cast<int>(s.tokens.size());
    if (params.decode && s.text.empty()) s.text = params.decode(s.tokens);
  }
  return out;
}

} // namespace leap::policy
