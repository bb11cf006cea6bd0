#include "runtime/commands/eval.hpp"

#include "actors/group_scoring.hpp"
#include "algo/metrics.hpp"
#include "common/json_text.hpp"
#include "policy/checkpoint_verify.hpp"
#include "policy/generation_engine.hpp"
#include "policy/model_config.hpp"
#include "policy/prompt.hpp"
#include "policy/policy_model.hpp"
#include "policy/special_tokens.hpp"
#include "policy/tokenizer.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/assembly.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/serve/openai_client.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

namespace leap::runtime {

result<std::shared_ptr<policy::generation_engine>>
openai_generation_engine(const config::leap_config& cfg,
                         std::shared_ptr<const policy::tokenizer> tok,
                         policy::chat_format format) {
  if (cfg.openai.model.empty())
    return make_error("generation.source = \"openai\" needs openai.model (the served model's "
                      "name)");
  serve::openai_client_options o;
  o.url = cfg.openai.url;
  o.model = cfg.openai.model;
  if (const char* key = std::getenv(cfg.openai.api_key_env.c_str()))
    o.api_key = key;
  o.tls_ca = cfg.openai.tls_ca;
  o.max_concurrency = cfg.openai.max_concurrency;
  o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(cfg.openai.timeout_seconds));
  auto c = serve::openai_client::create(o);
  if (!c)
    return c.err();
  std::shared_ptr<serve::openai_client> client = std::move(*c);
  const int eos = tok->token_id(policy::end_of_turn(format));
  struct gather {
    std::mutex m;
    std::vector<std::vector<policy::sampled>> per_prompt;
    std::size_t left = 0;
    bool failed = false;
    policy::generation_engine::remote_done done;
  };
  auto remote = [client, tok, eos](const policy::generation_job& job,
                                   policy::generation_engine::remote_done done) {
    const std::size_t P = job.prompts.size();
    const int G = job.samples_per_prompt;
    if (P == 0)
      return done(std::vector<policy::sampled>{});
    auto g = std::make_shared<gather>();
    g->per_prompt.resize(P);
    g->left = P;
    g->done = std::move(done);
    for (std::size_t i = 0; i < P; ++i) {
      serve::openai_completion_call call;
      call.prompt = job.prompts[i];
      call.n = G;
      call.temperature = job.sampling.temperature;
      call.top_p = job.sampling.top_p;
      call.max_tokens = job.sampling.max_new_tokens;
      call.seed = job.sampling.seed + i;
      client->complete(call, [g, i, G, tok, eos](result<serve::openai_answer> r) {
        result<std::vector<policy::sampled>> finished = std::vector<policy::sampled>{};
        bool call_done = false;
        {
          std::lock_guard<std::mutex> lk(g->m);
          if (g->failed)
            return;
          if (!r || r->samples.size() != static_cast<std::size_t>(G)) {
            g->failed = true;
            finished = make_error(!r ? r.message()
                                     : "the server answered " + std::to_string(r->samples.size())
                                         + " choices for n = " + std::to_string(G));
            call_done = true;
          } else {
            for (auto& s : r->samples) {
              policy::sampled x;
              x.tokens = std::move(s.tokens);
              if (x.tokens.empty()) {
                x.tokens = tok->encode(s.text, false);
                if (s.finish_reason == "stop" && eos >= 0)
                  x.tokens.push_back(eos);
              }
              x.logprobs = s.logprobs.size() == x.tokens.size()
                             ? std::move(s.logprobs)
                             : std::vector<float>(x.tokens.size(), 0.0f);
              x.finish = s.finish_reason == "length"                        ? "length"
                         : !x.tokens.empty() && x.tokens.back() == eos ? "eos"
                                                                            : "stop";
              g->per_prompt[i].push_back(std::move(x));
            }
            if (--g->left == 0) {
              std::vector<policy::sampled> all;
              for (auto& p : g->per_prompt)
                for (auto& x : p)
                  all.push_back(std::move(x));
              finished = std::move(all);
              call_done = true;
            }
          }
        }
        if (call_done)
          g->done(std::move(finished));
      });
    }
  };
  return std::shared_ptr<policy::generation_engine>(
    policy::generation_engine::create_remote(cfg.openai.max_concurrency, remote));
}

namespace {

// The checkpoint's policy as the evaluation pipeline needs it.
struct eval_policy {
  std::shared_ptr<const policy::tokenizer> tok;
  policy::chat_format format = policy::chat_format::leap;
};

using group_callback = std::function<void(const msg::group_result&, const eval_policy&)>;

// Where the samples come from: generation.source (the checkpoint, or the [openai] server), or
// always the checkpoint (a warm start sampling from itself).
enum class sampler { configured, checkpoint };

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
  d.gatekeeper = eval_gatekeeper_options_of(svc.cfg, ec);
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

} // namespace

result<sampled_failures> sample_failures(services& svc, const std::string& dir,
                                         const std::vector<std::string>& names, int group_size,
                                         bool show) {
  auto t0 = std::chrono::steady_clock::now();
  config::eval_section ec = svc.cfg.eval;
  ec.group_size = group_size;
  ec.max_turns = 1;
  std::size_t done = 0;
  auto out = run_eval_pipeline(
    svc, dir, names, ec, sampler::checkpoint, false,
    [&](const msg::group_result& g, const eval_policy&) {
      ++done;
      if (show)
        std::fprintf(stderr, "\rself-repair: sampled %zu/%zu tasks", done, names.size());
      if (show && done == names.size())
        std::fputc('\n', stderr);
    });
  if (!out)
    return out.err();
  sampled_failures res;
  for (const auto& g : out->groups)
    for (const auto& tr : g.trajectories) {
      if (!actors::is_ranked(tr) || tr.turns.empty())
        continue;
      const auto& t = tr.turns.front();
      ++res.samples;
      if (t.status == env::status::correct) {
        ++res.passed;
        continue;
      }
      res.failures.push_back({g.task, t.code, t.feedback});
    }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::string eval_set_of(const std::string& task) {
  if (!taskgen::is_generated_name(task) || task.size() < 6)
    return "bundled";
  switch (task[task.size() - 6]) {
    case 'i':
      return "generated_instance";
    case 'c':
      return "generated_composition";
    default:
      return "generated_train";
  }
}

result<eval_summary> evaluate_checkpoint(services& svc, const std::string& dir, bool show) {
  const auto& cfg = svc.cfg;
  auto t_start = std::chrono::steady_clock::now();
  if (auto added = add_generated_tasks(svc, cfg.eval.tasks, "eval.tasks"); !added)
    return added.err();
  std::vector<env::task_split> splits;
  if (cfg.eval.split != config::eval_split::train)
    splits.push_back(env::task_split::eval);
  if (cfg.eval.split != config::eval_split::eval)
    splits.push_back(env::task_split::train);
  auto selected = env::select_tasks(*svc.tasks, "eval.tasks", cfg.eval.tasks, splits);
  if (!selected)
    return selected.err();
  const std::vector<std::string> names = std::move(*selected);
  const char* split_name = cfg.eval.split == config::eval_split::eval    ? "eval"
                           : cfg.eval.split == config::eval_split::train ? "train"
                                                                         : "all";
  const std::string suite_hash = env::task_suite_hash(*svc.tasks);
  if (show)
    std::fprintf(stderr, "eval: %zu tasks of the %s split (eval.split; suite %s)\n", names.size(),
                 split_name, suite_hash.c_str());
  // Debugging aid (no config key): LEAP_EVAL_DUMP=FILE appends one JSON line per sampled turn
  // with the prompt text, the raw completion and the verdict.
  auto dump = std::make_shared<std::ofstream>();
  if (const char* path = std::getenv("LEAP_EVAL_DUMP"); path != nullptr && *path != '\0')
    dump->open(path, std::ios::app);
  std::size_t done = 0;
  const auto total = names.size();
  auto on_group = [show, dump, &done, total](const msg::group_result& g, const eval_policy& pol) {
    ++done;
    int solved = 0;
    for (auto& tr : g.trajectories)
      solved += tr.solved_turn > 0;
    if (show)
      std::fprintf(stderr, "eval: %-18s %d/%zu solved, %u turns sampled (%zu/%zu tasks)\n",
                   g.task.c_str(), solved, g.trajectories.size(), g.attempts, done, total);
    if (!dump->is_open())
      return;
    for (std::size_t a = 0; a < g.trajectories.size(); ++a)
      for (std::size_t k = 0; k < g.trajectories[a].turns.size(); ++k) {
        const auto& t = g.trajectories[a].turns[k];
        *dump << dump_lossy(nlohmann::json{
                   {"task", g.task}, {"attempt", a}, {"turn", k + 1},
                   {"prompt", pol.tok->decode(t.prompt)},
                   {"completion", pol.tok->decode(t.completion)},
                   {"status", t.judged ? env::to_string(t.status) : "none"}, {"reason", t.reason}})
              << "\n";
      }
    dump->flush();
  };
  auto ran = run_eval_pipeline(svc, dir, names, cfg.eval, sampler::configured, show, on_group);
  if (!ran)
    return ran.err();
  auto& out = *ran;

  eval_summary sum;
  sum.split = split_name;
  sum.task_suite = suite_hash;
  const int T = cfg.eval.max_turns;
  // Acc@k for k = 1..max(3, T) over some groups (Acc@k of k > T equals Acc@T).
  auto acc_curve = [T](const std::vector<algo::group_record>& groups) {
    std::vector<double> acc;
    for (int k = 1; k <= std::max(T, 3); ++k)
      acc.push_back(algo::acc_at_k(groups, std::min(k, T)));
    return acc;
  };
  std::vector<algo::group_record> records;
  std::map<std::string, std::vector<algo::group_record>> by_category, by_set;
  for (const auto& g : out.groups) {
    auto& r = sum.per_task[g.task];
    sum.samples += g.attempts;
    for (const auto& tr : g.trajectories) {
      const bool ranked = actors::is_ranked(tr);
      r.solved_turn.push_back(ranked ? tr.solved_turn : 0);
      r.ranked.push_back(ranked);
      sum.dropped += tr.end == algo::attempt_end::dropped;
      sum.unsupported += tr.end == algo::attempt_end::unsupported;
      for (std::size_t k = 0; k < tr.turns.size(); ++k) {
        const auto& t = tr.turns[k];
        sum.generated_tokens += static_cast<long long>(t.completion.size());
        sum.no_code += t.judged && t.reason == "no_code";
        if (k == 0)
          r.turn1_status[t.judged ? env::to_string(t.status) : "no_verdict"]++;
      }
    }
    records.push_back(actors::record_of(g));
    const std::string category = env::to_string(svc.tasks->at(g.task).category);
    sum.per_category[category].tasks.push_back(g.task); // one group per task
    by_category[category].push_back(records.back());
    const std::string set = eval_set_of(g.task);
    sum.per_set[set].tasks.push_back(g.task);
    by_set[set].push_back(records.back());
  }
  for (auto& [name, cat] : sum.per_category)
    cat.acc_at = acc_curve(by_category[name]);
  for (auto& [name, set] : sum.per_set)
    set.acc_at = acc_curve(by_set[name]);
  sum.pass_at_1 = algo::acc_at_k(records, 1);
  sum.acc_at = acc_curve(records);
  sum.turns_per_pass = algo::turns_per_pass(records);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (out.usage.elapsed_seconds > 0) {
    sum.generate_busy = out.usage.generate / out.usage.elapsed_seconds;
    sum.compile_busy = out.usage.compile / out.usage.elapsed_seconds;
    sum.execute_busy = out.usage.execute / out.usage.elapsed_seconds;
  }
  return sum;
}

int cmd_eval(services& svc, const std::string& dir, bool json) {
  auto r = evaluate_checkpoint(svc, dir, true);
  if (!r) {
    std::cerr << "leap: eval: " << r.message() << "\n";
    return cluster_cannot_start(r.message()) ? exit_usage : exit_failed;
  }
  const int T = svc.cfg.eval.max_turns;
  std::printf("%-18s %8s", "task", "pass@1");
  for (int k = 2; k <= T; ++k)
    std::printf("   acc@%d", k);
  std::printf("   turn-1 verdicts\n");
  nlohmann::json per_task = nlohmann::json::object();
  for (auto& [n, t] : r->per_task) {
    auto ranked = std::count(t.ranked.begin(), t.ranked.end(), true);
    auto g = static_cast<double>(std::max<long>(1, ranked));
    std::printf("%-18s %8.3f", n.c_str(),
                std::count(t.solved_turn.begin(), t.solved_turn.end(), 1) / g);
    nlohmann::json acc = nlohmann::json::array();
    for (int k = 1; k <= T; ++k) {
      auto c = std::count_if(t.solved_turn.begin(), t.solved_turn.end(),
                             [k](int s) { return s > 0 && s <= k; });
      acc.push_back(c / g);
      if (k >= 2)
        std::printf(" %7.3f", c / g);
    }
    std::string verdicts;
    for (auto& [s, c] : t.turn1_status)
      verdicts += (verdicts.empty() ? "" : ", ") + s + " " + std::to_string(c);
    std::printf("   %s\n", verdicts.c_str());
    per_task[n] = {{"pass_at_1", acc[0]}, {"acc", acc}, {"turn1_verdicts", t.turn1_status},
                   {"ranked", ranked}};
  }
  std::printf("\n%-12s %5s %7s %7s %7s\n", "category", "tasks", "acc@1", "acc@2", "acc@3");
  nlohmann::json per_category = nlohmann::json::object();
  for (auto& [name, c] : r->per_category) {
    std::printf("%-12s %5zu %7.3f %7.3f %7.3f\n", name.c_str(), c.tasks.size(), c.acc_at[0],
                c.acc_at[1], c.acc_at[2]);
    per_category[name] = {{"tasks", c.tasks}, {"acc_at_1", c.acc_at[0]}, {"acc_at_2", c.acc_at[1]},
                          {"acc_at_3", c.acc_at[2]}};
  }
  nlohmann::json per_set = nlohmann::json::object();
  if (r->per_set.size() > 1 || !r->per_set.count("bundled")) {
    std::printf("\n%-22s %5s %7s %7s %7s\n", "set", "tasks", "acc@1", "acc@2", "acc@3");
    for (auto& [name, c] : r->per_set)
      std::printf("%-22s %5zu %7.3f %7.3f %7.3f\n", name.c_str(), c.tasks.size(), c.acc_at[0],
                  c.acc_at[1], c.acc_at[2]);
  }
  for (auto& [name, c] : r->per_set)
    per_set[name] = {{"tasks", c.tasks}, {"acc_at_1", c.acc_at[0]}, {"acc_at_2", c.acc_at[1]},
                     {"acc_at_3", c.acc_at[2]}};
  std::printf("%s split (%zu tasks, suite %s): ", r->split.c_str(), r->per_task.size(),
              r->task_suite.c_str());
  std::printf("pass@1 %.3f   Acc@1 %.3f   Acc@2 %.3f   Acc@3 %.3f   turns/pass %.2f\n",
              r->pass_at_1, r->acc_at[0], r->acc_at[1], r->acc_at[2], r->turns_per_pass);
  std::printf("%lld samples, %lld tokens generated; %lld without code, %lld dropped, %lld "
              "emulation-unsupported; busy generate/compile/execute %.0f/%.0f/%.0f %%; total "
              "%.1f s\n",
              r->samples, r->generated_tokens, r->no_code, r->dropped, r->unsupported,
              100 * r->generate_busy, 100 * r->compile_busy, 100 * r->execute_busy, r->seconds);
  if (json)
    std::cout << dump_lossy(nlohmann::json{{"pass_at_1", r->pass_at_1}, {"acc_at_1", r->acc_at[0]},
                                {"acc_at_2", r->acc_at[1]}, {"acc_at_3", r->acc_at[2]},
                                {"turns_per_pass", r->turns_per_pass}, {"per_task", per_task},
                                {"per_category", per_category}, {"per_set", per_set},
                                {"split", r->split},
                                {"task_suite", r->task_suite},
                                {"samples", r->samples}, {"generated_tokens", r->generated_tokens},
                                {"no_code", r->no_code}, {"dropped", r->dropped},
                                {"unsupported", r->unsupported},
                                {"util_generate", r->generate_busy},
                                {"util_compile", r->compile_busy},
                                {"util_execute", r->execute_busy}, {"seconds", r->seconds},
                                {"max_turns", T}, {"group_size", svc.cfg.eval.group_size}})
              << "\n";
  return exit_ok;
}

command eval_command() {
  return {{"eval"}, "--checkpoint DIR [--json]",
          "sample G attempts per task, up to eval.max_turns with\nfeedback; pass@1, Acc@1/2/3, "
          "per-task pass rates",
          command::needs::services, true, false, [](const command_context& ctx) {
            auto ck = ctx.args.opt("--checkpoint");
            if (!ck)
              return usage_error("eval needs --checkpoint DIR");
            return cmd_eval(*ctx.svc, *ck, ctx.args.has("--json"));
          }};
}

} // namespace leap::runtime
