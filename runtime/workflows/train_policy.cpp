// The train workflow's policy: see train_policy.hpp.
#include "runtime/workflows/train_policy.hpp"

#include "common/fs.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/generation_engine.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/pipeline/options.hpp"

#include <cstdio>

namespace leap::runtime::train_detail {

result<run_policy> load_policy(const services& svc, const std::string& start, bool resume,
                               const std::string& reference, std::int64_t start_step) {
  run_policy p;
  auto tok_path = policy::checkpoint_tokenizer_path(start);
  if (!tok_path)
    return tok_path.err();
  auto tok_text = read_file(*tok_path);
  if (!tok_text)
    return tok_text.err();
  auto tok = policy::tokenizer::from_json(*tok_text);
  if (!tok)
    return make_error(*tok_path + ": " + tok.message());
  p.tokenizer_json = std::move(*tok_text);
  p.tok = std::make_shared<const policy::tokenizer>(std::move(*tok));
  auto model = policy::policy_model::load(start);
  if (!model)
    return model.err();
  p.model = std::make_shared<policy::policy_model>(std::move(*model));
  auto rl = rl_options_of(svc.cfg);
  p.model->begin_rl(rl);
  if (resume) {
    // A damaged optimizer file stops the resume (resuming with fresh moments would be a silent
    // change of the run); one that does not fit the model is only warned about, as before.
    if (auto v = policy::verify_checkpoint(start, {"optimizer.safetensors"}); !v)
      return v.err();
    if (auto r = p.model->restore_optimizer(start); !r)
      std::fprintf(stderr, "leap: the optimizer state was not restored (%s); AdamW starts fresh\n",
                   r.message().c_str());
  }
  if (rl.kl_coef > 0)
    if (auto r = p.model->set_reference(reference); !r)
      return r.err();
  auto engine = policy::generation_engine::create(start, svc.cfg.train.generators, start_step);
  if (!engine)
    return engine.err();
  p.engine = std::move(*engine);
  return p;
}

} // namespace leap::runtime::train_detail
