#include "runtime/pipeline/assembly.hpp"

#include "actors/generator_pool.hpp"
#include "actors/judge.hpp"
#include "policy/generation_engine.hpp"
#include "runtime/pipeline/env_pools.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace leap::runtime {

struct pipeline::impl {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  msg::generator_pool_actor generators;
  msg::compiler_pool_actor compilers;
  msg::executor_pool_actor executors;
  env_pools pools; // the real compile and execute stages, local or the cluster's
  msg::weights_sink_actor sink;
  msg::learner_actor learner;
  msg::judge_actor judge;
  msg::gatekeeper_actor gatekeeper;
  msg::trainer_actor trainer;
  std::shared_ptr<policy::generation_engine> engine;
  bool training = false;

  std::mutex mtx;
  std::condition_variable cv;
  bool done = false;
  pipeline_outcome out;

  void finish(actors::run_end end, std::vector<msg::group_result> groups = {}) {
    std::lock_guard<std::mutex> lk(mtx);
    if (done)
      return;
    done = true;
    out.end = std::move(end);
    out.groups = std::move(groups);
    cv.notify_all();
  }
};

pipeline::pipeline(passkey<pipeline>, std::unique_ptr<impl> i) : impl_(std::move(i)) {}

pipeline::~pipeline() {
  if (!impl_ || !impl_->sys)
    return;
  auto& I = *impl_;
  auto down = [](const auto& h) {
    if (h)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  };
  down(I.trainer);
  down(I.gatekeeper);
  down(I.judge);
  down(I.learner);
  down(I.sink);
  down(I.generators);
  down(I.compilers);
  down(I.executors);
  I.pools.shutdown();
  I.trainer = nullptr;
  I.gatekeeper = nullptr;
  I.judge = nullptr;
  I.learner = nullptr;
  I.sink = nullptr;
  I.generators = nullptr;
  I.compilers = nullptr;
  I.executors = nullptr;
  I.sys.reset(); // waits for every actor
  I.engine.reset();
}

result<std::unique_ptr<pipeline>> pipeline::spawn(pipeline_description d) {
  if (d.train.has_value() == d.eval.has_value())
    return make_error("internal: a pipeline is either trained or evaluated");
  if (!d.tasks)
    return make_error("internal: a pipeline needs its task catalog");
  // The RL draw: only train-split tasks (the eval split is held out), by the rule the commands
  // apply to train.tasks.
  if (d.train)
    if (auto drawn = env::select_tasks(*d.tasks, "train.tasks", d.train->trainer.tasks,
                                       {env::task_split::train});
        !drawn)
      return drawn.err();
  const bool real_env = !d.stand_ins.compilers || !d.stand_ins.executors;
  if (real_env && !d.svc)
    return make_error("internal: real compile and execute stages need the services");
  if (!d.stand_ins.generators && !d.engine)
    return make_error("internal: real generation needs a generation engine");
  if (d.train && !d.stand_ins.learner && !d.train->model)
    return make_error("internal: the real learner needs a policy model");

  auto I = std::make_unique<impl>();
  if (d.svc) {
    if (auto r = prepare_actor_system(I->cfg, d.svc->cfg); !r)
      return r.err();
  } else {
    msg::register_message_types(I->cfg);
  }
  if (d.stand_ins.configure)
    d.stand_ins.configure(I->cfg);
  I->sys = std::make_unique<caf::actor_system>(I->cfg);
  auto& sys = *I->sys;
  I->engine = d.engine;
  // The compile and execute stages (and, on a cluster, the generators and their weights sink).
  const bool clustered_policy = d.svc && clustered(d.svc->cfg.cluster) && d.engine
                                && !d.stand_ins.generators;
  if (real_env || clustered_policy) {
    policy_stage ps;
    ps.checkpoint = d.policy_checkpoint;
    if (d.engine) {
      ps.version = d.engine->latest_version();
      ps.spawn_local = [engine = d.engine, pool = d.generators](caf::actor_system& s) {
        local_generation g;
        g.generators = actors::spawn_generator_pool(s, pool, engine);
        g.weights = actors::spawn_weights_sink(s, engine);
        g.slots = static_cast<std::uint32_t>(engine->workers() * policy::max_batch_prompts);
        return g;
      };
    }
    auto pools = spawn_env_pools(sys, *d.svc, d.compilers, d.executors, d.board,
                                 clustered_policy ? &ps : nullptr);
    if (!pools)
      return pools.err();
    I->pools = std::move(*pools);
    // A clustered run starts only when every role it needs has a node (or the head's own pools).
    std::vector<config::node_role> needed;
    if (!d.stand_ins.compilers)
      needed.push_back(config::node_role::compile);
    if (!d.stand_ins.executors)
      needed.push_back(config::node_role::execute);
    if (clustered_policy)
      needed.push_back(config::node_role::generate);
    if (auto ready = await_roles(sys, I->pools, d.svc->cfg.cluster, needed); !ready) {
      I->pools.shutdown();
      return make_error(std::string(cannot_start_prefix) + ready.message());
    }
  }
  if (d.stand_ins.generators)
    I->generators = d.stand_ins.generators(sys);
  else if (I->pools.generators)
    I->generators = I->pools.generators;
  else
    I->generators = actors::spawn_generator_pool(sys, d.generators, d.engine);
  if (I->pools.weights)
    I->sink = I->pools.weights;
  else if (d.engine)
    I->sink = actors::spawn_weights_sink(sys, d.engine);
  I->compilers = d.stand_ins.compilers ? d.stand_ins.compilers(sys) : I->pools.compilers;
  if (!d.stand_ins.compilers && d.stand_ins.wrap_compilers)
    I->compilers = d.stand_ins.wrap_compilers(sys, I->compilers);
  I->executors = d.stand_ins.executors ? d.stand_ins.executors(sys) : I->pools.executors;
  auto* raw = I.get();
  if (d.train) {
    I->training = true;
    I->learner = d.stand_ins.learner
                   ? d.stand_ins.learner(sys)
                   : actors::spawn_learner(sys, d.train->model, d.train->learner, I->sink);
    I->judge = actors::spawn_judge(sys, d.train->estimator, I->learner);
  } else {
    actors::eval_collector_options co;
    co.expected = d.eval->groups.size();
    co.on_group = d.eval->on_group;
    co.on_done = [raw](std::vector<msg::group_result> groups) {
      raw->finish(actors::run_end{}, std::move(groups));
    };
    I->judge = actors::spawn_eval_collector(sys, std::move(co));
  }
  I->gatekeeper = actors::spawn_gatekeeper(sys, d.gatekeeper, d.tasks, I->generators,
                                           I->compilers, I->executors, I->judge);
  if (d.train) {
    auto to = d.train->trainer;
    to.compilers = I->compilers;
    to.executors = I->executors;
    auto user_done = to.on_done;
    to.on_done = [raw, user_done](const actors::run_end& end) {
      if (user_done)
        user_done(end);
      raw->finish(end);
    };
    I->trainer = actors::spawn_trainer(sys, std::move(to), I->gatekeeper, I->learner);
  } else {
    for (const auto& gs : d.eval->groups)
      caf::anon_send(I->gatekeeper, msg::group_atom_v, gs);
    if (d.gatekeeper.mode == msg::train_mode::sync)
      caf::anon_send(I->gatekeeper, msg::flush_atom_v);
  }
  return std::make_unique<pipeline>(passkey<pipeline>(), std::move(I));
}

pipeline_outcome pipeline::wait(const std::atomic<bool>* stop) {
  auto& I = *impl_;
  bool stop_sent = false;
  {
    std::unique_lock<std::mutex> lk(I.mtx);
    while (!I.done) {
      I.cv.wait_for(lk, std::chrono::milliseconds(100));
      if (I.done || stop_sent || !stop || !stop->load())
        continue;
      stop_sent = true;
      if (I.training) {
        caf::anon_send(I.trainer, msg::stop_atom_v); // it saves, then ends the run
      } else {
        I.done = true;
        I.out.end = actors::run_end{actors::run_end::how::interrupted, {}};
      }
    }
  }
  caf::scoped_actor self{*I.sys};
  self->request(I.compilers, std::chrono::seconds(10), msg::stats_atom_v)
    .receive([&](msg::pool_stats& s) { I.out.compiler_stats = s; }, [](caf::error&) {});
  self->request(I.gatekeeper, std::chrono::seconds(10), msg::stats_atom_v)
    .receive([&](msg::stage_usage& u) { I.out.usage = u; }, [](caf::error&) {});
  std::lock_guard<std::mutex> lk(I.mtx);
  return std::move(I.out);
}

} // namespace leap::runtime
