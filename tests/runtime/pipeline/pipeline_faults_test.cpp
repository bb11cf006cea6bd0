// The one pipeline assembly (runtime/pipeline/assembly.hpp) with the real gatekeeper, judge,
// GRPO learner (a tiny fresh policy) and trainer, the real supervised pools, and test-only job
// runners that fail on demand (kept here, under tests/): a compile that fails inside leap on
// every try, one that fails once, one whose worker dies once, a run that fails on every try.
//  - every step completes (batch_order = admission, where a stuck group used to stall the
//    trainer), infrastructure failures are retried once and then drop their attempt, which is
//    counted and gets no advantage, and a group whose every attempt was dropped still finishes;
//  - a learner step that fails ends the run with its error and a saved checkpoint, and the
//    policy version is not bumped.
#include "actors/supervised_pool.hpp"
#include "common/fs.hpp"
#include "policy/policy_model.hpp"
#include "runtime/pipeline/assembly.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <mutex>

using namespace leap;
namespace fs = std::filesystem;

namespace {

// What each turn-1 attempt of a task's group writes, by attempt index; later turns write "OK".
const std::map<std::string, std::vector<std::string>> scripts = {
  {"mixed", {"OK", "BAD", "CFAIL_ALWAYS", "CFAIL_ONCE_OK", "CDIE_ONCE", "EFAIL_ALWAYS"}},
  {"all_lost", {"CFAIL_ALWAYS", "CFAIL_ALWAYS", "EFAIL_ALWAYS", "CFAIL_ALWAYS", "EFAIL_ALWAYS",
                "CFAIL_ALWAYS"}},
};

std::string fenced(const std::string& code) { return "```cuda\n" + code + "\n```"; }

std::vector<int> bytes_of(const std::string& s) { return std::vector<int>(s.begin(), s.end()); }

// The prompt names the task and the turn; the generator reads them back.
actors::prompt_codec test_codec() {
  actors::prompt_codec c;
  c.encode = [](const std::string& task, const std::vector<std::string>& codes,
                const std::vector<std::string>&) {
    return bytes_of(task + "|" + std::to_string(codes.size() + 1));
  };
  c.decode = [](const std::vector<int>& ids) {
    std::string s;
    for (int id : ids)
      s.push_back(static_cast<char>(id % 256));
    return s;
  };
  return c;
}

// A test double with the generator pool's typed interface: turn 1 follows the task's script,
// later turns are correct. `token_offset` shifts every completion id (past the vocabulary, it
// makes the learner's step fail).
msg::generator_pool_actor::behavior_type scripted_generators(msg::generator_pool_actor::pointer,
                                                             int token_offset) {
  return {
    [token_offset](msg::generate_atom, msg::generate_request& r) -> msg::generate_reply {
      msg::generate_reply rep;
      rep.id = r.id;
      for (const auto& prompt : r.prompts) {
        std::string p(prompt.begin(), prompt.end());
        auto task = p.substr(0, p.find('|'));
        for (int j = 0; j < r.samples_per_prompt; ++j) {
          auto code = r.samples_per_prompt > 1 ? scripts.at(task).at(static_cast<std::size_t>(j))
                                               : std::string("OK");
          auto ids = bytes_of(fenced(code));
          for (auto& id : ids)
            id += token_offset;
          rep.samples.push_back({ids, std::vector<float>(ids.size(), -0.7f), "eos"});
        }
      }
      return rep;
    },
    [](msg::cancel_atom, std::uint64_t) {},
    [](msg::stats_atom) { return msg::pool_stats{}; },
  };
}

// Tries per job id, shared by a test runner's jobs.
struct tries {
  std::mutex mtx;
  std::map<std::uint64_t, int> n;
  int next(std::uint64_t id) {
    std::lock_guard<std::mutex> lk(mtx);
    return ++n[id];
  }
};

bool has(const std::string& s, const char* mark) { return s.find(mark) != std::string::npos; }

// A compiler that fails on demand: CFAIL_ALWAYS fails inside leap on every try, CFAIL_ONCE_OK
// on the first only, CDIE_ONCE kills its worker on the first try. Everything else builds.
std::shared_ptr<actors::job_runner<msg::compile_request, msg::compile_reply>> flaky_compiler() {
  using runner_t = actors::job_runner<msg::compile_request, msg::compile_reply>;
  auto r = std::make_shared<runner_t>();
  auto t = std::make_shared<tries>();
  r->start = [t](const msg::compile_request& req, runner_t::done_fn done) -> runner_t::cancel_fn {
    const int k = t->next(req.id);
    if (!req.reference && has(req.source, "CFAIL_ALWAYS")) {
      done(make_error("test compiler: failing on demand (try " + std::to_string(k) + ")"));
      return {};
    }
    if (!req.reference && has(req.source, "CFAIL_ONCE") && k == 1) {
      done(make_error("test compiler: failing once on demand"));
      return {};
    }
    if (!req.reference && has(req.source, "CDIE_ONCE") && k == 1)
      throw std::runtime_error("test compiler: the worker dies on demand");
    msg::compile_reply rep;
    rep.id = req.id;
    rep.status = env::build_status::ok;
    rep.key = req.reference ? "reference" : req.source;
    done(std::move(rep));
    return {};
  };
  r->count = [](const msg::compile_reply&, msg::pool_stats&) {};
  r->retries = 1;
  return r;
}

// An executor: EFAIL_ALWAYS fails inside leap on every try; code with OK is correct.
std::shared_ptr<actors::job_runner<msg::exec_request, msg::exec_reply>> test_executor() {
  using runner_t = actors::job_runner<msg::exec_request, msg::exec_reply>;
  auto r = std::make_shared<runner_t>();
  r->start = [](const msg::exec_request& req, runner_t::done_fn done) -> runner_t::cancel_fn {
    if (has(req.candidate_build, "EFAIL_ALWAYS")) {
      done(make_error("test executor: the reference crashed (on demand)"));
      return {};
    }
    msg::exec_reply rep;
    rep.id = req.id;
    rep.v.task = req.task;
    rep.v.st = has(req.candidate_build, "OK") ? env::status::correct : env::status::wrong_answer;
    rep.v.feedback = rep.v.st == env::status::correct ? "correct" : "wrong result at index 3";
    done(std::move(rep));
    return {};
  };
  r->count = [](const msg::exec_reply&, msg::pool_stats&) {};
  r->retries = 1;
  return r;
}

struct run_record {
  actors::run_end end;
  std::vector<msg::step_report> reports;
  std::vector<std::string> saved; // checkpoint errors ("" = saved), in order
  msg::pool_stats compiler;
};

run_record run_pipeline(const std::vector<std::string>& tasks, int steps, int token_offset,
                        const std::string& checkpoint_dir) {
  auto catalog = std::make_shared<actors::task_catalog>();
  for (auto& t : tasks) {
    env::task_spec spec;
    spec.name = t;
    (*catalog)[t] = spec;
  }
  policy::model_config mc;
  mc.vocab_size = 300;
  mc.d_model = 32;
  mc.n_layers = 1;
  mc.n_heads = 2;
  mc.d_ff = 64;
  mc.max_seq_len = 256;
  auto model = policy::policy_model::create(mc, 7);
  EXPECT_TRUE(model.ok()) << model.message();
  auto shared_model = std::make_shared<policy::policy_model>(std::move(*model));
  policy::rl_options rl;
  rl.lr = 1e-3;
  shared_model->begin_rl(rl);

  runtime::pipeline_description d;
  d.tasks = catalog;
  d.gatekeeper.rollout.group_size = 6;
  d.gatekeeper.rollout.max_turns = 2;
  d.gatekeeper.max_seq_len = 256;
  d.gatekeeper.codec = test_codec();
  d.stand_ins.generators = [token_offset](caf::actor_system& sys) {
    return sys.spawn(scripted_generators, token_offset);
  };
  d.stand_ins.compilers = [](caf::actor_system& sys) -> msg::compiler_pool_actor {
    return sys.spawn(actors::supervised_pool<msg::compile_atom, msg::compile_request, msg::compile_reply>,
                     std::string("test_compiler_pool"), std::size_t{2}, flaky_compiler());
  };
  d.stand_ins.executors = [](caf::actor_system& sys) -> msg::executor_pool_actor {
    return sys.spawn(actors::supervised_pool<msg::exec_atom, msg::exec_request, msg::exec_reply>,
                     std::string("test_executor_pool"), std::size_t{2}, test_executor());
  };
  runtime::train_driver td;
  td.model = shared_model;
  td.learner.batch_groups = static_cast<int>(tasks.size());
  td.learner.order = msg::batch_order::admission;
  td.learner.rl = rl;
  td.learner.task_count = tasks.size();
  td.learner.checkpoint_dir = checkpoint_dir;
  td.trainer.batch_groups = static_cast<int>(tasks.size());
  td.trainer.steps = steps;
  td.trainer.tasks = tasks;
  td.trainer.checkpoint_dir = checkpoint_dir;
  td.trainer.extra_json = "{}";
  auto rec = std::make_shared<run_record>();
  auto mtx = std::make_shared<std::mutex>();
  td.trainer.on_report = [rec, mtx](const msg::step_report& r) {
    std::lock_guard<std::mutex> lk(*mtx);
    rec->reports.push_back(r);
  };
  td.trainer.on_saved = [rec, mtx](const result<msg::checkpoint_saved>& r, bool) {
    std::lock_guard<std::mutex> lk(*mtx);
    rec->saved.push_back(r ? std::string() : r.message());
  };
  d.train = std::move(td);
  auto p = runtime::pipeline::spawn(std::move(d));
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p)
    return {};
  auto out = (*p)->wait();
  p->reset();
  std::lock_guard<std::mutex> lk(*mtx);
  rec->end = out.end;
  rec->compiler = out.compiler_stats;
  return *rec;
}

} // namespace

TEST(PipelineFaults, EveryStepCompletesAndLostAttemptsAreDroppedNotJudged) {
  auto dir = *make_temp_dir(temp_root(), "leap-pipeline-faults-");
  auto r = run_pipeline({"mixed", "all_lost"}, 3, 0, dir + "/checkpoint");
  ASSERT_EQ(r.end.end, actors::run_end::how::completed) << r.end.error;
  ASSERT_EQ(r.reports.size(), 3u);
  for (const auto& rep : r.reports) {
    EXPECT_EQ(rep.outcome, msg::step_outcome::trained);
    ASSERT_EQ(rep.group_details.size(), 2u);
    for (const auto& g : rep.group_details) {
      ASSERT_EQ(g.attempts.size(), 6u) << g.task; // every attempt accounted for
      double sum = 0;
      for (const auto& a : g.attempts) {
        sum += a.reward;
        if (a.end == algo::attempt_end::dropped) {
          EXPECT_EQ(a.reward, 0.0);
          for (double adv : a.advantages)
            EXPECT_EQ(adv, 0.0);
          EXPECT_NE(a.end_reason.find("failed on 2 tries"), std::string::npos) << a.end_reason;
        }
      }
      EXPECT_NEAR(sum, 0.0, 1e-12) << g.task;
      if (g.task == "all_lost") {
        EXPECT_EQ(g.dcp, algo::group_decision::no_verdicts);
        for (const auto& a : g.attempts)
          EXPECT_EQ(a.end, algo::attempt_end::dropped);
      } else {
        // Turn 1: OK and CFAIL_ONCE_OK pass (the latter after a retry), BAD and CDIE_ONCE fail
        // (the latter after its worker was replaced), two attempts are lost. DCP decides on the
        // four with verdicts: 2 failures >= 4/2, expand; both failures are solved on turn 2.
        EXPECT_EQ(g.dcp, algo::group_decision::expand);
        std::vector<int> solved;
        for (const auto& a : g.attempts)
          solved.push_back(a.solved_turn);
        EXPECT_EQ(solved, (std::vector<int>{1, 2, 0, 1, 2, 0}));
        EXPECT_EQ(g.attempts[2].end, algo::attempt_end::dropped);
        EXPECT_EQ(g.attempts[5].end, algo::attempt_end::dropped);
      }
    }
    EXPECT_EQ(rep.dropped, 8u); // 2 in the mixed group, 6 in the other
    EXPECT_DOUBLE_EQ(rep.acc_at_1, 0.5);  // over the 4 ranked attempts
    EXPECT_DOUBLE_EQ(rep.acc_at_2, 1.0);
    EXPECT_DOUBLE_EQ(rep.recovery, 1.0);
  }
  // Per step: CFAIL_ALWAYS x (1 + 4) jobs failed after a retry each, CFAIL_ONCE_OK and CDIE_ONCE
  // retried once; one worker replaced per step.
  EXPECT_EQ(r.compiler.failed, 3u * 5);
  EXPECT_EQ(r.compiler.retried, 3u * (5 + 2));
  EXPECT_EQ(r.compiler.worker_restarts, 3u);
  ASSERT_FALSE(r.saved.empty());
  EXPECT_EQ(r.saved.back(), "");
  fs::remove_all(dir);
}

TEST(PipelineFaults, FailedLearnerStepEndsTheRunWithItsErrorAndACheckpoint) {
  auto dir = *make_temp_dir(temp_root(), "leap-pipeline-learner-");
  // Completion ids past the 300-token vocabulary (shifted by 1024, so they still decode to the
  // same code): the optimizer step cannot embed them.
  auto r = run_pipeline({"mixed"}, 3, 1024, dir + "/checkpoint");
  ASSERT_EQ(r.end.end, actors::run_end::how::failed);
  EXPECT_NE(r.end.error.find("learner step 1 failed"), std::string::npos) << r.end.error;
  // The failed step was reported as failed; no step was trained.
  ASSERT_EQ(r.reports.size(), 1u);
  EXPECT_EQ(r.reports[0].outcome, msg::step_outcome::failed);
  EXPECT_EQ(r.reports[0].policy_version, 0);
  // The run saved the learner's state, at step 0 (the version was not bumped).
  ASSERT_EQ(r.saved.size(), 1u);
  EXPECT_EQ(r.saved[0], "");
  auto st = read_file(dir + "/checkpoint/trainer_state.json");
  ASSERT_TRUE(st.ok()) << st.message();
  auto j = nlohmann::json::parse(*st);
  EXPECT_EQ(j["step"].get<int>(), 0);
  EXPECT_EQ(j["policy_version"].get<int>(), 0);
  fs::remove_all(dir);
}

// The held-out split stays out of training: the RL draw takes only train-split tasks. The
// assembly refuses a trainer whose task list holds an eval-split task before any actor starts,
// whatever the caller checked before.
TEST(PipelineAssembly, RLDrawRefusesEvalSplitTasks) {
  auto catalog = std::make_shared<actors::task_catalog>();
  for (auto [name, split] : {std::pair{"relu", env::task_split::train},
                             std::pair{"elu", env::task_split::eval}}) {
    env::task_spec spec;
    spec.name = name;
    spec.split = split;
    (*catalog)[name] = spec;
  }
  runtime::pipeline_description d;
  d.tasks = catalog;
  runtime::train_driver td;
  td.trainer.tasks = {"relu", "elu"};
  d.train = std::move(td);
  auto p = runtime::pipeline::spawn(std::move(d));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("train.tasks: 'elu' is an eval-split task"), std::string::npos)
    << p.message();
}
