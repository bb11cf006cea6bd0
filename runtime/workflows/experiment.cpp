// The experiment workflow: see experiment.hpp. The [experiment] reader, the figures of a finished
// run and the result files are experiment_data.cpp and experiment_results.cpp. Main thread only.
#include "runtime/workflows/experiment.hpp"
#include "runtime/workflows/exit_status.hpp"
#include "runtime/workflows/experiment_data.hpp"

#include "common/dir_lock.hpp"
#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/spawn.hpp"
#include "common/strings.hpp"
#include "leap/build_info.hpp"
#include "policy/model/checkpoint_verify.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace fs = std::filesystem;

namespace leap::runtime::experiment {

namespace {

namespace ex = leap::runtime::experiment;

std::atomic<bool> g_interrupted{false};
std::atomic<pid_t> g_child{0};
// Ctrl-C or SIGTERM: stop after the running child, and pass the signal on to it (a kill of the
// parent alone would otherwise leave `leap train` running to its budget): `leap train` saves its
// checkpoint and exits 130.
extern "C" void on_experiment_signal(int sig) {
  g_interrupted.store(true);
  if (pid_t p = g_child.load(); p > 0)
    ::kill(p, sig);
}

// Runs this binary with `args`, stdout and stderr to files; returns its exit status (128 + signal
// when killed), or -1 when it could not start.
int run_child(const std::vector<std::string>& args, const std::string& out_path,
              const std::string& err_path) {
  spawn_spec spec;
  spec.argv = {"leap"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.program = "/proc/self/exe";
  spec.stdout_path = out_path;
  spec.stderr_path = err_path;
  spec.append = true;
  auto pid = spawn_child(spec);
  if (!pid)
    return -1;
  g_child.store(*pid);
  if (g_interrupted.load()) // a signal that came before the child's pid was known
    ::kill(*pid, SIGINT);
  auto code = wait_child(*pid);
  g_child.store(0);
  return code ? *code : -1;
}

// The source tree's commit (git rev-parse), "+dirty" when it has uncommitted changes; "unknown"
// without git. Read at run time from the tree this binary was built from.
std::string source_commit() {
  const char* home = std::getenv("LEAP_HOME");
  const std::string dir = home && *home ? home : build_info::source_dir;
  auto run = [&](const std::string& cmd) {
    std::string out;
    if (FILE* p = ::popen(("git -C " + shell_quote(dir) + " " + cmd + " 2>/dev/null").c_str(), "r")) {
      char buf[256];
      while (std::fgets(buf, sizeof buf, p))
        out += buf;
      ::pclose(p);
    }
    return std::string(trim(out));
  };
  auto head = run("rev-parse --short=12 HEAD");
  if (head.empty())
    return "unknown";
  return run("status --porcelain --untracked-files=no").empty() ? head : head + "+dirty";
}

bool is_checkpoint(const std::string& dir) {
  return fs::exists(dir + "/config.json") && fs::exists(dir + "/model.safetensors");
}

std::string clock_text(double s) {
  long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

// A number as %g writes it (0.05, 2, 1.5).
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The last non-empty line of a file.
std::string last_line(const std::string& path) {
  auto text = read_file(path);
  if (!text)
    return "";
  auto lines = split_lines(*text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim(*it).empty())
      return *it;
  return "";
}

struct job {
  const ex::arm* a;
  std::int64_t seed;
  std::string dir;
};

// The warm start's own evaluation into `warm_eval`, the row every arm's change is measured
// from: made once with the runs' eval (OUT/warm_start_eval.json), redone when that eval's
// configuration changed. An exit status (exit_ok when there is one).
int evaluate_warm_start(const config::leap_config& base, const ex::spec& spec,
                        const std::string& warm, const std::string& out,
                        std::optional<ex::run_result>& warm_eval) {
  const auto wcfg = ex::warm_start_eval_config(base, spec);
  const std::string hash = ex::config_hash(wcfg);
  const std::string path = out + "/warm_start_eval.json";
  if (auto kept_eval = ex::read_warm_start_eval(path); kept_eval && kept_eval->config_hash == hash) {
    warm_eval = std::move(*kept_eval);
    std::printf("warm start evaluation: kept (eval Acc@1 %.3f)\n", warm_eval->acc1);
  } else {
    std::printf("warm start evaluation: leap eval --checkpoint %s (log %s/warm_start_eval.log)\n",
                warm.c_str(), out.c_str());
    std::fflush(stdout);
    const std::string cfg_path = out + "/warm_start_eval.toml";
    if (auto w = write_file_atomic(cfg_path, config::to_toml(wcfg)); !w) {
      std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
      return exit_failed;
    }
    int rc = run_child({"--config", cfg_path, "eval", "--checkpoint", warm, "--json"},
                       out + "/warm_start_eval.out", out + "/warm_start_eval.log");
    if (g_interrupted.load() || rc == 130) {
      std::printf("warm start evaluation: interrupted; rerun the same command to continue\n");
      return 130;
    }
    auto ej = nlohmann::json::parse(last_line(out + "/warm_start_eval.out"), nullptr, false);
    if (rc != 0 || ej.is_discarded() || !ej.is_object() || !ej.contains("acc_at_1")) {
      std::fprintf(stderr, "leap experiment: the warm start's evaluation failed (exit %d); see "
                           "%s/warm_start_eval.log\n", rc, out.c_str());
      return exit_failed;
    }
    ej.erase("per_task"); // kept in warm_start_eval.out
    nlohmann::json rec{{"complete", true}, {"config_hash", hash}, {"warm_start", warm}, {"eval", ej}};
    if (auto w = write_file_atomic(path, dump_lossy(rec) + "\n"); !w) {
      std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
      return exit_failed;
    }
    auto back = ex::read_warm_start_eval(path);
    if (!back) {
      std::fprintf(stderr, "leap experiment: %s\n", back.message().c_str());
      return exit_failed;
    }
    warm_eval = std::move(*back);
    std::printf("warm start evaluation: eval Acc@1/2/3 %.3f/%.3f/%.3f\n", warm_eval->acc1,
                warm_eval->acc2, warm_eval->acc3);
  }
  std::fflush(stdout);
  return exit_ok;
}

} // namespace

int run(const request& req) {
  const std::string& file = req.config_file;
  const config::leap_config& base = req.base;
  auto spec_r = ex::load_spec(file, base);
  if (!spec_r) {
    std::fprintf(stderr, "leap experiment: %s\n", spec_r.message().c_str());
    return exit_usage;
  }
  const auto& spec = *spec_r;
  std::error_code ec;
  const std::string out = fs::absolute(req.out_dir, ec).lexically_normal().string();
  fs::create_directories(out + "/runs", ec);
  if (ec) {
    std::fprintf(stderr, "leap experiment: cannot create %s: %s\n", out.c_str(), ec.message().c_str());
    return exit_failed;
  }
  auto lock = dir_lock::acquire(out, "leap experiment");
  if (!lock) {
    std::fprintf(stderr, "leap experiment: %s\n", lock.message().c_str());
    return exit_failed;
  }
  const std::string commit = source_commit();
  g_interrupted.store(false);
  auto old_int = std::signal(SIGINT, on_experiment_signal);
  auto old_term = std::signal(SIGTERM, on_experiment_signal);
  struct restore {
    void (*i)(int);
    void (*t)(int);
    ~restore() {
      std::signal(SIGINT, i);
      std::signal(SIGTERM, t);
    }
  } restore_signals{old_int, old_term};

  // The warm start: the file's train.warm_start, else DIR/warm_start (made below when missing).
  std::string warm = base.train.warm_start;
  const bool own_warm = warm.empty();
  if (own_warm)
    warm = out + "/warm_start";
  std::vector<job> jobs;
  for (auto seed : spec.seeds)
    for (auto& a : spec.arms)
      jobs.push_back({&a, seed, out + "/runs/" + a.name + "/seed" + std::to_string(seed)});
  std::printf("leap experiment: %zu arms x %zu seeds = %zu runs in %s (commit %s); budget per "
              "run: %s; eval seed %lld\n",
              spec.arms.size(), spec.seeds.size(), jobs.size(), out.c_str(), commit.c_str(),
              spec.max_minutes > 0 || spec.max_compiles > 0
                ? ((spec.max_minutes > 0 ? number_text(spec.max_minutes) + " min" : "")
                   + (spec.max_minutes > 0 && spec.max_compiles > 0 ? " or " : "")
                   + (spec.max_compiles > 0 ? std::to_string(spec.max_compiles) + " compile requests" : ""))
                    .c_str()
                : ("train.steps = " + std::to_string(base.train.steps)).c_str(),
              static_cast<long long>(spec.eval_seed));
  std::fflush(stdout);

  // Finished runs are kept; their config must still be this file's, or the table would mix two.
  std::vector<bool> done(jobs.size(), false);
  std::vector<ex::run_result> results(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto r = ex::read_run_result(jobs[i].dir);
    if (!r)
      continue;
    auto cfg = ex::run_config(base, spec, *jobs[i].a, jobs[i].seed, warm);
    if (!cfg) {
      std::fprintf(stderr, "leap experiment: %s\n", cfg.message().c_str());
      return exit_usage;
    }
    if (r->config_hash != ex::config_hash(*cfg)) {
      std::fprintf(stderr, "leap experiment: %s was run with another configuration (config hash "
                           "%s, now %s): the file or --set changed since; use another --out, or "
                           "remove that run directory to redo it\n",
                   jobs[i].dir.c_str(), r->config_hash.c_str(), ex::config_hash(*cfg).c_str());
      return exit_usage;
    }
    results[i] = std::move(*r);
    done[i] = true;
  }
  std::size_t kept = static_cast<std::size_t>(std::count(done.begin(), done.end(), true));
  if (kept)
    std::printf("resuming: %zu of %zu runs finished earlier are kept\n", kept, jobs.size());

  std::optional<ex::run_result> warm_eval; // the warm start's own evaluation, made below
  auto write_results = [&]() -> bool {
    std::vector<ex::run_result> finished;
    std::vector<std::string> dirs;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (done[i]) {
        finished.push_back(results[i]);
        dirs.push_back(jobs[i].dir);
      }
    const ex::run_result* warm_row = warm_eval ? &*warm_eval : nullptr;
    auto sums = ex::summarise(spec, finished, warm_row);
    std::vector<std::string> commits, suites;
    for (auto& r : finished) {
      if (std::find(commits.begin(), commits.end(), r.commit) == commits.end())
        commits.push_back(r.commit);
      if (std::find(suites.begin(), suites.end(), r.task_suite) == suites.end())
        suites.push_back(r.task_suite);
    }
    std::vector<std::string> meta = {
      "config: " + file + "; " + std::to_string(finished.size()) + " of "
        + std::to_string(jobs.size()) + " runs finished",
      "budget per run: "
        + (spec.max_minutes > 0 ? number_text(spec.max_minutes) + " min of learner steps " : "")
        + (spec.max_compiles > 0 ? std::to_string(spec.max_compiles) + " compile requests " : "")
        + "(train.steps = " + std::to_string(base.train.steps) + " at most); eval seed "
        + std::to_string(spec.eval_seed) + ", eval.group_size " + std::to_string(base.eval.group_size)
        + ", eval.max_turns " + std::to_string(base.eval.max_turns),
      "warm start: " + warm,
      "commit(s): " + (commits.empty() ? std::string("none yet") : join(commits, ", ")),
      "task suite(s): " + (suites.empty() ? std::string("none yet") : join(suites, ", "))};
    bool ok = true;
    auto put = [&](const std::string& name, const std::string& text) {
      if (auto w = write_file_atomic(out + "/" + name, text); !w) {
        std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
        ok = false;
      }
    };
    put("table.md", ex::render_table_md(spec, sums, meta, warm_row));
    put("results.csv", ex::render_results_csv(spec, sums));
    put("runs.csv", ex::render_runs_csv(finished));
    put("report.html", ex::render_html(spec, sums, meta, finished, dirs, warm_row));
    return ok;
  };

  if (!own_warm && !base.train.warm_start_sha256.empty())
    if (auto v = policy::verify_pinned_checkpoint(warm, base.train.warm_start_sha256); !v) {
      std::fprintf(stderr, "leap experiment: train.warm_start_sha256: %s\n", v.message().c_str());
      return exit_usage;
    }
  // The warm start, made once.
  if (!is_checkpoint(warm)) {
    if (!own_warm) {
      std::fprintf(stderr, "leap experiment: train.warm_start = %s is not a checkpoint directory\n",
                   warm.c_str());
      return exit_usage;
    }
    const std::string tmp = out + "/warm_start.partial";
    fs::remove_all(tmp, ec);
    if (auto w = write_file_atomic(out + "/warm_start.toml", config::to_toml(base)); !w) {
      std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
      return exit_failed;
    }
    std::printf("warm start: leap pretrain into %s (log %s/warm_start.log)\n", warm.c_str(),
                out.c_str());
    std::fflush(stdout);
    auto t0 = std::chrono::steady_clock::now();
    int rc = run_child({"--config", out + "/warm_start.toml", "pretrain", "--out", tmp},
                       out + "/warm_start.log", out + "/warm_start.log");
    if (rc != 0 || g_interrupted.load() || !is_checkpoint(tmp)) {
      std::fprintf(stderr, "leap experiment: the warm start failed (exit %d); see %s/warm_start.log\n",
                   rc, out.c_str());
      return rc == 130 || g_interrupted.load() ? 130 : exit_failed;
    }
    fs::rename(tmp, warm, ec);
    if (ec) {
      std::fprintf(stderr, "leap experiment: %s: %s\n", warm.c_str(), ec.message().c_str());
      return exit_failed;
    }
    std::printf("warm start: done in %s\n",
                clock_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()).c_str());
  } else {
    std::printf("warm start: %s (kept)\n", warm.c_str());
    // Made by an earlier invocation with another config (e.g. [policy] or [sft] edited since)?
    if (own_warm)
      if (auto made_with = read_file(out + "/warm_start.toml");
          made_with && *made_with != config::to_toml(base))
        std::fprintf(stderr, "leap experiment: warning: %s was made with another configuration "
                             "(%s/warm_start.toml differs from the file's now); remove it to "
                             "make it again\n", warm.c_str(), out.c_str());
  }
  std::fflush(stdout);

  if (int rc = evaluate_warm_start(base, spec, warm, out, warm_eval); rc != exit_ok)
    return rc;

  std::vector<std::string> failed;
  double spent = 0;
  int ran = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "] "
                            + j.a->name + " seed " + std::to_string(j.seed);
    if (done[i]) {
      std::printf("%s: finished earlier, kept (eval Acc@1 %.3f)\n", tag.c_str(), results[i].acc1);
      continue;
    }
    auto cfg = ex::run_config(base, spec, *j.a, j.seed, warm);
    if (!cfg) {
      std::fprintf(stderr, "leap experiment: %s\n", cfg.message().c_str());
      return exit_usage;
    }
    // A half run (killed, failed) is redone from scratch.
    if (fs::exists(j.dir)) {
      std::printf("%s: an unfinished run is there; starting it over\n", tag.c_str());
      fs::remove_all(j.dir, ec);
    }
    fs::create_directories(j.dir, ec);
    const std::string cfg_path = j.dir + "/config.toml";
    if (auto w = write_file_atomic(cfg_path, config::to_toml(*cfg)); !w) {
      std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
      return exit_failed;
    }
    const std::size_t left = static_cast<std::size_t>(std::count(done.begin() + static_cast<long>(i), done.end(), false));
    std::string eta = ran ? "ETA " + clock_text(spent / ran * static_cast<double>(left)) : "ETA after the first run";
    std::printf("%s: training (log %s/train.log); %s\n", tag.c_str(), j.dir.c_str(), eta.c_str());
    std::fflush(stdout);
    auto t0 = std::chrono::steady_clock::now();
    int rc = run_child({"--config", cfg_path, "train", "--out", j.dir}, j.dir + "/train.log",
                       j.dir + "/train.log");
    if (g_interrupted.load() || rc == 130) {
      std::printf("%s: interrupted; rerun the same command to continue (this run starts over)\n",
                  tag.c_str());
      write_results();
      return 130;
    }
    if (rc != 0 || !is_checkpoint(j.dir + "/checkpoint")) {
      std::fprintf(stderr, "%s: leap train failed (exit %d); see %s/train.log\n", tag.c_str(), rc,
                   j.dir.c_str());
      failed.push_back(j.dir);
      continue;
    }
    std::printf("%s: evaluating the final checkpoint\n", tag.c_str());
    std::fflush(stdout);
    rc = run_child({"--config", cfg_path, "eval", "--checkpoint", j.dir + "/checkpoint", "--json"},
                   j.dir + "/eval.out", j.dir + "/eval.log");
    if (g_interrupted.load() || rc == 130) {
      std::printf("%s: interrupted; rerun the same command to continue (this run starts over)\n",
                  tag.c_str());
      write_results();
      return 130;
    }
    auto ej = nlohmann::json::parse(last_line(j.dir + "/eval.out"), nullptr, false);
    if (rc != 0 || ej.is_discarded() || !ej.is_object() || !ej.contains("acc_at_1")) {
      std::fprintf(stderr, "%s: leap eval failed (exit %d); see %s/eval.log\n", tag.c_str(), rc,
                   j.dir.c_str());
      failed.push_back(j.dir);
      continue;
    }
    ex::run_result r;
    r.arm = j.a->name;
    r.seed = j.seed;
    if (auto t = ex::add_training_figures(j.dir, spec.target_acc1, r); !t) {
      std::fprintf(stderr, "%s: %s\n", tag.c_str(), t.message().c_str());
      failed.push_back(j.dir);
      continue;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ej.erase("per_task"); // kept in eval.out
    nlohmann::json rec{
      {"complete", true},
      {"arm", j.a->name},
      {"label", j.a->label},
      {"seed", j.seed},
      {"commit", commit},
      {"config_hash", ex::config_hash(*cfg)},
      {"task_suite", ej.value("task_suite", "")},
      {"warm_start", warm},
      {"checkpoint", j.dir + "/checkpoint"},
      {"seconds", seconds},
      {"finished_at", static_cast<long long>(std::time(nullptr))},
      {"eval", ej},
      {"train",
       {{"steps", r.steps},
        {"minutes", r.train_minutes},
        {"activated_groups", r.activated},
        {"recovery", r.recovery ? nlohmann::json(*r.recovery) : nlohmann::json()},
        {"compile_requests_turn1", r.compiles_turn1},
        {"compile_requests_later", r.compiles_later},
        {"target_acc1", spec.target_acc1},
        {"minutes_to_target",
         r.minutes_to_target ? nlohmann::json(*r.minutes_to_target) : nlohmann::json()},
        {"heldout_acc1", r.heldout_acc1 ? nlohmann::json(*r.heldout_acc1) : nlohmann::json()},
        {"heldout_acc3", r.heldout_acc3 ? nlohmann::json(*r.heldout_acc3) : nlohmann::json()},
        {"heldout_compiles",
         r.heldout_compiles ? nlohmann::json(*r.heldout_compiles) : nlohmann::json()}}}};
    if (auto w = write_file_atomic(j.dir + "/eval.json", dump_lossy(rec) + "\n"); !w) {
      std::fprintf(stderr, "leap experiment: %s\n", w.message().c_str());
      return exit_failed;
    }
    auto back = ex::read_run_result(j.dir);
    if (!back) {
      std::fprintf(stderr, "leap experiment: %s\n", back.message().c_str());
      return exit_failed;
    }
    results[i] = std::move(*back);
    done[i] = true;
    spent += seconds;
    ++ran;
    const std::size_t remaining = static_cast<std::size_t>(std::count(done.begin(), done.end(), false)) - failed.size();
    std::printf("%s: done in %s: %lld steps, eval Acc@1/2/3 %.3f/%.3f/%.3f, turns/pass %.2f; "
                "%zu run(s) left, ETA %s\n",
                tag.c_str(), clock_text(seconds).c_str(), results[i].steps, results[i].acc1,
                results[i].acc2, results[i].acc3, results[i].turns_per_pass, remaining,
                clock_text(spent / ran * static_cast<double>(remaining)).c_str());
    std::fflush(stdout);
    write_results();
  }
  bool ok = write_results();
  std::printf("results: %s/table.md, %s/results.csv, %s/runs.csv, %s/report.html\n", out.c_str(),
              out.c_str(), out.c_str(), out.c_str());
  if (!failed.empty()) {
    std::fprintf(stderr, "leap experiment: %zu run(s) failed (rerun the command to retry them): %s\n",
                 failed.size(), join(failed, ", ").c_str());
    return exit_failed;
  }
  return ok ? exit_ok : exit_failed;
}

} // namespace leap::runtime::experiment
