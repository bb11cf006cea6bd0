#include "runtime/pipeline_options.hpp"

#include "policy/prompt.hpp"
#include "policy/tokenizer.hpp"
#include "runtime/policy_io.hpp"

namespace leap::runtime {

algo::estimator_config estimator_of(const config::train_section& t) {
  algo::estimator_config e;
  algo::parse_estimator(t.estimator, e.kind);
  e.gamma = t.gamma;
  e.tournament.speedup_margin = t.speedup_margin;
  e.tournament.tokens_margin = t.tokens_margin;
  return e;
}

actors::gatekeeper_options gatekeeper_options_of(const config::leap_config& cfg, bool sync,
                                                 bool dcp) {
  const auto& tc = cfg.train;
  actors::gatekeeper_options go;
  go.group_size = tc.group_size;
  go.max_turns = tc.max_turns;
  go.dcp.t_min = tc.dcp_t_min;
  go.dcp.t_max = tc.dcp_t_max;
  go.dcp.fractional = tc.dcp_fractional;
  go.dcp.enabled = dcp;
  go.sync = sync;
  go.temperature = tc.temperature;
  go.top_p = tc.top_p;
  go.max_new_tokens = tc.max_new_tokens;
  go.seed = tc.seed;
  go.generators = tc.generators;
  go.compilers = cfg.compiler.workers;
  go.executors = cfg.executor.workers;
  return go;
}

actors::batch_order batch_order_of(const config::train_section& t) {
  return t.batch_order == "finish" ? actors::batch_order::finish : actors::batch_order::admission;
}

actors::trainer_options trainer_options_of(const config::train_section& t, bool sync,
                                           std::vector<std::string> tasks) {
  actors::trainer_options to;
  to.batch_groups = t.batch_groups;
  to.steps = t.steps;
  to.max_staleness = sync ? 0 : t.max_staleness;
  to.sync = sync;
  to.tasks = std::move(tasks);
  to.seed = t.seed;
  return to;
}

void set_policy_codec(actors::gatekeeper_options& go, std::shared_ptr<const policy::tokenizer> tok,
                      std::shared_ptr<const actors::task_catalog> tasks) {
  go.encode_prompt = [tok, tasks](const std::string& task, const std::vector<std::string>& codes,
                                  const std::vector<std::string>& feedbacks) {
    std::vector<policy::turn_record> history;
    for (std::size_t i = 0; i < codes.size(); ++i)
      history.push_back({codes[i], feedbacks[i]});
    return tok->encode(policy::render_prompt(view_of(tasks->at(task)), history), true);
  };
  go.decode = [tok](const std::vector<int>& ids) { return tok->decode(ids); };
}

} // namespace leap::runtime
