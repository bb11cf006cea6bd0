// The RL half of the policy_model facade: GRPO optimizer steps for the learner, weight export
// and import for publishing policy versions to the generators, reference policy for the KL.
#include "policy/model/checkpoint.hpp"
#include "policy/model/grpo_loss.hpp"
#include "policy/model/micro_batches.hpp"
#include "policy/policy_model.hpp"
#include "policy/policy_model_impl.hpp"
#include "policy/model/safetensors.hpp"
#include "policy/model/tensor_file.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace leap::policy {

void policy_model::begin_rl(const rl_options& o) {
  auto& m = *impl_->model;
  impl_->opt = std::make_unique<torch::optim::AdamW>(
    m.parameters(), torch::optim::AdamWOptions(o.lr).betas({0.9, 0.99}).weight_decay(o.weight_decay));
}

result<void> policy_model::restore_optimizer(const std::string& dir) {
  if (!impl_->opt)
    return make_error("restore_optimizer: call begin_rl first");
  return load_optimizer_state(*impl_->opt, *impl_->model, dir);
}

result<void> policy_model::set_reference(const std::string& dir) {
  auto d = load_model(dir);
  if (!d)
    return make_error("the KL reference policy: " + d.message());
  if ((*d)->config().parameter_count() != config().parameter_count())
    return make_error("the KL reference policy in " + dir + " has other dimensions than the policy");
  (*d)->eval();
  for (auto& p : (*d)->parameters())
    p.set_requires_grad(false);
  impl_->reference = *d;
  return {};
}

namespace {

// Log-probs of the completion tokens, laid out like the loss wants them: ids [B, T], sel [N]
// (flat indices into [B, T-1] of the positions whose next token is a completion token) ->
// [B, T-1] with zeros elsewhere. Prompt positions (most of a later turn's sequence) skip the
// vocabulary projection and the softmax (next_token_logits).
torch::Tensor completion_logp(decoder_impl& m, const torch::Tensor& ids, const torch::Tensor& mask,
                              const torch::Tensor& sel, double temperature) {
  const auto B = ids.size(0), T = ids.size(1);
  auto out = next_token_logits(m, ids, mask, sel);                           // [N, V], [N]
  auto logits = out.logits;
  if (temperature > 0 && temperature != 1.0)
    logits = logits / temperature;
  auto lp = torch::log_softmax(logits, -1).gather(-1, out.targets.unsqueeze(-1)).squeeze(-1); // [N]
  return torch::zeros({B * (T - 1)}, lp.options()).index_put({sel}, lp).view({B, T - 1});
}

// One AdamW step over `seqs`, accumulated in micro batches of similar lengths (less padding;
// the gradient is a weighted sum over micro batches, so their order does not change it), each
// within the attention memory budget of policy/micro_batches.hpp.
rl_stats one_update(decoder_impl& m, torch::optim::AdamW& opt, decoder& reference,
                    std::vector<const rl_sequence*> seqs, const rl_options& o,
                    const grpo_loss_config& lc, std::int64_t pad) {
  rl_stats st;
  long long total_tokens = 0;
  for (auto* s : seqs)
    total_tokens += static_cast<long long>(s->completion.size());
  std::stable_sort(seqs.begin(), seqs.end(), [](const rl_sequence* a, const rl_sequence* b) {
    return a->prompt.size() + a->completion.size() > b->prompt.size() + b->completion.size();
  });
  const auto n = seqs.size();
  std::vector<std::int64_t> lengths;
  lengths.reserve(n);
  for (auto* s : seqs)
    lengths.push_back(static_cast<std::int64_t>(s->prompt.size() + s->completion.size()));
  const auto& cfg = m.config();
  const auto plan = plan_micro_batches(lengths, static_cast<std::size_t>(std::max(1, o.micro_batch)),
                                       attention_bytes_per_position(cfg.n_layers, cfg.n_heads),
                                       micro_batch_attention_budget);
  opt.zero_grad();
  for (const auto& span : plan) {
    const auto first = span.first, last = span.last;
    auto B = static_cast<std::int64_t>(last - first);
    std::int64_t T = 0;
    long long mb_tokens = 0;
    for (auto k = first; k < last; ++k) {
      T = std::max<std::int64_t>(T, static_cast<std::int64_t>(seqs[k]->prompt.size() + seqs[k]->completion.size()));
      mb_tokens += static_cast<long long>(seqs[k]->completion.size());
    }
    auto ids = torch::full({B, T}, pad, torch::kLong);           // [B, T]
    auto mask = torch::zeros({B, T}, torch::kLong);              // [B, T] 1 = token
    auto cmask = torch::zeros({B, T - 1}, torch::kFloat);        // [B, T-1] 1 = completion target
    auto old_lp = torch::zeros({B, T - 1}, torch::kFloat);       // [B, T-1]
    auto adv = torch::zeros({B, T - 1}, torch::kFloat);          // [B, T-1]
    auto ids_a = ids.accessor<std::int64_t, 2>();
    auto mask_a = mask.accessor<std::int64_t, 2>();
    auto cm_a = cmask.accessor<float, 2>();
    auto old_a = old_lp.accessor<float, 2>();
    auto adv_a = adv.accessor<float, 2>();
    for (std::int64_t b = 0; b < B; ++b) {
      const auto& s = *seqs[first + static_cast<std::size_t>(b)];
      std::int64_t t = 0;
      for (int id : s.prompt) {
        ids_a[b][t] = id;
        mask_a[b][t++] = 1;
      }
      for (std::size_t k = 0; k < s.completion.size(); ++k) {
        ids_a[b][t] = s.completion[k];
        mask_a[b][t] = 1;
        cm_a[b][t - 1] = 1;
        old_a[b][t - 1] = s.old_logprobs[k];
        adv_a[b][t - 1] = static_cast<float>(s.advantage);
        ++t;
      }
    }
    auto sel = cmask.reshape({-1}).nonzero().squeeze(-1);                     // [N]
    auto logp = completion_logp(m, ids, mask, sel, o.temperature);            // [B, T-1]
    torch::Tensor ref_lp;
    if (o.kl_coef > 0) {
      torch::NoGradGuard ng;
      ref_lp = completion_logp(*reference, ids, mask, sel, o.temperature);    // [B, T-1]
    }
    auto out = grpo_loss(logp, old_lp, ref_lp, adv, cmask, lc);
    // Weights that turn the micro-batch aggregate into its share of the mini batch's.
    double w = o.aggregation == loss_aggregation::dr_grpo ? static_cast<double>(B) / static_cast<double>(n)
                         : static_cast<double>(mb_tokens) / static_cast<double>(total_tokens);
    (out.loss * w).backward();
    st.loss += out.loss.item<double>() * w;
    st.pg_loss += out.pg_loss * w;
    double tw = static_cast<double>(mb_tokens) / static_cast<double>(total_tokens);
    st.kl += out.kl * tw;
    st.clip_fraction += out.clip_fraction * tw;
    st.ratio_mean += out.ratio_mean * tw;
  }
  auto params = m.parameters();
  double norm = 0;
  if (o.grad_clip > 0) {
    norm = torch::nn::utils::clip_grad_norm_(params, o.grad_clip);
  } else {
    for (auto& p : params)
      if (p.grad().defined())
        norm += p.grad().pow(2).sum().item<double>();
    norm = std::sqrt(norm);
  }
  opt.step();
  st.grad_norm = norm;
  st.tokens = total_tokens;
  st.sequences = static_cast<int>(n);
  return st;
}

} // namespace

result<rl_stats> policy_model::grpo_step(const std::vector<rl_sequence>& batch, const rl_options& o) {
  try {
    auto& m = *impl_->model;
    if (!impl_->opt)
      begin_rl(o);
    if (o.kl_coef > 0 && !impl_->reference)
      return make_error("grpo_step: kl_coef > 0 needs a reference policy (set_reference)");
    for (auto& g : impl_->opt->param_groups())
      static_cast<torch::optim::AdamWOptions&>(g.options()).lr(o.lr);
    const auto& cfg = m.config();
    std::vector<const rl_sequence*> seqs;
    for (auto& s : batch) {
      if (s.completion.empty() || s.prompt.empty())
        continue;
      if (s.old_logprobs.size() != s.completion.size())
        return make_error("grpo_step: a sequence has " + std::to_string(s.old_logprobs.size())
                          + " behaviour log-probs for " + std::to_string(s.completion.size())
                          + " tokens");
      if (static_cast<std::int64_t>(s.prompt.size() + s.completion.size()) > cfg.max_seq_len)
        continue;
      seqs.push_back(&s);
    }
    rl_stats st;
    if (seqs.empty())
      return st;
    grpo_loss_config lc;
    lc.clip_low = o.clip_low;
    lc.clip_high = o.clip_high;
    lc.kl_coef = o.kl_coef;
    lc.aggregation = o.aggregation;
    lc.dr_grpo_norm_tokens = o.dr_grpo_norm_tokens;
    const std::int64_t pad = cfg.pad_id >= 0 ? cfg.pad_id : 0;
    const auto n = seqs.size();
    // Mini batches dealt round robin (each holds attempts of every group and turn); an empty
    // one (more mini batches than sequences) is not a step.
    const auto parts = std::min(n, static_cast<std::size_t>(std::max(1, o.mini_batches)));
    std::vector<std::vector<const rl_sequence*>> minis(parts);
    for (std::size_t i = 0; i < n; ++i)
      minis[i % parts].push_back(seqs[i]);
    m.train();
    long long weight = 0;
    for (int e = 0; e < std::max(1, o.epochs); ++e) {
      for (auto& part : minis) {
        auto u = one_update(m, *impl_->opt, impl_->reference, part, o, lc, pad);
        ++impl_->step;
        auto w = static_cast<double>(u.tokens);
        st.loss += u.loss * w;
        st.pg_loss += u.pg_loss * w;
        st.kl += u.kl * w;
        st.clip_fraction += u.clip_fraction * w;
        st.ratio_mean += u.ratio_mean * w;
        st.grad_norm += u.grad_norm * w;
        weight += u.tokens;
        if (e == 0) {
          st.tokens += u.tokens;
          st.sequences += u.sequences;
        }
      }
    }
    m.eval();
    if (weight > 0) {
      auto w = static_cast<double>(weight);
      st.loss /= w;
      st.pg_loss /= w;
      st.kl /= w;
      st.clip_fraction /= w;
      st.ratio_mean /= w;
      st.grad_norm /= w;
    }
    return st;
  } catch (const c10::Error& e) {
    return make_error(std::string("grpo_step: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error(std::string("grpo_step: ") + e.what());
  }
}

result<std::string> policy_model::export_weights() const {
  try {
    std::vector<torch::Tensor> keep;
    std::vector<st_tensor_view> views;
    for (const auto& p : impl_->model->named_parameters()) {
      auto c = p.value().detach().to(torch::kCPU).to(torch::kFloat).contiguous();
      keep.push_back(c);
      views.push_back({p.key(), st_dtype::f32, c.sizes().vec(), c.data_ptr(),
                       static_cast<std::size_t>(c.nbytes())});
    }
    return serialize_safetensors(views, {{"format", "pt"}});
  } catch (const c10::Error& e) {
    return make_error(std::string("export_weights: ") + e.what_without_backtrace());
  }
}

result<void> policy_model::import_weights(const std::string& image) {
  auto file = st_file::parse(image, "published weights");
  if (!file)
    return file.err();
  auto tensors = tensors_from_file(*file);
  if (!tensors)
    return tensors.err();
  try {
    torch::NoGradGuard ng;
    auto params = impl_->model->named_parameters();
    for (auto& p : params) {
      auto it = tensors->find(p.key());
      if (it == tensors->end() || it->second.sizes() != p.value().sizes())
        return make_error("published weights do not match the model at '" + p.key() + "'");
    }
    for (auto& p : params)
      p.value().copy_(tensors->at(p.key()));
    return {};
  } catch (const c10::Error& e) {
    return make_error(std::string("import_weights: ") + e.what_without_backtrace());
  }
}

result<void> policy_model::save_with_state(const std::string& dir,
                                           const std::string& tokenizer_json,
                                           std::int64_t step, std::int64_t policy_version,
                                           const std::string& extra_json) const {
  checkpoint_save_options o;
  o.optimizer = impl_->opt.get();
  o.state.step = step;
  o.state.policy_version = policy_version;
  o.tokenizer_json = tokenizer_json;
  try {
    o.state.extra = nlohmann::json::parse(extra_json.empty() ? "{}" : extra_json);
  } catch (const std::exception& e) {
    return make_error(std::string("save: the trainer state is not JSON: ") + e.what());
  }
  return save_checkpoint(dir, *impl_->model, o);
}

} // namespace leap::policy
