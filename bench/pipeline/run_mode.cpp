#include "bench/pipeline/run_mode.hpp"

#include "bench/pipeline/job_trace.hpp"
#include "bench/pipeline/latency_learner.hpp"
#include "bench/pipeline/latency_pools.hpp"
#include "bench/pipeline/node_stats.hpp"
#include "common/fs.hpp"
#include "policy/policy_model.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/corpus/kernel_corpus.hpp"
#include "policy/generation_engine.hpp"
#include "policy/model/model_config.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"
#include "actors/cluster.hpp"
#include "runtime/cluster/transport.hpp"
#include "runtime/workflows/openai_generation.hpp"
#include "runtime/pipeline/assembly.hpp"
#include "runtime/pipeline/options.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include <sys/resource.h>

namespace leap::bench {

namespace {

using steady = std::chrono::steady_clock;

// User + system CPU seconds of this process (RUSAGE_SELF) or of its children that have been
// waited for (RUSAGE_CHILDREN).
double cpu_seconds_of(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
         + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

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

// The latency-model generator's "tokens" are attempt keys; the prompt carries the key of the
// attempt's previous turn (parsed back from its code) with the next turn number.
actors::prompt_codec attempt_key_codec(const std::vector<std::string>& names) {
  std::map<std::string, std::uint32_t> index_of;
  for (std::size_t i = 0; i < names.size(); ++i)
    index_of[names[i]] = static_cast<std::uint32_t>(i);
  actors::prompt_codec c;
  c.encode = [index_of](const std::string& task, const std::vector<std::string>& codes,
                        const std::vector<std::string>&) {
    attempt_key k;
    if (!codes.empty())
      if (auto prev = parse_code(codes.back()))
        k = *prev;
    k.task = index_of.at(task);
    k.turn = static_cast<std::uint32_t>(codes.size() + 1);
    return to_tokens(k);
  };
  c.decode = [names](const std::vector<int>& ids) {
    auto k = from_tokens(ids);
    if (!k || k->task >= names.size())
      return std::string("(not an attempt key)");
    return fenced(to_code(*k, names[k->task]));
  };
  return c;
}

} // namespace

const char* to_string(bench_mode m) {
  switch (m) {
    case bench_mode::async: return "async";
    case bench_mode::sync: return "sync";
    case bench_mode::async_no_dcp: return "async_no_dcp";
    case bench_mode::async_cancel_turn1: return "async_cancel_turn1";
    case bench_mode::async_keep_turn1: return "async_keep_turn1";
  }
  return "?";
}

bench_mode turn1_mode_of(const scenario& sc) {
  return sc.cfg.train.cancel_pruned_turn1 ? bench_mode::async_keep_turn1
                                          : bench_mode::async_cancel_turn1;
}

result<mode_run> run_bench_mode(const scenario& sc, bench_mode mode, runtime::services* svc,
                                std::function<void(int, int, double)> on_step,
                                std::vector<std::string> nodes) {
  auto cfg = sc.cfg;
  if (mode == bench_mode::async_cancel_turn1)
    cfg.train.cancel_pruned_turn1 = true;
  if (mode == bench_mode::async_keep_turn1)
    cfg.train.cancel_pruned_turn1 = false;
  const auto& tc = cfg.train;
  const double scale = sc.any_real() ? 1.0 : sc.time_scale;
  mode_run run;
  run.mode = to_string(mode);
  const auto train_mode = mode == bench_mode::sync ? msg::train_mode::sync : msg::train_mode::async;
  if (sc.any_real() && !svc)
    return make_error("leap bench: a real stage needs the verification environment");
  // The real stages on cluster nodes, as `leap train` runs them (runtime/pipeline/env_pools.hpp:
  // cluster.nodes, local_roles, listen, TLS, the waits): the assembly spawns the cluster.
  const bool on_cluster = svc && nodes.empty() && runtime::clustered(svc->cfg.cluster);

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

  runtime::pipeline_description d;
  d.svc = svc;
  d.tasks = tasks;
  d.gatekeeper = runtime::gatekeeper_options_of(cfg, train_mode,
                                                tc.dcp && mode != bench_mode::async_no_dcp);
  d.gatekeeper.backend = svc ? svc->backend : env::backend::cpu;
  d.gatekeeper.max_seq_len = 1 << 20;

  // The real policy, when generation is real.
  std::shared_ptr<policy::generation_engine> engine;
  if (sc.generate.real) {
    auto tp = policy::checkpoint_tokenizer_path(sc.checkpoint);
    if (!tp)
      return make_error("bench.generate.checkpoint: " + tp.message());
    auto t = policy::tokenizer::load(*tp);
    if (!t)
      return make_error("bench.generate.checkpoint: " + t.message());
    auto tok = std::make_shared<const policy::tokenizer>(std::move(*t));
    if (cfg.generation.source == config::generation_source::openai) {
      // Sampled by an OpenAI-compatible server; the checkpoint names the tokenizer and config.
      auto e = runtime::openai_generation_engine(cfg, tok);
      if (!e)
        return e.err();
      engine = std::move(*e);
    } else {
      auto e = policy::generation_engine::create(sc.checkpoint, tc.generators, 0);
      if (!e)
        return make_error("bench.generate.checkpoint: " + e.message());
      engine = std::move(*e);
    }
    auto mc = policy::load_model_config((std::filesystem::path(sc.checkpoint) / "config.json").string());
    if (!mc)
      return make_error("bench.generate.checkpoint: " + mc.message());
    d.gatekeeper.max_seq_len = static_cast<int>(mc->max_seq_len);
    d.gatekeeper.eos_id = tok->token_id(policy::special::eos);
    d.gatekeeper.codec = runtime::policy_codec(tok, tasks);
  } else {
    d.gatekeeper.codec = attempt_key_codec(names);
  }
  std::shared_ptr<const std::map<std::string, std::vector<std::string>>> candidates;
  if (sc.compile.real && (sc.compile_source == "bundled" || !sc.generate.real)) {
    auto c = bundled_candidates(*tasks, names, sc.seed);
    if (!c)
      return c.err();
    candidates = *c;
  }

  auto ctx = std::make_shared<latency_context>();
  ctx->timer = std::make_shared<deadline_timer>();
  ctx->time_scale = scale;
  ctx->seed = sc.seed;
  ctx->policy_version = std::make_shared<std::atomic<std::int64_t>>(0);
  ctx->task_names = names;
  if (!sc.execute.real)
    ctx->success = sc.task_success();

  const int generators = engine ? engine->workers() : std::max(1, tc.generators);
  d.gatekeeper.generators = generators;
  const auto epoch = steady::now();
  auto scen = [epoch, scale](steady::time_point t) {
    return std::chrono::duration<double>(t - epoch).count() / scale;
  };
  auto gen_trace = std::make_shared<job_trace>("generate", generators, epoch);
  auto comp_trace = std::make_shared<job_trace>("compile", cfg.compiler.workers, epoch);
  auto exec_trace = std::make_shared<job_trace>("execute", cfg.executor.workers, epoch);
  std::mutex mtx;
  std::vector<std::pair<steady::time_point, steady::time_point>> updates;

  d.generators.observer = gen_trace;
  d.compilers = runtime::compiler_pool_of(cfg);
  d.compilers.observer = comp_trace;
  d.executors = runtime::executor_pool_of(cfg);
  d.executors.observer = exec_trace;
  d.engine = engine;
  auto gen_opts = d.generators;
  gen_opts.workers = static_cast<std::size_t>(generators);
  if (!engine)
    d.stand_ins.generators = [gen_opts, dist = sc.generate.dist, ctx](caf::actor_system& sys) {
      return spawn_latency_generator_pool(sys, gen_opts, dist, ctx);
    };
  if (!sc.compile.real)
    d.stand_ins.compilers = [o = d.compilers, dist = sc.compile.dist, ctx](caf::actor_system& sys) {
      return spawn_latency_compiler_pool(sys, o, dist, ctx);
    };
  else if (candidates && on_cluster)
    // The nodes build what the head sends: the bundled candidates go in front of the cluster.
    d.stand_ins.wrap_compilers = [pick = bundled_source_of(candidates, sc.seed)](
                                   caf::actor_system& sys, msg::compiler_pool_actor cluster) {
      return spawn_bundled_front(sys, std::move(cluster), pick);
    };
  else if (candidates)
    d.stand_ins.compilers = [o = d.compilers, comp = svc->compiler, tasks, candidates,
                             seed = sc.seed](caf::actor_system& sys) {
      return spawn_bundled_compiler_pool(sys, o, comp, tasks, candidates, seed);
    };
  if (on_cluster && engine)
    d.policy_checkpoint = sc.checkpoint; // generating nodes start from the head's policy
  if (!sc.execute.real)
    d.stand_ins.executors = [o = d.executors, dist = sc.execute.dist, ctx](caf::actor_system& sys) {
      return spawn_latency_executor_pool(sys, o, dist, ctx);
    };
  if (!nodes.empty()) {
    // Compile and execute on the nodes: the dispatcher is spawned with the compilers' stand-in
    // and its execute facade handed out with the executors' (the assembly's order).
    actors::cluster_options co;
    co.nodes = nodes;
    co.identity = msg::this_build_identity();
    co.queue_per_worker = cfg.cluster.queue_per_worker;
    co.heartbeat_seconds = cfg.cluster.heartbeat_seconds;
    co.heartbeat_misses = cfg.cluster.heartbeat_misses;
    co.node_wait_seconds = cfg.cluster.node_wait_seconds;
    co.compile_retries = cfg.compiler.retries;
    co.exec_retries = cfg.executor.retries;
    co.log = [](const std::string& line) { std::fprintf(stderr, "  cluster: %s\n", line.c_str()); };
    auto handles = std::make_shared<actors::cluster_handles>();
    // TLS when the scenario names certificates (the nodes get the same --set).
    auto tls = cfg.cluster;
    d.stand_ins.configure = [tls](caf::actor_system_config& c) {
      if (auto r = runtime::configure_transport(c, tls); !r)
        std::fprintf(stderr, "  cluster: %s\n", r.message().c_str());
    };
    d.stand_ins.compilers = [co, handles, tls](caf::actor_system& sys) mutable {
      co.connect = runtime::node_connector(sys, runtime::uses_tls(tls));
      *handles = actors::spawn_cluster(sys, co);
      return handles->compilers;
    };
    d.stand_ins.executors = [handles](caf::actor_system&) { return handles->executors; };
  }
  latency_learner_options lo;
  lo.batch_groups = tc.batch_groups;
  lo.order = tc.batch_order;
  lo.update = std::chrono::duration_cast<steady::duration>(
    std::chrono::duration<double>(sc.learner_seconds * scale));
  lo.task_count = names.size();
  lo.policy_version = ctx->policy_version;
  lo.on_update = [&](steady::time_point a, steady::time_point b) {
    std::lock_guard<std::mutex> lk(mtx);
    updates.emplace_back(a, b);
  };
  d.stand_ins.learner = [lo](caf::actor_system& sys) { return spawn_latency_learner(sys, lo); };

  runtime::train_driver td;
  td.estimator = runtime::estimator_of(tc);
  td.trainer = runtime::trainer_options_of(tc, train_mode, names);
  td.trainer.on_report = [&](const msg::step_report& r) {
    step_point p;
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
  d.train = std::move(td);

  msg::pool_stats comp_stats;
  actors::run_end end;
  const auto& cluster_cfg = svc ? svc->cfg.cluster : cfg.cluster;
  const auto nodes_before = on_cluster ? ask_nodes(cluster_cfg.nodes, cluster_cfg)
                                       : std::vector<node_figures>{};
  const double self_before = cpu_seconds_of(RUSAGE_SELF);
  const double children_before = cpu_seconds_of(RUSAGE_CHILDREN);
  {
    auto p = runtime::pipeline::spawn(std::move(d));
    if (!p)
      return p.err();
    auto out = (*p)->wait();
    end = out.end;
    comp_stats = out.compiler_stats;
  }
  if (sc.any_real()) {
    run.cpu_self_seconds = cpu_seconds_of(RUSAGE_SELF) - self_before;
    run.cpu_seconds = run.cpu_self_seconds + cpu_seconds_of(RUSAGE_CHILDREN) - children_before;
  }
  engine.reset();
  if (on_cluster)
    run.nodes = node_figures_between(nodes_before, ask_nodes(cluster_cfg.nodes, cluster_cfg));
  if (end.end != actors::run_end::how::completed)
    run.failure = end.end == actors::run_end::how::failed ? end.error : "interrupted";
  run.wall_seconds = run.steps.empty() ? 0.0 : run.steps.back().t;
  auto to_scenario = [&](const job_trace& t, const std::string& stage) {
    pool_run p;
    p.stage = stage;
    p.workers = t.workers();
    p.events = t.events();
    for (auto& e : p.events)
      e.t /= scale;
    return p;
  };
  // On a cluster a stage's jobs run on the nodes (and the head's own pools, cluster.local_roles):
  // this process traces only its own part of them.
  auto local = [&](config::node_role r) {
    const auto& lr = cluster_cfg.local_roles;
    return std::find(lr.begin(), lr.end(), r) != lr.end();
  };
  run.pools.push_back(to_scenario(*gen_trace, "generate"));
  run.pools.back().on_nodes = on_cluster && engine && !local(config::node_role::generate);
  run.pools.push_back(to_scenario(*comp_trace, "compile"));
  run.pools.back().cancelled = comp_stats.cancelled;
  run.pools.back().on_nodes = on_cluster;
  run.pools.push_back(to_scenario(*exec_trace, "execute"));
  run.pools.back().on_nodes = on_cluster;
  for (auto& [a, b] : updates)
    run.learner.emplace_back(scen(a), scen(b));
  return run;
}

result<mode_run> run_scenario_mode(const scenario& sc, bench_mode mode, const std::string& out_dir,
                                   bool progress) {
  auto on_step = [mode, progress](int k, int n, double t) {
    if (progress)
      std::fprintf(stderr, "  %-18s step %d/%d at %.1f s\n", to_string(mode), k, n, t);
  };
  if (!sc.any_real())
    return run_bench_mode(sc, mode, nullptr, on_step);
  auto cache = make_temp_dir(out_dir, std::string("cache-") + to_string(mode) + "-");
  if (!cache)
    return cache.err();
  auto cfg = sc.cfg;
  cfg.environment.cache_dir = *cache;
  // One compute thread per generator replica, as in `leap train` (several threads that each call
  // a multi-threaded OpenBLAS spin against each other on a small machine).
  if (sc.generate.real)
    policy::set_torch_threads(1);
  auto svc = runtime::make_services(cfg);
  if (!svc)
    return svc.err();
  auto r = run_bench_mode(sc, mode, svc->get(), on_step);
  svc->reset();
  std::error_code ec;
  std::filesystem::remove_all(*cache, ec);
  return r;
}

} // namespace leap::bench
