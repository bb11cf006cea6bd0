#include "runtime/train.hpp"

#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/strings.hpp"
#include "policy/policy_model.hpp"
#include "runtime/pretrain.hpp"
#include "runtime/train_pipeline.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace fs = std::filesystem;

namespace leap::runtime {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

bool is_checkpoint(const std::string& dir) {
  return fs::exists(dir + "/config.json") && fs::exists(dir + "/model.safetensors");
}

// Keeps the lines of metrics.jsonl up to `step` (a resumed run redoes what came after).
result<void> truncate_metrics(const std::string& path, std::int64_t step) {
  if (!fs::exists(path))
    return {};
  auto text = read_file(path);
  if (!text)
    return text.err();
  std::string kept;
  for (auto& line : split_lines(*text)) {
    if (trim(line).empty())
      continue;
    try {
      auto j = nlohmann::json::parse(line);
      if (j.at("step").get<std::int64_t>() <= step)
        kept += line + "\n";
    } catch (const std::exception&) {
      // a line cut by a kill: dropped
    }
  }
  return write_file_atomic(path, kept);
}

nlohmann::json report_json(const msg::step_report& r, double step_seconds, double attempts_per_s) {
  return nlohmann::json{{"step", r.step},
                        {"acc_at_1", r.acc_at_1},
                        {"acc_at_2", r.acc_at_2},
                        {"acc_at_3", r.acc_at_3},
                        {"turns_per_pass", r.turns_per_pass},
                        {"activated_groups", r.activated_groups},
                        {"compiles", r.compiles},
                        {"cache_hits", r.cache_hits},
                        {"cancelled", r.cancelled},
                        {"compiles_later_turns", r.compiles_later_turns},
                        {"attempts", r.attempts},
                        {"attempts_per_second", attempts_per_s},
                        {"step_seconds", step_seconds},
                        {"learn_seconds", r.learn_seconds},
                        {"loss", r.loss},
                        {"pg_loss", r.pg_loss},
                        {"kl", r.kl},
                        {"clip_fraction", r.clip_fraction},
                        {"grad_norm", r.grad_norm},
                        {"tokens", r.tokens},
                        {"sequences", r.sequences},
                        {"max_lag", r.max_lag},
                        {"util_generate", r.util_generate},
                        {"util_compile", r.util_compile},
                        {"util_execute", r.util_execute},
                        {"policy_version", r.policy_version},
                        {"tasks", r.tasks},
                        {"epochs", r.epochs}};
}

} // namespace

int cmd_train(services& svc, const std::string& out_dir, bool resume) {
  const auto& cfg = svc.cfg;
  const auto& tc = cfg.train;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "leap train: cannot create %s: %s\n", out_dir.c_str(), ec.message().c_str());
    return 1;
  }
  const std::string ck_dir = out_dir + "/checkpoint";
  const std::string metrics_path = out_dir + "/metrics.jsonl";
  // The task list.
  std::vector<std::string> tasks = tc.tasks;
  if (tasks.empty())
    for (auto& [name, t] : *svc.tasks)
      tasks.push_back(name);
  for (auto& t : tasks)
    if (!svc.tasks->count(t)) {
      std::fprintf(stderr, "leap train: train.tasks: unknown task '%s'\n", t.c_str());
      return 2;
    }
  pipeline_setup setup;
  setup.tasks = tasks;
  setup.checkpoint_out = ck_dir;
  // Warm start: the pretrain checkpoint, made now when missing.
  std::string warm = tc.warm_start.empty() ? out_dir + "/pretrain" : tc.warm_start;
  setup.reference_checkpoint = warm;
  if (resume) {
    if (!is_checkpoint(ck_dir)) {
      std::fprintf(stderr, "leap train: --resume: no checkpoint in %s\n", ck_dir.c_str());
      return 2;
    }
    auto st = read_file(ck_dir + "/trainer_state.json");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(st ? *st : std::string("{}"));
      setup.start_step = j.at("step").get<std::int64_t>();
      auto extra = j.at("extra");
      if (extra.at("tasks").get<std::vector<std::string>>() != tasks) {
        std::fprintf(stderr, "leap train: --resume: the checkpoint was trained on other tasks "
                             "(train.tasks differs); resume with the same configuration\n");
        return 2;
      }
      if (!actors::progress_from_json(extra.at("progress").dump(), setup.progress))
        throw std::runtime_error("bad progress record");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "leap train: --resume: %s/trainer_state.json: %s\n", ck_dir.c_str(), e.what());
      return 2;
    }
    setup.start_checkpoint = ck_dir;
    setup.resume = true;
    if (auto r = truncate_metrics(metrics_path, setup.start_step); !r) {
      std::fprintf(stderr, "leap train: %s\n", r.message().c_str());
      return 1;
    }
    std::printf("resuming at step %lld from %s\n", static_cast<long long>(setup.start_step), ck_dir.c_str());
  } else {
    if (is_checkpoint(ck_dir)) {
      std::fprintf(stderr, "leap train: %s already holds a run; continue it with --resume or "
                           "choose another --out\n", out_dir.c_str());
      return 2;
    }
    if (fs::exists(metrics_path)) {
      // A run that ended before its first checkpoint: nothing to continue, start over.
      std::printf("%s has no checkpoint: its metrics.jsonl is from a run that saved nothing; "
                  "starting over\n", out_dir.c_str());
      fs::remove(metrics_path, ec);
    }
    if (!is_checkpoint(warm)) {
      if (!tc.warm_start.empty()) {
        std::fprintf(stderr, "leap train: train.warm_start = %s is not a checkpoint directory\n",
                     warm.c_str());
        return 2;
      }
      std::printf("no warm-start checkpoint in %s: running leap pretrain first\n", warm.c_str());
      auto p = pretrain(svc, warm, true);
      if (!p) {
        std::fprintf(stderr, "leap train: pretrain: %s\n", p.message().c_str());
        return 1;
      }
    }
    setup.start_checkpoint = warm;
  }
  setup.tokenizer_path = setup.start_checkpoint + "/tokenizer.json";
  nlohmann::json extra{{"tasks", tasks}, {"seed", tc.seed}, {"warm_start", warm}};
  setup.extra_json = extra.dump();

  std::ofstream metrics(metrics_path, std::ios::app);
  if (!metrics) {
    std::fprintf(stderr, "leap train: cannot write %s\n", metrics_path.c_str());
    return 1;
  }
  std::printf("leap train: %d steps of B=%d groups x G=%d, up to %d turns, %s mode, DCP %s, "
              "estimator %s, backend %s, %zu tasks\n",
              tc.steps, tc.batch_groups, tc.group_size, tc.max_turns, tc.mode.c_str(),
              tc.dcp ? "on" : "off", tc.estimator.c_str(), svc.backend.c_str(), tasks.size());
  std::printf("%5s %6s %6s %6s %5s %8s %6s %6s %8s %14s %9s %8s %4s %7s\n", "step", "acc@1",
              "acc@2", "acc@3", "act%", "compiles", "hits", "cancel", "att/s", "util g/c/e %",
              "loss", "kl", "ver", "step_s");
  std::fflush(stdout);
  auto t_start = std::chrono::steady_clock::now();
  auto t_last = t_start;
  std::mutex out_mtx;
  setup.on_report = [&](const msg::step_report& r) {
    std::lock_guard<std::mutex> lk(out_mtx);
    auto now = std::chrono::steady_clock::now();
    double step_s = std::chrono::duration<double>(now - t_last).count();
    t_last = now;
    double aps = step_s > 0 ? r.attempts / step_s : 0;
    metrics << dump_lossy(report_json(r, step_s, aps)) << "\n";
    metrics.flush();
    char util[32];
    std::snprintf(util, sizeof util, "%.0f/%.0f/%.0f", 100 * r.util_generate,
                  100 * r.util_compile, 100 * r.util_execute);
    std::printf("%5lld %6.3f %6.3f %6.3f %5.0f %8u %6u %6u %8.2f %14s %9.4f %8.5f %4lld %7.1f\n",
                static_cast<long long>(r.step), r.acc_at_1, r.acc_at_2, r.acc_at_3,
                100 * r.activated_groups, r.compiles, r.cache_hits, r.cancelled, aps, util, r.loss,
                r.kl, static_cast<long long>(r.policy_version), step_s);
    std::fflush(stdout);
  };
  setup.on_saved = [&](const std::string& err, bool final) {
    std::lock_guard<std::mutex> lk(out_mtx);
    if (!err.empty())
      std::fprintf(stderr, "leap train: checkpoint not saved: %s\n", err.c_str());
    else if (final)
      std::printf("checkpoint saved to %s\n", ck_dir.c_str());
  };
  // One compute thread per role (generators, learner): on a small machine they run side by side
  // instead of contending for the same cores.
  policy::set_torch_threads(1);
  g_stop.store(false);
  setup.stop = &g_stop;
  auto old = std::signal(SIGINT, on_sigint);
  auto old_term = std::signal(SIGTERM, on_sigint);
  auto r = run_pipeline(svc, setup);
  std::signal(SIGINT, old);
  std::signal(SIGTERM, old_term);
  if (!r) {
    std::fprintf(stderr, "leap train: %s\n", r.message().c_str());
    return 1;
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (*r == "interrupted") {
    std::printf("interrupted: state saved in %s; continue with --resume (%.1f s)\n", ck_dir.c_str(), total);
    return 130;
  }
  std::printf("done: %d steps in %.1f s; metrics in %s\n", tc.steps, total, metrics_path.c_str());
  return 0;
}

} // namespace leap::runtime
