#include "runtime/pipeline/options.hpp"

#include "policy/text/prompt.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/pipeline/policy_io.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace leap::runtime {

algo::estimator_config estimator_of(const config::train_section& t) {
  algo::estimator_config e;
  e.kind = t.estimator;
  e.gamma = t.gamma;
  e.tournament.tie_keys = t.tie_keys;
  e.tournament.speedup_margin = t.speedup_margin;
  e.tournament.tokens_margin = t.tokens_margin;
  return e;
}

actors::gatekeeper_options gatekeeper_options_of(const config::leap_config& cfg,
                                                 msg::train_mode mode, bool dcp) {
  const auto& tc = cfg.train;
  actors::gatekeeper_options go;
  go.rollout.group_size = tc.group_size;
  go.rollout.max_turns = tc.max_turns;
  go.rollout.dcp.t_min = tc.dcp_t_min;
  go.rollout.dcp.t_max = tc.dcp_t_max;
  go.rollout.dcp.fractional = tc.dcp_fractional;
  go.rollout.dcp.enabled = dcp;
  go.rollout.cancel_pruned_turn1 = tc.cancel_pruned_turn1;
  go.mode = mode;
  go.temperature = tc.temperature;
  go.top_p = tc.top_p;
  go.max_new_tokens = tc.max_new_tokens;
  go.seed = tc.seed;
  go.generators = tc.generators;
  go.compilers = cfg.compiler.workers;
  go.executors = cfg.executor.workers;
  return go;
}

request_budget batch_request_budget(const config::leap_config& cfg, double builds, double runs) {
  const double waves_c = std::ceil(builds / std::max(1, cfg.compiler.workers));
  const double waves_e = std::ceil(runs / std::max(1, cfg.executor.workers));
  auto ms = [](double seconds) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
  };
  return {ms(cfg.compiler.timeout_seconds * 3 * waves_c + 60),
          ms((cfg.executor.timeout_seconds * 2 + 10) * waves_e + 60)};
}

actors::gatekeeper_options eval_gatekeeper_options_of(const config::leap_config& cfg,
                                                      const config::eval_section& ec,
                                                      std::size_t tasks) {
  actors::gatekeeper_options go;
  const double jobs = static_cast<double>(tasks) * std::max(1, ec.group_size) * std::max(1, ec.max_turns);
  const auto budget = batch_request_budget(cfg, jobs + static_cast<double>(tasks), jobs);
  go.compile_timeout = std::max(go.compile_timeout, budget.compile);
  go.exec_timeout = std::max(go.exec_timeout, budget.execute);
  go.rollout.group_size = ec.group_size;
  go.rollout.max_turns = ec.max_turns;
  go.rollout.dcp.enabled = false; // evaluation retries every failed attempt
  go.mode = msg::train_mode::async;
  go.temperature = ec.temperature;
  go.top_p = ec.top_p;
  go.max_new_tokens = ec.max_new_tokens;
  go.seed = ec.seed;
  go.generators = 1;
  go.compilers = cfg.compiler.workers;
  go.executors = cfg.executor.workers;
  return go;
}

actors::trainer_options trainer_options_of(const config::train_section& t, msg::train_mode mode,
                                           std::vector<std::string> tasks) {
  actors::trainer_options to;
  to.batch_groups = t.batch_groups;
  to.steps = t.steps;
  to.max_staleness = mode == msg::train_mode::sync ? 0 : t.max_staleness;
  to.mode = mode;
  to.tasks = std::move(tasks);
  to.seed = t.seed;
  return to;
}

actors::pool_options compiler_pool_of(const config::leap_config& cfg) {
  actors::pool_options p;
  p.workers = static_cast<std::size_t>(cfg.compiler.workers);
  p.retries = cfg.compiler.retries;
  return p;
}

actors::pool_options executor_pool_of(const config::leap_config& cfg) {
  actors::pool_options p;
  p.workers = static_cast<std::size_t>(cfg.executor.workers);
  p.retries = cfg.executor.retries;
  return p;
}

policy::rl_options rl_options_of(const config::leap_config& cfg) {
  policy::rl_options rl;
  rl.lr = cfg.learner.lr;
  rl.weight_decay = cfg.learner.weight_decay;
  rl.grad_clip = cfg.learner.grad_clip;
  rl.clip_low = cfg.learner.clip_low;
  rl.clip_high = cfg.learner.clip_high;
  rl.kl_coef = cfg.learner.kl_coef;
  rl.aggregation = cfg.learner.aggregation;
  rl.dr_grpo_norm_tokens = cfg.train.max_new_tokens;
  rl.temperature = cfg.train.temperature;
  rl.micro_batch = cfg.learner.micro_batch;
  rl.mini_batches = cfg.learner.mini_batches;
  rl.epochs = cfg.learner.epochs;
  return rl;
}

actors::prompt_codec policy_codec(std::shared_ptr<const policy::tokenizer> tok,
                                  std::shared_ptr<const actors::task_catalog> tasks,
                                  policy::chat_format format) {
  actors::prompt_codec c;
  c.encode = [tok, tasks, format](const std::string& task, const std::vector<std::string>& codes,
                                  const std::vector<std::string>& feedbacks) {
    return tok->encode(task_prompt(tasks->at(task), codes, feedbacks, format), true);
  };
  c.decode = [tok](const std::vector<int>& ids) { return tok->decode(ids); };
  return c;
}

} // namespace leap::runtime
