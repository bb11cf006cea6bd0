// The train workflow: see train_run.hpp. Main thread; the trainer's callbacks run on actor
// threads and share the run's state under one mutex.
#include "runtime/workflows/train_run.hpp"

#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/strings.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/generation_engine.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/special_tokens.hpp"
#include "policy/text/tokenizer.hpp"
#include "runtime/pipeline/assembly.hpp"
#include "runtime/pipeline/options.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/run_data.hpp"
#include "runtime/workflows/exit_status.hpp"
#include "runtime/workflows/heldout_eval.hpp"
#include "runtime/workflows/metrics_writer.hpp"
#include "runtime/workflows/run_dir.hpp"
#include "runtime/workflows/train_policy.hpp"
#include "runtime/workflows/warm_start.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

namespace fs = std::filesystem;

namespace leap::runtime {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

} // namespace

using train_detail::load_policy;

int run_training(services& svc, const std::string& out_dir, bool resume) {
  const auto& cfg = svc.cfg;
  const auto& tc = cfg.train;
  if (cfg.generation.source == config::generation_source::openai) {
    std::fprintf(stderr, "leap train: generation.source = \"openai\" cannot train: the learner "
                         "updates the generators' weights after every step, and a remote "
                         "server's weights are not leap's to update. Use it with `leap eval`; "
                         "train with generation.source = \"policy\".\n");
    return exit_usage;
  }
  // The task list: train-split tasks only (the eval split is held out). Generated train tasks
  // named in train.tasks join the suite (and its hash) without environment.generated_tasks.
  if (auto added = add_generated_tasks(svc, tc.tasks, "train.tasks"); !added) {
    std::fprintf(stderr, "leap train: %s\n", added.message().c_str());
    return exit_usage;
  }
  auto selected = env::select_tasks(*svc.tasks, "train.tasks", tc.tasks, {env::task_split::train});
  if (!selected) {
    std::fprintf(stderr, "leap train: %s\n", selected.message().c_str());
    return exit_usage;
  }
  const std::vector<std::string> tasks = std::move(*selected);
  // Held-out evaluation (train.eval_every) loads the policy of its step from that step's
  // checkpoint: a separate model copy, so the generators' and learner's weights, and training's
  // randomness, are untouched. Its fixed sample of held-out tasks is drawn once.
  std::vector<std::string> heldout_tasks;
  if (tc.eval_every > 0) {
    if (tc.eval_every % tc.checkpoint_every != 0) {
      std::fprintf(stderr, "leap train: train.eval_every = %d must be a multiple of "
                           "train.checkpoint_every = %d (the evaluation loads the policy of its "
                           "step from that step's checkpoint)\n", tc.eval_every, tc.checkpoint_every);
      return exit_usage;
    }
    auto sample = heldout_sample(svc);
    if (!sample) {
      std::fprintf(stderr, "leap train: %s\n", sample.message().c_str());
      return exit_usage;
    }
    heldout_tasks = std::move(*sample);
  }
  // Recorded with every checkpoint and printed: results name the exact suite they measured.
  const std::string suite_hash = env::task_suite_hash(*svc.tasks);
  // One run per directory, locked before anything in it is read or truncated.
  auto dir = run_dir::open(out_dir, "leap train");
  if (!dir) {
    std::fprintf(stderr, "leap train: %s\n", dir.message().c_str());
    return exit_failed;
  }
  const run_dir& rd = *dir;
  const std::string ck_dir = rd.checkpoint_dir();
  const std::string metrics_path = rd.metrics_path();
  const std::string groups_path = rd.groups_path();
  std::string start_checkpoint;
  std::int64_t start_step = 0;
  actors::task_progress progress;
  // Warm start: the pretrain checkpoint, made now when missing.
  std::string warm = tc.warm_start.empty() ? out_dir + "/pretrain" : tc.warm_start;
  if (resume) {
    if (!rd.has_checkpoint()) {
      std::fprintf(stderr, "leap train: --resume: no checkpoint in %s\n", ck_dir.c_str());
      return exit_usage;
    }
    if (auto v = policy::verify_checkpoint(ck_dir); !v) {
      std::fprintf(stderr, "leap train: --resume: %s\n", v.message().c_str());
      return exit_failed;
    }
    auto point = rd.read_resume_point(tasks, suite_hash, [](const std::string& w) {
      std::fprintf(stderr, "leap train: warning: --resume: %s\n", w.c_str());
    });
    if (!point) {
      std::fprintf(stderr, "leap train: --resume: %s\n", point.message().c_str());
      return exit_usage;
    }
    start_step = point->step;
    progress = std::move(point->progress);
    start_checkpoint = ck_dir;
    if (auto r = rd.truncate_logs(start_step, [](const std::string& w) {
          std::fprintf(stderr, "leap train: warning: %s\n", w.c_str());
        });
        !r) {
      std::fprintf(stderr, "leap train: %s\n", r.message().c_str());
      return exit_failed;
    }
    std::printf("resuming at step %lld from %s\n", static_cast<long long>(start_step), ck_dir.c_str());
  } else {
    if (rd.has_checkpoint()) {
      std::fprintf(stderr, "leap train: %s already holds a run; continue it with --resume or "
                           "choose another --out\n", out_dir.c_str());
      return exit_usage;
    }
    // A run that ended before its first checkpoint: nothing to continue, start over.
    for (const auto& path : rd.remove_logs())
      std::printf("%s has no checkpoint: its %s is from a run that saved nothing; starting "
                  "over\n", out_dir.c_str(), fs::path(path).filename().c_str());
    if (!run_dir::is_checkpoint(warm)) {
      if (!tc.warm_start.empty()) {
        std::fprintf(stderr, "leap train: train.warm_start = %s is not a checkpoint directory\n",
                     warm.c_str());
        return exit_usage;
      }
      std::printf("no warm-start checkpoint in %s: running leap pretrain first\n", warm.c_str());
      auto p = pretrain(svc, warm, true);
      if (!p) {
        std::fprintf(stderr, "leap train: pretrain: %s\n", p.message().c_str());
        return exit_failed;
      }
    }
    start_checkpoint = warm;
  }
  // A pinned warm start (the quickstart's shipped one) must be the very checkpoint pinned.
  if (!tc.warm_start_sha256.empty() && (!resume || svc.cfg.learner.kl_coef > 0))
    if (auto v = policy::verify_pinned_checkpoint(warm, tc.warm_start_sha256); !v) {
      std::fprintf(stderr, "leap train: train.warm_start_sha256: %s\n", v.message().c_str());
      return exit_failed;
    }
  // One compute thread per role (generators, learner): on a small machine they run side by side
  // instead of contending for the same cores.
  policy::set_torch_threads(1);
  auto pol = load_policy(svc, start_checkpoint, resume, warm, start_step);
  if (!pol) {
    std::fprintf(stderr, "leap train: %s\n", pol.message().c_str());
    return exit_failed;
  }
  const std::string extra = nlohmann::json{{"tasks", tasks}, {"seed", tc.seed}, {"warm_start", warm},
                                            {"task_suite", suite_hash}}.dump();

  auto writer = metrics_writer::open(metrics_path, groups_path);
  if (!writer) {
    std::fprintf(stderr, "leap train: %s\n", writer.message().c_str());
    return exit_failed;
  }
  auto& metrics = *writer;
  std::printf("leap train: %d steps of B=%d groups x G=%d, up to %d turns, %s mode, DCP %s%s, "
              "estimator %s, backend %s, %zu train tasks (suite %s)\n",
              tc.steps, tc.batch_groups, tc.group_size, tc.max_turns, msg::to_string(tc.mode),
              tc.dcp ? "on" : "off", tc.cancel_pruned_turn1 ? " (pruned turn-1 stragglers cancelled)" : "",
              algo::to_string(tc.estimator), env::to_string(svc.backend), tasks.size(),
              suite_hash.c_str());
  if (tc.max_minutes > 0 || tc.max_compiles > 0)
    std::printf("budget: %s%s%s (a resumed run counts its earlier steps)\n",
                tc.max_minutes > 0 ? (format_fixed(tc.max_minutes, 1) + " min of learner steps").c_str() : "",
                tc.max_minutes > 0 && tc.max_compiles > 0 ? " or " : "",
                tc.max_compiles > 0 ? (std::to_string(tc.max_compiles) + " compile requests").c_str() : "");
  if (tc.eval_every > 0)
    std::printf("held-out evaluation every %d steps: %zu tasks (%s) x G=%d, up to %d turns, seed "
                "%llu; its compiles and seconds are counted apart from training's and its budget\n",
                tc.eval_every, heldout_tasks.size(), join(heldout_tasks, ", ").c_str(),
                cfg.eval.group_size, cfg.eval.max_turns,
                static_cast<unsigned long long>(tc.eval_seed));
  std::printf("%5s %6s %6s %6s %5s %8s %6s %6s %4s %8s %14s %9s %8s %4s %7s\n", "step", "acc@1",
              "acc@2", "acc@3", "act%", "compiles", "hits", "cancel", "drop", "att/s",
              "util g/c/e %", "loss", "kl", "ver", "step_s");
  std::fflush(stdout);

  pipeline_description d;
  auto board = std::make_shared<cluster_board>();
  d.board = board;
  d.svc = &svc;
  d.tasks = svc.tasks;
  d.gatekeeper = gatekeeper_options_of(cfg, tc.mode, tc.dcp);
  d.gatekeeper.backend = svc.backend;
  d.gatekeeper.max_seq_len = static_cast<int>(pol->model->config().max_seq_len);
  auto format = chat_format_for(cfg.policy.chat_format, start_checkpoint, *pol->tok);
  if (!format) {
    std::fprintf(stderr, "leap train: %s\n", format.message().c_str());
    return exit_failed;
  }
  d.gatekeeper.eos_id = pol->tok->token_id(policy::end_of_turn(*format));
  d.gatekeeper.generators = pol->engine->workers();
  d.gatekeeper.codec = policy_codec(pol->tok, svc.tasks, *format);
  d.compilers = compiler_pool_of(cfg);
  d.executors = executor_pool_of(cfg);
  d.engine = pol->engine;
  d.policy_checkpoint = start_checkpoint;
  train_driver td;
  td.estimator = estimator_of(tc);
  td.model = pol->model;
  td.learner.batch_groups = tc.batch_groups;
  td.learner.order = tc.batch_order;
  td.learner.rl = rl_options_of(cfg);
  td.learner.start_step = start_step;
  td.learner.tokenizer_json = pol->tokenizer_json;
  td.learner.progress = progress;
  td.learner.task_count = tasks.size();
  td.learner.checkpoint_every = tc.checkpoint_every;
  // The learner's periodic checkpoints are staged and promoted once their step's metrics line
  // is written (on_report), so a kill never leaves the checkpoint ahead of metrics.jsonl.
  // One staged directory per step (the learner may save step N+1 before step N is reported).
  td.learner.checkpoint_dir = rd.staged_base();
  td.learner.stage_by_step = true;
  rd.remove_staged(); // left by a run that was killed
  td.learner.extra_json = extra;
  td.trainer = trainer_options_of(tc, tc.mode, tasks);
  td.trainer.start_step = start_step;
  td.trainer.progress = progress;
  td.trainer.checkpoint_dir = ck_dir;
  td.trainer.extra_json = extra;

  auto t_start = std::chrono::steady_clock::now();
  auto t_last = t_start;
  std::mutex out_mtx;
  // A file the run could not write (a full disk, a file-size limit): the run stops, keeping its
  // last good checkpoint, and says which file and why. Guarded by out_mtx.
  std::string write_error;
  auto write_failed = [&](const std::string& what) {
    if (write_error.empty())
      write_error = what;
    g_stop.store(true);
  };
  // The run's budget (train.max_minutes, train.max_compiles): what earlier segments of a resumed
  // run spent counts too. The step that reaches it is the last; then the run stops as on Ctrl-C
  // (the trainer saves) and ends as completed. Guarded by out_mtx.
  double spent_seconds = 0;
  long long spent_compiles = 0;
  // The held-out evaluations' own figures (all segments of the run), and the last one's.
  int heldout_runs = 0;
  long long heldout_compiles = 0;
  double heldout_seconds = 0;
  std::string heldout_last;
  if (resume && fs::exists(metrics_path)) {
    // metrics.jsonl was truncated to the checkpoint's step above; `leap report`'s reader reads it.
    if (auto earlier = report::load_run(out_dir)) {
      if (!earlier->steps.empty()) { // the reader's running totals, at the last earlier step
        spent_seconds = earlier->wall_seconds.back();
        spent_compiles = earlier->compile_requests_spent.back();
      }
      for (const auto& row : earlier->steps) {
        if (row.heldout) {
          ++heldout_runs;
          heldout_compiles += row.heldout->compile_requests();
          heldout_seconds += row.heldout->seconds;
        }
      }
    } else {
      std::fprintf(stderr, "leap train: warning: --resume: the budget counts no earlier step: %s\n",
                   earlier.message().c_str());
    }
  }
  std::string budget_reached;
  // Steps in a row in which every attempt was lost to the infrastructure (train.max_lost_steps);
  // the run stops with `infra_error`. Guarded by out_mtx.
  int lost_steps = 0;
  std::string infra_error;
  // Each step's pool retries (the trainer's on_infra, just before its on_report), for its
  // metrics.jsonl row.
  std::map<std::int64_t, actors::step_infra> infra_of;
  td.trainer.on_infra = [&](std::int64_t step, const actors::step_infra& i) {
    std::lock_guard<std::mutex> lk(out_mtx);
    infra_of[step] = i;
  };
  if ((tc.max_minutes > 0 && spent_seconds >= 60 * tc.max_minutes) ||
      (tc.max_compiles > 0 && spent_compiles >= tc.max_compiles)) {
    std::printf("done: the run's budget was already spent (%.1f s of learner steps, %lld compile "
                "requests; train.max_minutes %g, train.max_compiles %d); nothing to do\n",
                spent_seconds, spent_compiles, tc.max_minutes, tc.max_compiles);
    return exit_ok;
  }
  // The compile budget is the learner's to keep: it takes no step past the one that reaches it,
  // though in async mode the next step's groups are usually done by then.
  td.learner.max_compile_requests = tc.max_compiles;
  td.learner.compile_requests_before = spent_compiles;
  td.trainer.on_report = [&](const msg::step_report& r) {
    std::lock_guard<std::mutex> lk(out_mtx);
    if (r.outcome == msg::step_outcome::failed)
      return; // the run ends with this error (below); the step is not recorded
    auto now = std::chrono::steady_clock::now();
    double step_s = std::chrono::duration<double>(now - t_last).count();
    t_last = now;
    double aps = step_s > 0 ? r.attempts / step_s : 0;
    auto nodes = board->get();
    const auto inf = infra_of[r.step];
    infra_of.erase(infra_of.begin(), infra_of.upper_bound(r.step));
    // The held-out evaluation of this step, from its staged checkpoint, before the row is written
    // and the checkpoint promoted: a kill during it leaves neither, and --resume redoes the step.
    // Its time is not the next step's (t_last moves past it) and its compiles are not training's.
    std::optional<heldout_figures> heldout;
    if (tc.eval_every > 0 && r.step % tc.eval_every == 0
        && r.checkpoint == msg::checkpoint_state::saved && !g_stop.load()) {
      const std::string staged = rd.staged_base() + "." + std::to_string(r.step);
      // On a thread of its own: the evaluation runs a pipeline (an actor system) of its own.
      auto h = std::async(std::launch::async, [&] {
                 return evaluate_heldout(svc, staged, heldout_tasks);
               }).get();
      t_last = std::chrono::steady_clock::now();
      if (h) {
        heldout = std::move(*h);
        ++heldout_runs;
        heldout_compiles += heldout->compile_requests();
        heldout_seconds += heldout->seconds;
        heldout_last = heldout_line(*heldout);
      } else {
        std::fprintf(stderr, "leap train: warning: step %lld: %s\n",
                     static_cast<long long>(r.step), h.message().c_str());
      }
    }
    if (auto w = metrics.write_step(r, step_s, aps, {inf.compile_retried, inf.execute_retried},
                                    nodes ? &*nodes : nullptr, heldout ? &*heldout : nullptr);
        !w)
      write_failed(w.message());
    if (r.checkpoint == msg::checkpoint_state::saved && write_error.empty())
      if (auto c = rd.promote(r.step); !c)
        write_failed("checkpoint not saved: " + c.message());
    char util[32];
    std::snprintf(util, sizeof util, "%.0f/%.0f/%.0f", 100 * r.util_generate,
                  100 * r.util_compile, 100 * r.util_execute);
    std::printf("%5lld %6.3f %6.3f %6.3f %5.0f %8u %6u %6u %4u %8.2f %14s %9.4f %8.5f %4lld %7.1f\n",
                static_cast<long long>(r.step), r.acc_at_1, r.acc_at_2, r.acc_at_3,
                100 * r.activated_groups, r.compiles, r.cache_hits, r.cancelled, r.dropped, aps,
                util, r.loss, r.kl, static_cast<long long>(r.policy_version), step_s);
    if (nodes)
      std::printf("%s\n", nodes_line(*nodes).c_str());
    if (heldout)
      std::printf("%s\n", heldout_line(*heldout).c_str());
    std::fflush(stdout);
    spent_seconds += step_s;
    spent_compiles += r.compile_requests();
    lost_steps = r.attempts > 0 && r.dropped >= r.attempts ? lost_steps + 1 : 0;
    if (tc.max_lost_steps > 0 && lost_steps >= tc.max_lost_steps && infra_error.empty()) {
      infra_error = "step " + std::to_string(r.step) + " lost all " + std::to_string(r.attempts)
                    + " attempts to the infrastructure"
                    + (lost_steps > 1 ? " (" + std::to_string(lost_steps) + " such steps in a row)"
                                      : std::string())
                    + ": nothing was compiled, run or judged (train.max_lost_steps = "
                    + std::to_string(tc.max_lost_steps) + "); see the log above for what failed "
                    + "(a lost node, a sandbox that cannot start, ...)";
      g_stop.store(true);
    }
    if (budget_reached.empty()) {
      char why[160] = "";
      if (tc.max_minutes > 0 && spent_seconds >= 60 * tc.max_minutes)
        std::snprintf(why, sizeof why, "train.max_minutes = %g reached (%.1f s of learner steps)",
                      tc.max_minutes, spent_seconds);
      else if (r.budget_spent) // the learner's decision, on the same count as spent_compiles
        std::snprintf(why, sizeof why, "train.max_compiles = %d reached (%lld compile requests)",
                      tc.max_compiles, spent_compiles);
      if (*why) {
        budget_reached = std::string(why) + " at step " + std::to_string(r.step);
        // A spent compile budget needs no stop: the learner takes no further step and the
        // trainer ends the run with this one.
        if (!r.budget_spent)
          g_stop.store(true);
      }
    }
  };
  td.trainer.on_saved = [&](const result<msg::checkpoint_saved>& r, bool final) {
    std::lock_guard<std::mutex> lk(out_mtx);
    if (!r) {
      std::fprintf(stderr, "leap train: checkpoint not saved: %s\n", r.message().c_str());
      if (!final)
        write_failed("checkpoint not saved: " + r.message());
    } else if (final)
      std::printf("checkpoint of step %lld saved to %s\n", static_cast<long long>(r->step),
                  ck_dir.c_str());
  };
  d.train = std::move(td);

  g_stop.store(false);
  auto old = std::signal(SIGINT, on_sigint);
  auto old_term = std::signal(SIGTERM, on_sigint);
  actors::run_end end;
  {
    auto p = pipeline::spawn(std::move(d));
    if (!p) {
      std::signal(SIGINT, old);
      std::signal(SIGTERM, old_term);
      std::fprintf(stderr, "leap train: %s\n", p.message().c_str());
      return cluster_cannot_start(p.message()) ? exit_usage : exit_failed;
    }
    end = (*p)->wait(&g_stop).end;
  }
  std::signal(SIGINT, old);
  std::signal(SIGTERM, old_term);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (!write_error.empty()) {
    auto st = rd.checkpoint_step();
    std::fprintf(stderr,
                 "leap train: %s\nleap train: the run stopped; the last good checkpoint is %s "
                 "in %s; free space (or raise the file-size limit) and continue with --resume\n",
                 write_error.c_str(), st ? ("of step " + std::to_string(*st)).c_str() : "none",
                 ck_dir.c_str());
    return exit_failed;
  }
  // The run's page (`leap report` of this run), also after Ctrl-C or a failed step.
  metrics.flush();
  const std::string report_path = rd.report_path();
  if (heldout_runs > 0)
    std::printf("held-out evaluation: %d run(s), %lld compile requests and %.1f s apart from "
                "training's; last:\n%s\n", heldout_runs, heldout_compiles, heldout_seconds,
                heldout_last.empty() ? "      (in an earlier segment of the run)" : heldout_last.c_str());
  if (auto r = report::write_report({out_dir}, report_path); !r)
    std::fprintf(stderr, "leap train: warning: report.html not written: %s\n", r.message().c_str());
  if (!infra_error.empty()) {
    std::fprintf(stderr,
                 "leap train: %s\nleap train: the run stopped; the learner's state is saved in %s "
                 "(continue with --resume once the cause is fixed)\n",
                 infra_error.c_str(), ck_dir.c_str());
    return exit_failed;
  }
  // A spent compile budget ends the run as completed (the learner stopped itself), a spent time
  // budget as interrupted (the stop came from here): either way the budget is what ended it.
  if (!budget_reached.empty() && end.end != actors::run_end::how::failed) {
    std::printf("done: budget %s; checkpoint in %s (%.1f s); metrics in %s, charts in %s\n",
                budget_reached.c_str(), ck_dir.c_str(), total, metrics_path.c_str(),
                report_path.c_str());
    return exit_ok;
  }
  switch (end.end) {
    case actors::run_end::how::interrupted:
      std::printf("interrupted: state saved in %s; continue with --resume (%.1f s)\n",
                  ck_dir.c_str(), total);
      return 130;
    case actors::run_end::how::failed:
      std::fprintf(stderr, "leap train: %s\nleap train: the run stopped; the learner's state is "
                           "saved in %s with the last completed step (--resume redoes the "
                           "failed one once the cause is fixed)\n",
                   end.error.c_str(), ck_dir.c_str());
      return exit_failed;
    case actors::run_end::how::completed: break;
  }
  std::printf("done: %d steps in %.1f s; metrics in %s, groups in %s, charts in %s\n", tc.steps,
              total, metrics_path.c_str(), groups_path.c_str(), report_path.c_str());
  return exit_ok;
}

} // namespace leap::runtime
