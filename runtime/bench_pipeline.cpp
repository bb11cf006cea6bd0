#include "runtime/bench_pipeline.hpp"

#include "actors/compiler_pool.hpp"
#include "actors/executor_pool.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/generator_pool.hpp"
#include "actors/judge.hpp"
#include "actors/latency_learner.hpp"
#include "actors/latency_pools.hpp"
#include "actors/trainer.hpp"
#include "messages/interfaces.hpp"
#include "policy/corpus/corpus.hpp"
#include "policy/generation_engine.hpp"
#include "policy/model_config.hpp"
#include "policy/special_tokens.hpp"
#include "policy/tokenizer.hpp"
#include "runtime/pipeline_options.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>

namespace leap::runtime {

namespace {

using steady = std::chrono::steady_clock;

std::string fenced(const std::string& code) { return "```cuda\n" + code + "\n```"; }

// Corpus variants (correct and buggy) per task: the bundled candidates of real-compile runs.
result<std::shared_ptr<const std::map<std::string, std::vector<std::string>>>>
bundled_candidates(const actors::task_catalog& tasks, const std::vector<std::string>& names,
                   std::uint64_t seed) {
  std::vector<env::task_spec> specs;
  for (auto& n : names)
    specs.push_back(tasks.at(n));
  corpus::generate_options go;
  go.seed = seed;
  auto vars = corpus::generate(specs, go);
  if (!vars)
    return make_error("leap bench: generating the bundled candidates: " + vars.message());
  auto out = std::make_shared<std::map<std::string, std::vector<std::string>>>();
  for (auto& v : *vars)
    (*out)[v.task].push_back(v.source);
  return std::shared_ptr<const std::map<std::string, std::vector<std::string>>>(std::move(out));
}

} // namespace

result<bench::mode_run> run_bench_mode(const bench::scenario& sc, const std::string& mode,
                                       services* svc, std::function<void(int, int, double)> on_step) {
  const auto& tc = sc.cfg.train;
  const double scale = sc.any_real() ? 1.0 : sc.time_scale;
  bench::mode_run run;
  run.mode = mode;
  const bool sync = mode == "sync";
  if (sc.any_real() && !svc)
    return make_error("leap bench: a real stage needs the verification environment");

  // Tasks: synthetic ones for latency-model execution, else bundled ones.
  std::shared_ptr<const actors::task_catalog> tasks;
  std::vector<std::string> names;
  if (!sc.execute.real) {
    auto cat = std::make_shared<actors::task_catalog>();
    for (auto& n : sc.task_names()) {
      env::task_spec t;
      t.name = n;
      t.description = "leap bench synthetic task";
      (*cat)[n] = t;
      names.push_back(n);
    }
    tasks = cat;
  } else {
    tasks = svc->tasks;
    if (tc.tasks.empty())
      for (auto& [n, t] : *tasks)
        names.push_back(n);
    for (auto& n : tc.tasks) {
      if (!tasks->count(n))
        return make_error("train.tasks: unknown task '" + n + "' (see `leap tasks list`)");
      names.push_back(n);
    }
  }
  std::map<std::string, std::uint32_t> index_of;
  for (std::size_t i = 0; i < names.size(); ++i)
    index_of[names[i]] = static_cast<std::uint32_t>(i);

  // The real policy, when generation is real.
  std::shared_ptr<policy::generation_engine> engine;
  std::shared_ptr<const policy::tokenizer> tok;
  int max_len = 1 << 20, eos = -1;
  if (sc.generate.real) {
    auto t = policy::tokenizer::load((std::filesystem::path(sc.checkpoint) / "tokenizer.json").string());
    if (!t)
      return make_error("bench.generate.checkpoint: " + t.message());
    tok = std::make_shared<const policy::tokenizer>(std::move(*t));
    auto e = policy::generation_engine::create(sc.checkpoint, tc.generators, 0);
    if (!e)
      return make_error("bench.generate.checkpoint: " + e.message());
    engine = std::move(*e);
    auto mc = policy::load_model_config((std::filesystem::path(sc.checkpoint) / "config.json").string());
    if (!mc)
      return make_error("bench.generate.checkpoint: " + mc.message());
    max_len = static_cast<int>(mc->max_seq_len);
    eos = tok->token_id(policy::special::eos);
  }
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates;
  if (sc.compile.real && (sc.compile_source == "bundled" || !sc.generate.real)) {
    auto c = bundled_candidates(*tasks, names, sc.seed);
    if (!c)
      return c.err();
    candidates = *c;
  }

  auto ctx = std::make_shared<actors::latency_context>();
  ctx->timer = std::make_shared<bench::deadline_timer>();
  ctx->time_scale = scale;
  ctx->seed = sc.seed;
  ctx->policy_version = std::make_shared<std::atomic<std::int64_t>>(0);
  ctx->task_names = names;
  if (!sc.execute.real)
    ctx->success = sc.task_success();

  const int generators = engine ? engine->workers() : std::max(1, tc.generators);
  const auto epoch = steady::now();
  auto scen = [&](steady::time_point t) {
    return std::chrono::duration<double>(t - epoch).count() / scale;
  };
  auto gen_trace = std::make_shared<actors::job_trace>("generate", generators, epoch);
  auto comp_trace = std::make_shared<actors::job_trace>("compile", sc.cfg.compiler.workers, epoch);
  auto exec_trace = std::make_shared<actors::job_trace>("execute", sc.cfg.executor.workers, epoch);
  std::mutex mtx;
  std::condition_variable cv;
  bool done = false;
  std::string outcome;
  std::vector<std::pair<steady::time_point, steady::time_point>> updates;
  msg::pool_stats comp_stats;
  {
    caf::actor_system_config sys_cfg;
    msg::register_message_types(sys_cfg);
    caf::actor_system sys{sys_cfg};
    msg::generator_pool_actor gens;
    msg::compiler_pool_actor comps;
    msg::executor_pool_actor execs;
    if (engine)
      gens = actors::spawn_generator_pool(sys, engine, gen_trace);
    else
      gens = actors::spawn_latency_generator_pool(sys, static_cast<std::size_t>(generators),
                                                  sc.generate.dist, ctx, gen_trace);
    const auto nc = static_cast<std::size_t>(sc.cfg.compiler.workers);
    const auto ne = static_cast<std::size_t>(sc.cfg.executor.workers);
    if (!sc.compile.real)
      comps = actors::spawn_latency_compiler_pool(sys, nc, sc.compile.dist, ctx, comp_trace);
    else if (candidates)
      comps = actors::spawn_bundled_compiler_pool(sys, nc, svc->compiler, tasks, candidates,
                                                  sc.seed, comp_trace);
    else
      comps = actors::spawn_compiler_pool(sys, nc, svc->compiler, tasks, comp_trace);
    if (!sc.execute.real)
      execs = actors::spawn_latency_executor_pool(sys, ne, sc.execute.dist, ctx, exec_trace);
    else
      execs = actors::spawn_executor_pool(sys, ne, svc->executor, tasks, exec_trace);

    actors::latency_learner_options lo;
    lo.batch_groups = tc.batch_groups;
    lo.order = batch_order_of(tc);
    lo.update = std::chrono::duration_cast<steady::duration>(
      std::chrono::duration<double>(sc.learner_seconds * scale));
    lo.task_count = names.size();
    lo.policy_version = ctx->policy_version;
    lo.on_update = [&](steady::time_point a, steady::time_point b) {
      std::lock_guard<std::mutex> lk(mtx);
      updates.emplace_back(a, b);
    };
    auto learner = actors::spawn_latency_learner(sys, lo);
    auto judge = actors::spawn_judge(sys, estimator_of(tc), learner);

    auto go = gatekeeper_options_of(sc.cfg, sync, tc.dcp && mode != "async_no_dcp");
    go.backend = svc ? svc->backend : "cpu";
    go.max_seq_len = max_len;
    go.eos_id = eos;
    go.generators = generators;
    if (tok) {
      set_policy_codec(go, tok, tasks);
    } else {
      // The latency-model generator's "tokens" are attempt keys; the prompt carries the key of the
      // attempt's previous turn (parsed back from its code) with the next turn number.
      go.encode_prompt = [index_of](const std::string& task, const std::vector<std::string>& codes,
                                    const std::vector<std::string>&) {
        bench::attempt_key k;
        if (!codes.empty())
          if (auto prev = bench::parse_code(codes.back()))
            k = *prev;
        k.task = index_of.at(task);
        k.turn = static_cast<std::uint32_t>(codes.size() + 1);
        return bench::to_tokens(k);
      };
      go.decode = [names](const std::vector<int>& ids) {
        auto k = bench::from_tokens(ids);
        if (!k || k->task >= names.size())
          return std::string("(not an attempt key)");
        return fenced(bench::to_code(*k, names[k->task]));
      };
    }
    auto gk = actors::spawn_gatekeeper(sys, go, tasks, gens, comps, execs, judge);

    auto to = trainer_options_of(tc, sync, names);
    to.on_report = [&](const msg::step_report& r) {
      bench::step_point p;
      p.t = scen(steady::now());
      p.groups = r.groups;
      p.attempts = r.attempts;
      p.compiles = r.compiles;
      p.compiles_later_turns = r.compiles_later_turns;
      p.cancelled = r.cancelled;
      p.cache_hits = r.cache_hits;
      p.acc_at_1 = r.acc_at_1;
      p.acc_at_3 = r.acc_at_3;
      p.activated = r.activated_groups;
      int n;
      {
        std::lock_guard<std::mutex> lk(mtx);
        run.steps.push_back(p);
        n = static_cast<int>(run.steps.size());
      }
      if (on_step)
        on_step(n, tc.steps, p.t);
    };
    to.on_done = [&](const std::string& why) {
      std::lock_guard<std::mutex> lk(mtx);
      done = true;
      outcome = why;
      cv.notify_all();
    };
    auto trainer = actors::spawn_trainer(sys, to, gk, learner);
    {
      std::unique_lock<std::mutex> lk(mtx);
      cv.wait(lk, [&] { return done; });
    }
    {
      caf::scoped_actor self{sys};
      self->request(comps, std::chrono::seconds(10), msg::stats_atom_v)
        .receive([&](msg::pool_stats& s) { comp_stats = s; }, [](caf::error&) {});
    }
    for (auto* a : {&trainer, &gk, &judge, &learner})
      caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(gens, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(comps, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(execs, caf::exit_reason::user_shutdown);
  }
  engine.reset();
  if (!outcome.empty())
    run.error = outcome;
  run.wall_seconds = run.steps.empty() ? 0.0 : run.steps.back().t;
  auto to_scenario = [&](const actors::job_trace& t, const std::string& stage) {
    bench::pool_run p;
    p.stage = stage;
    p.workers = t.workers();
    p.events = t.events();
    for (auto& e : p.events)
      e.t /= scale;
    return p;
  };
  run.pools.push_back(to_scenario(*gen_trace, "generate"));
  run.pools.push_back(to_scenario(*comp_trace, "compile"));
  run.pools.back().cancelled = comp_stats.cancelled;
  run.pools.push_back(to_scenario(*exec_trace, "execute"));
  for (auto& [a, b] : updates)
    run.learner.emplace_back(scen(a), scen(b));
  return run;
}

} // namespace leap::runtime
