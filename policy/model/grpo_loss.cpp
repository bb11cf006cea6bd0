#include "policy/model/grpo_loss.hpp"

namespace leap::policy {

grpo_loss_out grpo_loss(const torch::Tensor& logp, const torch::Tensor& old_logp,
                        const torch::Tensor& ref_logp, const torch::Tensor& adv,
                        const torch::Tensor& mask, const grpo_loss_config& cfg) {
  TORCH_CHECK(logp.sizes() == old_logp.sizes() && logp.sizes() == adv.sizes()
                && logp.sizes() == mask.sizes(),
              "grpo_loss: logp, old_logp, advantages and mask must have the same [B, T] shape");
  TORCH_CHECK(cfg.kl_coef == 0 || ref_logp.defined(), "grpo_loss: kl_coef > 0 needs ref_logp");
  auto m = mask.to(logp.scalar_type());                                  // [B, T]
  auto ratio = torch::exp(logp - old_logp.detach());                     // [B, T]
  auto a = adv.detach();
  auto surr1 = ratio * a;
  auto surr2 = torch::clamp(ratio, 1.0 - cfg.clip_low, 1.0 + cfg.clip_high) * a;
  auto pg = -torch::min(surr1, surr2);                                   // [B, T]
  auto per_token = pg;
  torch::Tensor kl;
  if (ref_logp.defined()) {
    auto d = ref_logp.detach() - logp;                                   // log(pi_ref / pi)
    kl = torch::exp(d) - d - 1;                                          // k3, >= 0
    if (cfg.kl_coef != 0)
      per_token = per_token + cfg.kl_coef * kl;
  }
  auto n_tokens = m.sum().clamp_min(1);
  auto aggregate = [&](const torch::Tensor& t) {
    auto total = (t * m).sum();
    if (cfg.aggregation == loss_aggregation::token_mean)
      return total / n_tokens;
    return total / (static_cast<double>(logp.size(0)) * cfg.dr_grpo_norm_tokens);
  };
  grpo_loss_out out;
  out.loss = aggregate(per_token);
  torch::NoGradGuard ng;
  out.pg_loss = aggregate(pg).item<double>();
  out.kl = kl.defined() ? ((kl * m).sum() / n_tokens).item<double>() : 0.0;
  auto clipped = ((ratio < 1.0 - cfg.clip_low) | (ratio > 1.0 + cfg.clip_high)).to(m.scalar_type());
  out.clip_fraction = ((clipped * m).sum() / n_tokens).item<double>();
  out.ratio_mean = ((ratio * m).sum() / n_tokens).item<double>();
  return out;
}

} // namespace leap::policy
