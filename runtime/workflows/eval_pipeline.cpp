// The evaluation pipeline: see eval_pipeline.hpp.
#include "runtime/workflows/eval_pipeline.hpp"

#include "policy/model/checkpoint_verify.hpp"
#include "policy/generation_engine.hpp"
#include "policy/model/model_config.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/workflows/openai_generation.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace leap::runtime::eval_detail {

// G attempts at each of `names` from the checkpoint in `dir`, sampled with `ec`'s settings (group
// size, turns, temperature, token budget, seed) through the pipeline of `leap train`; blocks
// until every group has finished. `on_group` (optional) sees each finished group.
result<pipeline_outcome> run_eval_pipeline(services& svc, const std::string& dir,
                                           const std::vector<std::string>& names,
                                           const config::eval_section& ec, sampler from,
                                           bool show, group_callback on_group) {
  auto tok_path = policy::checkpoint_tokenizer_path(dir);
  if (!tok_path)
    return tok_path.err();
  if (auto v = policy::verify_checkpoint(dir, {"config.json"}); !v)
    return v.err();
  auto tok_r = policy::tokenizer::load(*tok_path);
  if (!tok_r)
    return make_error("checkpoint " + dir + ": " + tok_r.message());
  eval_policy pol;
  pol.tok = std::make_shared<const policy::tokenizer>(std::move(*tok_r));
  auto mc = policy::load_checkpoint_config(dir);
  if (!mc)
    return make_error("checkpoint " + dir + ": " + mc.message());
  auto format = chat_format_for(svc.cfg.policy.chat_format, dir, *pol.tok);
  if (!format)
    return format.err();
  pol.format = *format;
  const auto& tok = pol.tok;
  // One compute thread per replica, as in `leap train`, and a replica per core (at most one per
  // task): the groups sample side by side while earlier samples compile. (A multi-threaded BLAS
  // pool also deadlocked in OpenBLAS's fork handler when the process runner forked a compile
  // during a sampling call.)
  policy::set_torch_threads(1);
  const int replicas = static_cast<int>(std::max<std::size_t>(
    1, std::min<std::size_t>(names.size(), std::max(1u, std::thread::hardware_concurrency()))));
  std::shared_ptr<policy::generation_engine> engine;
  if (from == sampler::configured && svc.cfg.generation.source == config::generation_source::openai) {
    auto remote = openai_generation_engine(svc.cfg, tok, *format);
    if (!remote)
      return remote.err();
    engine = std::move(*remote);
    if (show)
      std::fprintf(stderr, "eval: sampling from %s (model %s; generation.source = openai)\n",
                   svc.cfg.openai.url.c_str(), svc.cfg.openai.model.c_str());
  } else {
    auto local = policy::generation_engine::create(dir, replicas, 0);
    if (!local)
      return make_error("checkpoint " + dir + ": " + local.message());
    engine = std::move(*local);
  }

  pipeline_description d;
  d.svc = &svc;
  d.tasks = svc.tasks;
  d.gatekeeper = eval_gatekeeper_options_of(svc.cfg, ec, names.size());
  d.gatekeeper.backend = svc.backend;
  d.gatekeeper.max_seq_len = static_cast<int>(mc->max_seq_len);
  d.gatekeeper.eos_id = tok->token_id(policy::end_of_turn(*format));
  d.gatekeeper.codec = policy_codec(tok, svc.tasks, *format);
  d.gatekeeper.generators = engine->workers(); // replicas, or openai.max_concurrency
  d.compilers = compiler_pool_of(svc.cfg);
  d.executors = executor_pool_of(svc.cfg);
  d.engine = engine;
  d.policy_checkpoint = dir;
  eval_driver ed;
  for (std::size_t i = 0; i < names.size(); ++i)
    ed.groups.push_back({i + 1, names[i], 0, static_cast<std::int32_t>(i)});
  if (on_group)
    ed.on_group = [on_group, pol](const msg::group_result& g) { on_group(g, pol); };
  d.eval = std::move(ed);
  auto p = pipeline::spawn(std::move(d));
  if (!p)
    return p.err();
  auto out = (*p)->wait();
  p->reset();
  if (out.end.end != actors::run_end::how::completed)
    return make_error("evaluation interrupted");
  return out;
}

} // namespace leap::runtime::eval_detail
