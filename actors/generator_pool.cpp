#include "actors/generator_pool.hpp"

#include "actors/supervised_pool.hpp"
#include "policy/generation_engine.hpp"

namespace leap::actors {

namespace {

// The pool hands the engine more jobs than it has replicas, so that single-sample jobs (later
// turns, one failed attempt each) wait in the engine's queue, where a free replica batches them
// (policy::max_batch_prompts); the pool's own queue holds the rest. A job "starts" in the pool's
// trace when the engine accepts it.
std::size_t pool_slots(const policy::generation_engine& e) {
  return static_cast<std::size_t>(e.workers()) * policy::max_batch_prompts;
}

} // namespace

msg::generator_pool_actor spawn_generator_pool(caf::actor_system& sys, pool_options opts,
                                               std::shared_ptr<policy::generation_engine> engine) {
  using runner_t = job_runner<msg::generate_request, msg::generate_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [engine](const msg::generate_request& req,
                           runner_t::done_fn done) -> runner_t::cancel_fn {
    policy::generation_job job;
    job.prompts = req.prompts;
    job.samples_per_prompt = req.samples_per_prompt;
    job.sampling.temperature = req.temperature;
    job.sampling.top_p = req.top_p;
    job.sampling.max_new_tokens = req.max_new_tokens;
    job.sampling.seed = req.seed;
    auto id = req.id;
    auto jid = engine->submit(std::move(job), [done, id](result<policy::generation_output> r) {
      if (!r) {
        done(r.err());
        return;
      }
      msg::generate_reply rep;
      rep.id = id;
      rep.policy_version = r->policy_version;
      rep.seconds = r->seconds;
      rep.worker = r->worker;
      for (auto& s : r->samples)
        rep.samples.push_back({std::move(s.tokens), std::move(s.logprobs), std::move(s.finish)});
      done(std::move(rep));
    });
    std::weak_ptr<policy::generation_engine> weak = engine;
    return [weak, jid] {
      if (auto e = weak.lock())
        e->cancel(jid);
    };
  };
  runner->count = [](const msg::generate_reply&, msg::pool_stats&) {};
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::generate_atom, msg::generate_request, msg::generate_reply>,
                   std::string("generator_pool"), pool_slots(*engine), runner);
}

namespace {

msg::weights_sink_actor::behavior_type
weights_sink(msg::weights_sink_actor::pointer, std::shared_ptr<policy::generation_engine> engine) {
  return {
    [engine](msg::weights_atom, msg::weights_update& w) {
      engine->publish(w.version, std::move(w.safetensors));
    },
  };
}

} // namespace

msg::weights_sink_actor spawn_weights_sink(caf::actor_system& sys,
                                           std::shared_ptr<policy::generation_engine> engine) {
  return sys.spawn(weights_sink, std::move(engine));
}

} // namespace leap::actors
