#include "runtime/train_pipeline.hpp"

#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/generator_pool.hpp"
#include "actors/judge.hpp"
#include "actors/learner.hpp"
#include "actors/trainer.hpp"
#include "messages/interfaces.hpp"
#include "policy/generation_engine.hpp"
#include "policy/prompt.hpp"
#include "policy/special_tokens.hpp"
#include "policy/tokenizer.hpp"
#include "runtime/pipeline_options.hpp"
#include "runtime/policy_io.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace leap::runtime {


result<std::string> run_pipeline(services& svc, const pipeline_setup& setup) {
  const auto& cfg = svc.cfg;
  const auto& tc = cfg.train;
  auto tok_r = policy::tokenizer::load(setup.tokenizer_path);
  if (!tok_r)
    return tok_r.err();
  auto tok = std::make_shared<const policy::tokenizer>(std::move(*tok_r));
  auto model_r = policy::policy_model::load(setup.start_checkpoint);
  if (!model_r)
    return model_r.err();
  auto model = std::make_shared<policy::policy_model>(std::move(*model_r));
  policy::rl_options rl;
  rl.lr = cfg.learner.lr;
  rl.weight_decay = cfg.learner.weight_decay;
  rl.grad_clip = cfg.learner.grad_clip;
  rl.clip_low = cfg.learner.clip_low;
  rl.clip_high = cfg.learner.clip_high;
  rl.kl_coef = cfg.learner.kl_coef;
  rl.dr_grpo = cfg.learner.aggregation == "dr_grpo";
  rl.dr_grpo_norm_tokens = tc.max_new_tokens;
  rl.temperature = tc.temperature;
  rl.micro_batch = cfg.learner.micro_batch;
  rl.mini_batches = cfg.learner.mini_batches;
  rl.epochs = cfg.learner.epochs;
  model->begin_rl(rl);
  if (setup.resume) {
    if (auto r = model->restore_optimizer(setup.start_checkpoint); !r)
      std::fprintf(stderr, "leap: the optimizer state was not restored (%s); AdamW starts fresh\n",
                   r.message().c_str());
  }
  if (rl.kl_coef > 0)
    if (auto r = model->set_reference(setup.reference_checkpoint); !r)
      return r.err();
  auto engine_r = policy::generation_engine::create(setup.start_checkpoint, tc.generators,
                                                    setup.start_step);
  if (!engine_r)
    return engine_r.err();
  std::shared_ptr<policy::generation_engine> engine = std::move(*engine_r);
  const int max_len = static_cast<int>(model->config().max_seq_len);
  const int eos = tok->token_id(policy::special::eos);

  std::mutex mtx;
  std::condition_variable cv;
  bool done = false;
  std::string outcome;
  {
    caf::actor_system_config sys_cfg;
    msg::register_message_types(sys_cfg);
    caf::actor_system sys{sys_cfg};
    auto compilers = actors::spawn_compiler_pool(sys, static_cast<std::size_t>(cfg.compiler.workers),
                                                 svc.compiler, svc.tasks);
    auto executors = actors::spawn_executor_pool(sys, static_cast<std::size_t>(cfg.executor.workers),
                                                 svc.executor, svc.tasks);
    auto generators = actors::spawn_generator_pool(sys, engine);
    auto sink = actors::spawn_weights_sink(sys, engine);
    actors::learner_options lo;
    lo.batch_groups = tc.batch_groups;
    lo.order = batch_order_of(tc);
    lo.max_turns = tc.max_turns;
    lo.rl = rl;
    lo.start_step = setup.start_step;
    lo.tokenizer_json_path = setup.tokenizer_path;
    lo.progress = setup.progress;
    lo.task_count = setup.tasks.size();
    lo.checkpoint_every = tc.checkpoint_every;
    lo.checkpoint_dir = setup.checkpoint_out;
    lo.extra_json = setup.extra_json;
    auto learner = actors::spawn_learner(sys, model, lo, sink);
    auto judge = actors::spawn_judge(sys, estimator_of(tc), learner);
    auto go = gatekeeper_options_of(cfg, tc.mode == "sync", tc.dcp);
    go.backend = svc.backend;
    go.max_seq_len = max_len;
    go.eos_id = eos;
    go.generators = engine->workers();
    set_policy_codec(go, tok, svc.tasks);
    auto gk = actors::spawn_gatekeeper(sys, go, svc.tasks, generators, compilers, executors, judge);
    auto to = trainer_options_of(tc, go.sync, setup.tasks);
    to.start_step = setup.start_step;
    to.progress = setup.progress;
    to.checkpoint_dir = setup.checkpoint_out;
    to.extra_json = setup.extra_json;
    to.on_report = setup.on_report;
    to.on_saved = setup.on_saved;
    to.on_done = [&](const std::string& why) {
      std::lock_guard<std::mutex> lk(mtx);
      done = true;
      outcome = why;
      cv.notify_all();
    };
    auto trainer = actors::spawn_trainer(sys, to, gk, learner);
    bool stop_sent = false;
    {
      std::unique_lock<std::mutex> lk(mtx);
      while (!done) {
        cv.wait_for(lk, std::chrono::milliseconds(100));
        if (!done && !stop_sent && setup.stop && setup.stop->load()) {
          stop_sent = true;
          caf::anon_send(trainer, msg::stop_atom_v);
        }
      }
    }
    for (auto* a : {&trainer, &gk, &judge, &learner, &sink})
      caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(generators, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(compilers, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(executors, caf::exit_reason::user_shutdown);
  } // the actor system waits for its actors here
  engine.reset();
  return outcome;
}

} // namespace leap::runtime
