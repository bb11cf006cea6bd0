#include "policy/policy_model.hpp"

#include "policy/model/checkpoint.hpp"
#include "policy/model/decoder.hpp"
#include "policy/policy_model_impl.hpp"
#include "policy/model/sampler.hpp"

#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

namespace leap::policy {


int set_torch_threads(int n) {
  if (n <= 0)
    n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
  // OpenBLAS (libopenblas0-pthread) keeps its own thread pool, which LibTorch's setting does not
  // reach; its idle threads spin, so several BLAS callers in one process (generators, learner)
  // would fight over the cores. Found at run time: the reference BLAS has no such symbol.
  using set_fn = void (*)(int);
  if (auto f = reinterpret_cast<set_fn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    f(n);
  return torch::get_num_threads();
}

result<policy_model> policy_model::create(const model_config& cfg, std::uint64_t seed) {
  try {
    torch::manual_seed(seed);
    auto d = make_decoder(cfg);
    if (!d)
      return d.err();
    policy_model p;
    p.impl_ = std::make_shared<impl>();
    p.impl_->model = *d;
    return p;
  } catch (const c10::Error& e) {
    return make_error(std::string("creating the policy: ") + e.what_without_backtrace());
  }
}

result<policy_model> policy_model::load(const std::string& dir) {
  auto d = load_model(dir);
  if (!d)
    return d.err();
  policy_model p;
  p.impl_ = std::make_shared<impl>();
  p.impl_->model = *d;
  if (auto st = load_trainer_state(dir); st)
    p.impl_->step = st->step;
  return p;
}

result<void> policy_model::save(const std::string& dir, const std::string& tokenizer_json_path,
                                std::int64_t step) const {
  checkpoint_save_options o;  // no optimizer: nothing resumes an SFT, RL starts a fresh AdamW
  o.state.step = step;
  o.tokenizer_json_path = tokenizer_json_path;
  return save_checkpoint(dir, *impl_->model, o);
}

const model_config& policy_model::config() const { return impl_->model->config(); }

std::int64_t policy_model::parameter_count() const { return config().parameter_count(); }

namespace {

sampling_params to_params(const group_sampling& p) {
  sampling_params sp;
  sp.group_size = p.group_size;
  sp.temperature = p.temperature;
  sp.top_p = p.top_p;
  sp.max_new_tokens = p.max_new_tokens;
  sp.stop_token_ids = p.stop_ids;
  sp.seed = p.seed;
  sp.stop_strings = p.stop_strings;
  sp.decode = p.decode;
  sp.row_seeds = p.row_seeds;
  sp.on_token = p.on_token;
  sp.top_logprobs = p.top_logprobs;
  return sp;
}

result<std::vector<sampled>> to_sampled(result<std::vector<sample>> r) {
  if (!r)
    return r.err();
  std::vector<sampled> out;
  for (auto& s : *r)
    out.push_back({s.tokens, s.logprobs, finish_reason_name(s.finish), std::move(s.top_logprobs)});
  return out;
}

} // namespace

result<std::vector<sampled>> policy_model::sample(const std::vector<int>& prompt,
                                                  const group_sampling& p) {
  impl_->model->eval();
  return to_sampled(sample_group(*impl_->model, prompt, to_params(p)));
}

result<std::vector<sampled>> policy_model::sample_each(const std::vector<std::vector<int>>& prompts,
                                                       const group_sampling& p) {
  impl_->model->eval();
  return to_sampled(sample_batch(*impl_->model, prompts, to_params(p)));
}

selected_logits next_token_logits(decoder_impl& m, const torch::Tensor& ids,
                                  const torch::Tensor& mask, const torch::Tensor& sel) {
  const auto T = ids.size(1), D = m.config().d_model;
  auto h = m.hidden(ids, mask).slice(1, 0, T - 1).reshape({-1, D});          // [B*(T-1), D]
  selected_logits out;
  out.logits = m.project(h.index_select(0, sel)).to(torch::kFloat);          // [N, V]
  out.targets = ids.slice(1, 1, T).reshape({-1}).index_select(0, sel);       // [N]
  return out;
}

result<sft_result> policy_model::sft(const std::vector<sft_example>& examples,
                                     const sft_options& o,
                                     const std::function<void(const sft_progress&)>& progress) {
  try {
    auto& m = *impl_->model;
    const auto& cfg = m.config();
    sft_result res;
    // Examples sorted by length: a batch is a weighted draw plus weighted draws among its length
    // neighbours, so padding (and the T x T attention work on it) stays small and every sequence
    // of the batch follows the weights.
    std::vector<const sft_example*> usable;
    for (auto& e : examples) {
      auto len = static_cast<std::int64_t>(e.prompt.size() + e.completion.size());
      if (e.completion.empty() || e.weight <= 0)
        continue;
      if (len > cfg.max_seq_len) {
        ++res.skipped_examples;
        continue;
      }
      usable.push_back(&e);
    }
    std::stable_sort(usable.begin(), usable.end(), [](const sft_example* a, const sft_example* b) {
      return a->prompt.size() + a->completion.size() < b->prompt.size() + b->completion.size();
    });
    std::vector<double> cumulative;
    double total_w = 0;
    for (auto* e : usable) {
      total_w += e->weight;
      cumulative.push_back(total_w);
    }
    if (usable.empty())
      return make_error("sft: no usable example (all longer than policy.max_seq_len = "
                        + std::to_string(cfg.max_seq_len) + " tokens, or empty)");
    torch::manual_seed(o.seed);
    if (!impl_->opt)
      impl_->opt = std::make_unique<torch::optim::AdamW>(
        m.parameters(), torch::optim::AdamWOptions(o.lr).betas({0.9, 0.95}).weight_decay(o.weight_decay));
    std::mt19937_64 rng(o.seed);
    const std::int64_t pad = cfg.pad_id >= 0 ? cfg.pad_id : 0;
    auto t0 = std::chrono::steady_clock::now();
    double budget = o.minutes * 60;
    std::vector<double> losses;
    m.train();
    const int schedule = o.schedule_steps > 0 ? o.schedule_steps : o.first_step + o.max_steps;
    for (int step = 0;; ++step) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (o.max_steps > 0 ? step >= o.max_steps || elapsed >= budget : elapsed >= budget)
        break;
      const int s = o.first_step + step; // the step of the schedule
      double frac = o.max_steps > 0 ? std::min(1.0, static_cast<double>(s) / schedule)
                                    : elapsed / budget;
      double lr = o.lr;
      if (s < o.warmup_steps)
        lr = o.lr * (s + 1) / o.warmup_steps;
      else
        lr = o.lr * (o.min_lr_ratio + (1 - o.min_lr_ratio) * 0.5 * (1 + std::cos(M_PI * frac)));
      for (auto& g : impl_->opt->param_groups())
        static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
      // A batch of weighted draws, right-padded.
      std::vector<const sft_example*> batch;
      std::int64_t T = 0;
      auto draw = [&](double lo, double hi) {
        auto u = std::uniform_real_distribution<double>(lo, hi)(rng);
        auto it = std::lower_bound(cumulative.begin(), cumulative.end(), u);
        return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()), usable.size() - 1);
      };
      auto anchor = draw(0, total_w);
      auto n = static_cast<std::size_t>(std::max(1, o.batch_sequences));
      auto window = 4 * n; // length neighbours on each side
      auto lo = anchor > window ? anchor - window : 0;
      auto hi = std::min(usable.size(), anchor + window + 1);
      const double w_lo = lo > 0 ? cumulative[lo - 1] : 0.0, w_hi = cumulative[hi - 1];
      for (std::size_t k = 0; k < n; ++k) {
        auto i = k == 0 ? anchor : std::clamp(draw(w_lo, w_hi), lo, hi - 1);
        batch.push_back(usable[i]);
        T = std::max<std::int64_t>(T, static_cast<std::int64_t>(usable[i]->prompt.size() + usable[i]->completion.size()));
      }
      auto B = static_cast<std::int64_t>(batch.size());
      auto ids = torch::full({B, T}, pad, torch::kLong);              // [B, T]
      auto mask = torch::zeros({B, T}, torch::kLong);                 // [B, T] 1 = token
      auto target_mask = torch::zeros({B, T - 1}, torch::kFloat);     // [B, T-1] 1 = trained target
      auto ids_a = ids.accessor<std::int64_t, 2>();
      auto mask_a = mask.accessor<std::int64_t, 2>();
      auto tm_a = target_mask.accessor<float, 2>();
      long long tokens = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        const auto& e = *batch[static_cast<std::size_t>(b)];
        std::int64_t t = 0;
        for (int id : e.prompt) {
          ids_a[b][t] = id;
          mask_a[b][t++] = 1;
        }
        for (int id : e.completion) {
          ids_a[b][t] = id;
          mask_a[b][t] = 1;
          tm_a[b][t - 1] = 1; // logits at t-1 predict this completion token
          ++t;
        }
        tokens += t;
      }
      // Only the trained positions (completion tokens) are projected onto the vocabulary.
      auto sel = target_mask.reshape({-1}).nonzero().squeeze(-1);                // [N]
      auto out = next_token_logits(m, ids, mask, sel);                           // [N, V], [N]
      auto loss = torch::nn::functional::cross_entropy(out.logits, out.targets); // mean over N
      impl_->opt->zero_grad();
      loss.backward();
      if (o.grad_clip > 0)
        torch::nn::utils::clip_grad_norm_(m.parameters(), o.grad_clip);
      impl_->opt->step();
      ++impl_->step;
      double lv = loss.item<double>();
      losses.push_back(lv);
      res.tokens += tokens;
      res.steps = step + 1;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (progress) {
        sft_progress p;
        p.step = o.first_step + step + 1;
        p.loss = lv;
        p.lr = lr;
        p.elapsed_seconds = elapsed;
        p.tokens_per_second = elapsed > 0 ? static_cast<double>(res.tokens) / elapsed : 0;
        double done = o.max_steps > 0 ? static_cast<double>(step + 1) / o.max_steps : elapsed / budget;
        p.eta_seconds = done > 0 ? std::max(0.0, elapsed / done - elapsed) : 0;
        if (o.max_steps > 0)
          p.eta_seconds = std::min(p.eta_seconds, std::max(0.0, budget - elapsed));
        progress(p);
      }
    }
    m.eval();
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto mean_of = [](auto b, auto e) {
      double s = 0;
      int n = 0;
      for (auto it = b; it != e; ++it, ++n)
        s += *it;
      return n ? s / n : 0.0;
    };
    std::size_t k = std::min<std::size_t>(20, losses.size());
    res.first_loss = mean_of(losses.begin(), losses.begin() + static_cast<long>(k));
    res.final_loss = mean_of(losses.end() - static_cast<long>(k), losses.end());
    return res;
  } catch (const c10::Error& e) {
    return make_error(std::string("sft: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error(std::string("sft: ") + e.what());
  }
}

} // namespace leap::policy
