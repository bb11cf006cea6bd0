#include "bench/pipeline/latency_pools.hpp"

#include "actors/supervised_pool.hpp"

#include <algorithm>

namespace leap::bench {

using actors::job_runner;
using actors::pool_options;
using actors::supervised_pool;

namespace {

using clock_duration = std::chrono::steady_clock::duration;

clock_duration wall(const latency_context& ctx, double scenario_seconds) {
  return std::chrono::duration_cast<clock_duration>(
    std::chrono::duration<double>(std::max(0.0, scenario_seconds) * ctx.time_scale));
}

double draw_seconds(const latency_dist& d, const attempt_key& k, std::uint64_t seed,
                    draw_kind what) {
  auto h = k.draw(seed, what);
  return d.sample(unit(h), unit(mix({h, 0x5eedull})));
}

// Runs `reply` through `done` after `seconds` (scenario time); cancelling before then ends the
// job with an error at once (the pool's worker is freed).
template <class Reply>
std::function<void()> complete_later(const latency_context& ctx, double seconds, Reply reply,
                                     std::function<void(result<Reply>)> done) {
  auto timer = ctx.timer;
  auto id = timer->schedule(wall(ctx, seconds),
                            [done, reply = std::move(reply)]() mutable { done(std::move(reply)); });
  std::weak_ptr<deadline_timer> weak = timer;
  return [weak, id, done] {
    if (auto t = weak.lock())
      if (t->cancel(id))
        done(make_error("cancelled"));
  };
}

} // namespace

msg::generator_pool_actor spawn_latency_generator_pool(caf::actor_system& sys, pool_options opts,
                                                       latency_dist per_attempt,
                                                       std::shared_ptr<const latency_context> ctx) {
  using runner_t = job_runner<msg::generate_request, msg::generate_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [ctx, per_attempt](const msg::generate_request& req,
                                     runner_t::done_fn done) -> runner_t::cancel_fn {
    msg::generate_reply rep;
    rep.id = req.id;
    rep.policy_version = ctx->policy_version ? ctx->policy_version->load() : 0;
    double seconds = 0;
    for (const auto& prompt : req.prompts) {
      auto key = from_tokens(prompt);
      if (!key) {
        done(make_error("leap bench: a prompt without an attempt key reached the latency-model generator"));
        return {};
      }
      for (int j = 0; j < req.samples_per_prompt; ++j) {
        auto k = *key;
        if (k.turn == 1) {
          k.group = req.group_id;
          k.attempt = static_cast<std::uint32_t>(j);
        }
        seconds += draw_seconds(per_attempt, k, ctx->seed, draw_kind::generate);
        msg::generated g;
        g.tokens = to_tokens(k);
        g.logprobs.assign(g.tokens.size(), 0.0f);
        g.finish = "eos";
        rep.samples.push_back(std::move(g));
      }
    }
    rep.seconds = seconds;
    return complete_later(*ctx, seconds, std::move(rep), std::move(done));
  };
  runner->count = [](const msg::generate_reply&, msg::pool_stats&) {};
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::generate_atom, msg::generate_request, msg::generate_reply>,
                   std::string("latency_generator_pool"), opts.workers, runner);
}

msg::compiler_pool_actor spawn_latency_compiler_pool(caf::actor_system& sys, pool_options opts,
                                                     latency_dist per_compile,
                                                     std::shared_ptr<const latency_context> ctx) {
  using runner_t = job_runner<msg::compile_request, msg::compile_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [ctx, per_compile](const msg::compile_request& req,
                                     runner_t::done_fn done) -> runner_t::cancel_fn {
    msg::compile_reply rep;
    rep.id = req.id;
    rep.status = env::build_status::ok;
    rep.key = req.source; // the attempt key travels on to the executor as the build's address
    rep.stage = "latency_model";
    double seconds = 0;
    if (!req.reference) {
      auto key = parse_code(req.source);
      if (!key) {
        done(make_error("leap bench: a candidate without an attempt key reached the latency-model compiler"));
        return {};
      }
      seconds = draw_seconds(per_compile, *key, ctx->seed, draw_kind::compile);
    }
    rep.seconds = seconds;
    return complete_later(*ctx, seconds, std::move(rep), std::move(done));
  };
  runner->count = [](const msg::compile_reply&, msg::pool_stats&) {};
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::compile_atom, msg::compile_request, msg::compile_reply>,
                   std::string("latency_compiler_pool"), opts.workers, runner);
}

msg::executor_pool_actor spawn_latency_executor_pool(caf::actor_system& sys, pool_options opts,
                                                     latency_dist per_run,
                                                     std::shared_ptr<const latency_context> ctx) {
  using runner_t = job_runner<msg::exec_request, msg::exec_reply>;
  auto runner = std::make_shared<runner_t>();
  runner->start = [ctx, per_run](const msg::exec_request& req,
                                 runner_t::done_fn done) -> runner_t::cancel_fn {
    auto key = parse_code(req.candidate_build);
    if (!key || key->task >= ctx->success.size() || ctx->success[key->task].empty()) {
      done(make_error("leap bench: the latency-model executor got a candidate it cannot identify"));
      return {};
    }
    const auto& p = ctx->success[key->task];
    const double pass_p = p[std::min<std::size_t>(key->turn - 1, p.size() - 1)];
    const bool pass = unit(key->draw(ctx->seed, draw_kind::outcome)) < pass_p;
    double seconds = draw_seconds(per_run, *key, ctx->seed, draw_kind::execute);
    msg::exec_reply rep;
    rep.id = req.id;
    rep.v.task = req.task;
    rep.v.backend = req.backend;
    rep.v.st = pass ? env::status::correct : env::status::wrong_answer;
    rep.v.reason = "latency_model";
    rep.v.run_seconds = seconds;
    rep.v.feedback = pass ? "" : "leap bench latency model: wrong answer (drawn with p(pass) = "
                                   + std::to_string(pass_p) + ")";
    return complete_later(*ctx, seconds, std::move(rep), std::move(done));
  };
  runner->count = [](const msg::exec_reply&, msg::pool_stats&) {};
  runner->observer = std::move(opts.observer);
  runner->retries = opts.retries;
  return sys.spawn(supervised_pool<msg::exec_atom, msg::exec_request, msg::exec_reply>,
                   std::string("latency_executor_pool"), opts.workers, runner);
}

std::function<std::string(const msg::compile_request&)> bundled_source_of(
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates,
  std::uint64_t seed) {
  return [candidates, seed](const msg::compile_request& req) -> std::string {
    auto c = candidates->find(req.task);
    if (c == candidates->end() || c->second.empty())
      return req.source; // no candidates: the task builds what was sampled
    std::uint64_t h = 1469598103934665603ull; // FNV-1a: stable across runs and builds
    for (unsigned char ch : req.source)
      h = (h ^ ch) * 1099511628211ull;
    return c->second[mix({seed, h}) % c->second.size()];
  };
}

msg::compiler_pool_actor spawn_bundled_compiler_pool(
  caf::actor_system& sys, pool_options opts, std::shared_ptr<env::compiler> comp,
  std::shared_ptr<const actors::task_catalog> tasks,
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates,
  std::uint64_t seed) {
  return actors::spawn_compiler_pool(sys, std::move(opts), std::move(comp), std::move(tasks),
                                     bundled_source_of(std::move(candidates), seed));
}

namespace {

msg::compiler_pool_actor::behavior_type bundled_front(
  msg::compiler_pool_actor::pointer self, msg::compiler_pool_actor inner,
  std::function<std::string(const msg::compile_request&)> source_of) {
  self->link_to(inner);
  return {
    [self, inner, source_of](msg::compile_atom, msg::compile_request& req) {
      if (!req.reference)
        req.source = source_of(req);
      return self->delegate(inner, msg::compile_atom_v, std::move(req));
    },
    [self, inner](msg::cancel_atom, std::uint64_t id) {
      self->send(inner, msg::cancel_atom_v, id);
    },
    [self, inner](msg::stats_atom) { return self->delegate(inner, msg::stats_atom_v); },
  };
}

} // namespace

msg::compiler_pool_actor spawn_bundled_front(
  caf::actor_system& sys, msg::compiler_pool_actor inner,
  std::function<std::string(const msg::compile_request&)> source_of) {
  return sys.spawn(bundled_front, std::move(inner), std::move(source_of));
}

} // namespace leap::bench
