// `leap pretrain` and `leap eval` end to end with a tiny model on two tasks: the corpus is
// labelled through the real environment, the tokenizer trained, a few SFT steps run, a
// checkpoint written; eval samples through it, verifies every sample with nvcc and the CPU
// emulation, and feeds the verdicts back for a second turn. Then the held-out split.
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "policy/model/model_config.hpp"
#include "runtime/workflows/evaluation.hpp"
#include "runtime/workflows/corpus_labels.hpp"
#include "runtime/workflows/warm_start.hpp"
#include "runtime/workflows/train_run.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace fs = std::filesystem;
using namespace leap;
using namespace leap::runtime;

namespace {

// A tiny policy on vector_add and relu with a few SFT steps and 48-token samples, the CPU
// backend and the shared test cache, plus `extra` overrides.
config::leap_config tiny_policy_config(const std::vector<std::string>& extra) {
  auto cfg = config::defaults();
  std::vector<std::string> sets{"environment.backend=cpu", "sft.tasks=[\"vector_add\", \"relu\"]",
                                "policy.vocab_size=600", "policy.d_model=32", "policy.n_layers=1",
                                "policy.n_heads=2", "policy.n_kv_heads=1", "policy.d_ff=64",
                                "sft.batch_sequences=2", "eval.max_new_tokens=48",
                                "executor.timeout_seconds=10"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  for (const auto& s : sets)
    EXPECT_TRUE(config::apply_override(cfg, s).ok()) << s;
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  return cfg;
}

} // namespace

// sft.self_repair_steps: the warm start's own turn-1 samples are judged by the environment and
// every failed one becomes a repair dialogue for the last steps of the same schedule.
TEST(PolicyE2E, SelfRepairTrainsTheLastStepsOnTheModelsOwnFailures) {
  auto cfg = tiny_policy_config({"sft.max_steps=4", "sft.self_repair_steps=2",
                                 "sft.self_repair_samples=3"});
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto dir = *make_temp_dir(temp_root(), "leap-self-repair-") + "/checkpoint";
  auto p = pretrain(**svc, dir, false);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->steps, 4); // 2 + 2: one schedule
  // 3 samples of each task, every one judged (48 tokens hold no whole solution of this model).
  EXPECT_EQ(p->self_repair_samples, 6);
  EXPECT_EQ(p->self_repair_examples,
            static_cast<std::size_t>(p->self_repair_samples - p->self_repair_passed));
  EXPECT_GE(p->self_repair_examples, 1u);
  EXPECT_GT(p->self_repair_seconds, 0.0);
  EXPECT_TRUE(fs::exists(dir + "/model.safetensors"));
  auto back = policy::load_checkpoint_config(dir);
  EXPECT_TRUE(back.ok()) << back.message();
  fs::remove_all(fs::path(dir).parent_path());
}

// sft.init_checkpoint: a second stage continues from the first one's tokenizer and weights (its
// [policy] sizes do not apply), so it starts near the loss the first ended at; a path that is
// no checkpoint is an error naming the key.
TEST(PolicyE2E, ASecondSftStageContinuesFromTheFirstStagesCheckpoint) {
  const auto root = *make_temp_dir(temp_root(), "leap-sft-stages-");
  auto first_cfg = tiny_policy_config({"sft.max_steps=60", "sft.lr=5e-3", "sft.warmup_steps=5"});
  auto first_svc = make_services(first_cfg);
  ASSERT_TRUE(first_svc.ok()) << first_svc.message();
  auto first = pretrain(**first_svc, root + "/first", false);
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_LT(first->final_loss, first->first_loss - 1.0) << "the first stage did not learn";

  auto second_cfg = tiny_policy_config({"sft.max_steps=2", "sft.warmup_steps=1",
                                        "policy.d_model=48", "policy.vocab_size=700",
                                        "sft.init_checkpoint=" + root + "/first"});
  auto second_svc = make_services(second_cfg);
  ASSERT_TRUE(second_svc.ok()) << second_svc.message();
  auto second = pretrain(**second_svc, root + "/second", false);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(second->parameters, first->parameters);
  EXPECT_EQ(second->vocab_size, first->vocab_size);
  EXPECT_EQ(*read_file(root + "/second/tokenizer.json"), *read_file(root + "/first/tokenizer.json"));
  EXPECT_EQ(*read_file(root + "/second/config.json"), *read_file(root + "/first/config.json"));
  // From scratch the loss starts near ln(vocab); continued, near where the first stage ended.
  EXPECT_LT(second->first_loss, first->first_loss - 1.0);

  // Later stages from the first one's checkpoint on 2 generated tasks labelled by construction,
  // with `extra` overrides, written to root/<out>; and the tasks of a corpus.jsonl.
  auto generated_stage = [&](const std::vector<std::string>& extra, const std::string& out) {
    std::vector<std::string> sets{"sft.init_checkpoint=" + root + "/first", "sft.generated_tasks=2",
                                  "sft.generated_bugs_per_kind=0",
                                  "sft.generated_labels=construction"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    auto svc = make_services(tiny_policy_config(sets));
    EXPECT_TRUE(svc.ok()) << svc.message();
    if (!svc.ok())
      return result<pretrain_summary>(make_error(svc.message()));
    return pretrain(**svc, root + "/" + out, false);
  };
  auto corpus_tasks_of = [](const std::string& corpus_path) {
    std::set<std::string> tasks;
    for (auto& line : split_lines(*read_file(corpus_path)))
      if (!trim(line).empty())
        tasks.insert(nlohmann::json::parse(line)["task"].get<std::string>());
    return tasks;
  };

  // A stage of one family from a given index: exactly those generated tasks join the corpus.
  auto ew = generated_stage({"sft.max_steps=1", "sft.generated_families=[\"ew\"]",
                             "sft.generated_first=5"},
                            "ew");
  ASSERT_TRUE(ew.ok()) << ew.message();
  std::set<std::string> generated;
  for (const auto& task : corpus_tasks_of(ew->corpus_path))
    if (task.rfind("gen_", 0) == 0)
      generated.insert(task);
  EXPECT_EQ(generated, (std::set<std::string>{"gen_ew_t00005", "gen_ew_t00006"}));

  // sft.bundled_tasks = false: a stage of generated tasks alone, no bundled task in its corpus;
  // sft.self_repair_tasks = 1: the self-repair phase samples one of its two tasks only.
  auto alone = generated_stage({"sft.max_steps=3", "sft.self_repair_steps=1",
                                "sft.self_repair_samples=2", "sft.self_repair_tasks=1",
                                "sft.tasks=[]", "sft.bundled_tasks=false",
                                "sft.generated_families=[\"ew\"]", "sft.generated_first=5"},
                               "alone");
  ASSERT_TRUE(alone.ok()) << alone.message();
  EXPECT_EQ(corpus_tasks_of(alone->corpus_path),
            (std::set<std::string>{"gen_ew_t00005", "gen_ew_t00006"}));
  EXPECT_NE(alone->corpus_path, ew->corpus_path) << "a corpus of its own";
  EXPECT_EQ(alone->self_repair_samples, 2) << "2 samples of 1 task";

  // sft.generated_family_weights: one step's batch is drawn by weight, so weighting one family
  // a thousandfold makes the first batch that family's (the same weights, the same batch).
  auto first_loss_with = [&](const std::string& weights, const std::string& out) {
    auto r = generated_stage({"sft.max_steps=1", "sft.tasks=[]", "sft.bundled_tasks=false",
                              "sft.generated_families=[\"ew\", \"red\"]",
                              "sft.generated_family_weights=" + weights},
                             out);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r->first_loss : -1.0;
  };
  const double red_heavy = first_loss_with("[\"red=1000\"]", "w1");
  const double ew_heavy = first_loss_with("[\"ew=1000\"]", "w2");
  EXPECT_EQ(first_loss_with("[\"red=1000\"]", "w3"), red_heavy);
  EXPECT_NE(red_heavy, ew_heavy);

  auto bad_cfg = tiny_policy_config({"sft.max_steps=2", "sft.init_checkpoint=" + root + "/none"});
  auto bad_svc = make_services(bad_cfg);
  ASSERT_TRUE(bad_svc.ok()) << bad_svc.message();
  auto bad = pretrain(**bad_svc, root + "/bad", false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("sft.init_checkpoint = " + root + "/none"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(fs::exists(root + "/bad"));
  fs::remove_all(root);
}

TEST(PolicyE2E, PretrainThenEvalWithFeedback) {
  auto cfg = tiny_policy_config({"eval.split=train", "eval.tasks=[\"vector_add\", \"relu\"]",
                                 "sft.max_steps=3", "eval.group_size=2", "eval.max_turns=2"});
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto dir = *make_temp_dir(temp_root(), "leap-pretrain-") + "/checkpoint";
  auto p = pretrain(**svc, dir, false);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->steps, 3);
  EXPECT_GT(p->turn1_examples, 4u);
  EXPECT_GT(p->repair_examples, 4u);
  EXPECT_GT(p->first_loss, 0.0);
  for (auto f : {"config.json", "model.safetensors", "tokenizer.json", "trainer_state.json",
                 "manifest.json"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  EXPECT_FALSE(fs::exists(dir + "/optimizer.safetensors")) << "a warm start has no moments";
  auto e = evaluate_checkpoint(**svc, dir, false);
  ASSERT_TRUE(e.ok()) << e.message();
  ASSERT_EQ(e->per_task.size(), 2u);
  for (auto& [name, t] : e->per_task)
    EXPECT_EQ(t.solved_turn.size(), 2u) << name;
  ASSERT_GE(e->acc_at.size(), 3u);
  EXPECT_DOUBLE_EQ(e->pass_at_1, e->acc_at[0]);
  EXPECT_LE(e->acc_at[0], e->acc_at[1]);
  // Every unsolved turn-1 attempt was retried once with its feedback.
  long long unsolved = 0;
  for (auto& [name, t] : e->per_task)
    for (int s : t.solved_turn)
      unsolved += s != 1;
  EXPECT_EQ(e->samples, 4 + unsolved);
  EXPECT_EQ(e->split, "train");

  // The held-out split. A suite of vector_add and relu (train) and relu_held (a copy
  // of relu marked split = "eval"): eval measures the eval split by default and says so, with
  // scores per category; training roles refuse the held-out task, naming their key; the corpus
  // leaves it out.
  const auto suite_dir = fs::path(dir).parent_path() / "tasks";
  fs::create_directories(suite_dir);
  for (auto name : {"vector_add", "relu"})
    fs::copy(fs::path(LEAP_SOURCE_DIR) / "tasks" / name, suite_dir / name,
             fs::copy_options::recursive);
  fs::copy(fs::path(LEAP_SOURCE_DIR) / "tasks" / "relu", suite_dir / "relu_held",
           fs::copy_options::recursive);
  {
    auto text = *read_file((suite_dir / "relu_held" / "task.toml").string());
    for (auto [from, to] : {std::pair{"name = \"relu\"", "name = \"relu_held\""},
                            std::pair{"split = \"train\"", "split = \"eval\""}}) {
      auto at = text.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      text.replace(at, std::string(from).size(), to);
    }
    std::ofstream((suite_dir / "relu_held" / "task.toml").string()) << text;
  }
  auto held_cfg = cfg;
  held_cfg.environment.tasks_dir = suite_dir.string();
  held_cfg.eval = config::defaults().eval; // eval.split = "eval", no task list
  held_cfg.eval.group_size = 2;
  held_cfg.eval.max_turns = 1;
  held_cfg.eval.max_new_tokens = 48;
  auto held = make_services(held_cfg);
  ASSERT_TRUE(held.ok()) << held.message();
  auto he = evaluate_checkpoint(**held, dir, false);
  ASSERT_TRUE(he.ok()) << he.message();
  EXPECT_EQ(he->split, "eval");
  ASSERT_EQ(he->per_task.size(), 1u);
  EXPECT_TRUE(he->per_task.count("relu_held"));
  ASSERT_EQ(he->per_category.size(), 1u);
  EXPECT_EQ(he->per_category["activation"].tasks, std::vector<std::string>{"relu_held"});
  EXPECT_EQ(he->task_suite, env::task_suite_hash(*(*held)->tasks));
  EXPECT_NE(he->task_suite, e->task_suite);

  // eval.tasks naming a train task under eval.split = "eval" is refused, naming the key.
  (*held)->cfg.eval.tasks = {"relu"};
  auto wrong = evaluate_checkpoint(**held, dir, false);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("eval.tasks: 'relu' is a train-split task"), std::string::npos)
    << wrong.message();
  (*held)->cfg.eval.tasks.clear();

  // sft.tasks and train.tasks may not hold it; nothing is written.
  (*held)->cfg.sft.tasks = {"relu", "relu_held"};
  auto sft = pretrain(**held, dir + "-held", false);
  ASSERT_FALSE(sft.ok());
  EXPECT_NE(sft.message().find("sft.tasks: 'relu_held' is an eval-split task"), std::string::npos)
    << sft.message();
  EXPECT_FALSE(fs::exists(dir + "-held"));
  (*held)->cfg.train.tasks = {"relu_held"};
  EXPECT_EQ(run_training(**held, dir + "-run", false), 2);
  EXPECT_FALSE(fs::exists(dir + "-run"));

  // The corpus of the whole suite: train tasks only.
  auto ev = evaluator::create(**held);
  ASSERT_TRUE(ev.ok()) << ev.message();
  corpus_options co;
  co.out_dir = fs::path(dir).parent_path().string() + "/corpus";
  auto c = build_corpus(**held, **ev, co);
  ASSERT_TRUE(c.ok()) << c.message();
  std::set<std::string> in_corpus;
  for (auto& line : split_lines(*read_file(co.out_dir + "/corpus.jsonl")))
    if (auto at = line.find("\"task\":\""); at != std::string::npos)
      in_corpus.insert(line.substr(at + 8, line.find('"', at + 8) - at - 8));
  EXPECT_EQ(in_corpus, (std::set<std::string>{"relu", "vector_add"}));
  co.tasks = {"relu_held"};
  EXPECT_FALSE(build_corpus(**held, **ev, co).ok());
  fs::remove_all(fs::path(dir).parent_path());
}

// sft.generated_tasks puts generated train tasks (env/taskgen) into the corpus, and
// sft.generated_paraphrases the paraphrase of the first (its buffers renamed), each labelled by a
// real run in the environment (a fresh cache: no label can come from an earlier run), and `leap
// eval` reports generated held-out tasks apart from bundled ones.
TEST(PolicyE2E, GeneratedTasksJoinTheCorpusLabelledByTheEnvironment) {
  auto cfg = tiny_policy_config({"sft.tasks=[\"relu\"]", "sft.generated_tasks=3", "sft.generated_paraphrases=1",
                                 "sft.max_steps=3", "eval.group_size=1", "eval.max_turns=1"});
  const auto root = *make_temp_dir(temp_root(), "leap-gen-sft-");
  cfg.environment.cache_dir = root + "/cache";
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  taskgen::gen_options go;
  go.seed = cfg.environment.generated_seed;
  go.train = 3;
  auto gen = taskgen::generated_specs(go);
  ASSERT_TRUE(gen.ok()) << gen.message();
  ASSERT_EQ(gen->size(), 3u);
  EXPECT_FALSE((*svc)->tasks->count(gen->front().name)); // environment.generated_tasks = 0
  auto p = pretrain(**svc, root + "/checkpoint", false);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->steps, 3);
  EXPECT_GE(p->turn1_examples, 5u); // relu's solution, the three references and the paraphrase's
  auto para = taskgen::generate_task(cfg.environment.generated_seed, *taskgen::paraphrase_of(gen->front().name));
  ASSERT_TRUE(para.ok()) << para.message();
  EXPECT_FALSE(para->op.names.empty()) << para->name << ": the test wants a renamed paraphrase";
  auto text = read_file(p->corpus_path);
  ASSERT_TRUE(text.ok()) << text.message();
  std::map<std::string, int> targets, compile_errors, repairs, records;
  for (auto& line : split_lines(*text)) {
    if (trim(line).empty())
      continue;
    auto j = nlohmann::json::parse(line);
    const std::string task = j["task"];
    if (task.rfind("gen_", 0) != 0)
      continue;
    const std::string kind = j["kind"];
    if (kind == "repair") {
      ++repairs[task];
      continue;
    }
    ++records[task];
    EXPECT_EQ(j["family"], "generated");
    // Labelled now, by a run: a fresh cache holds no label, and the feedback is the verdict's.
    EXPECT_FALSE(j["label_cached"].get<bool>()) << line;
    EXPECT_FALSE(j["feedback"].get<std::string>().empty()) << line;
    if (kind == "solution") {
      EXPECT_EQ(j["variant"], "reference.naive");
      EXPECT_EQ(j["status"], "correct") << line;
      EXPECT_TRUE(j["target"].get<bool>());
      EXPECT_EQ(j["code"].get<std::string>().find("//"), std::string::npos); // no comment lines
      targets[task] += j["target"].get<bool>();
    } else if (j["status"] == "compile_error") {
      // Only a real compile writes the compiler's diagnostics.
      EXPECT_NE(j["feedback"].get<std::string>().find("error"), std::string::npos) << line;
      ++compile_errors[task];
    }
  }
  for (auto& t : *gen) {
    EXPECT_EQ(targets[t.name], 1) << t.name;
    EXPECT_GE(compile_errors[t.name], 3) << t.name; // the three typo kinds at least
    EXPECT_GE(repairs[t.name], 3) << t.name;
  }
  // The paraphrase's reference, under its own buffer names, is correct in the environment.
  EXPECT_EQ(targets[para->name], 1) << para->name;
  EXPECT_GE(repairs[para->name], 3) << para->name;
  EXPECT_EQ(targets.size(), 4u);
  // One cached verdict per labelled variant (relu's and the generated ones), written by the runs.
  std::size_t labels = 0, variants = 0;
  for (auto& e : fs::directory_iterator(cfg.environment.cache_dir + "/corpus-labels"))
    labels += e.path().extension() == ".json";
  for (auto& line : split_lines(*text))
    variants += line.find("\"kind\":\"repair\"") == std::string::npos && !trim(line).empty();
  EXPECT_EQ(labels, variants);

  // eval.tasks may name generated held-out tasks the catalog lacks; they are reported by set.
  auto ecfg = cfg;
  ecfg.eval.tasks = {"gen_ew_i00000", "gen_ew_c00000", "elu"};
  ecfg.eval.max_new_tokens = 48;
  auto esvc = make_services(ecfg);
  ASSERT_TRUE(esvc.ok()) << esvc.message();
  auto e = evaluate_checkpoint(**esvc, root + "/checkpoint", false);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->per_task.size(), 3u);
  ASSERT_EQ(e->per_set.size(), 3u);
  EXPECT_EQ(e->per_set["bundled"].tasks, std::vector<std::string>{"elu"});
  EXPECT_EQ(e->per_set["generated_instance"].tasks, std::vector<std::string>{"gen_ew_i00000"});
  EXPECT_EQ(e->per_set["generated_composition"].tasks, std::vector<std::string>{"gen_ew_c00000"});
  EXPECT_EQ(eval_set_of("gen_red_t00012"), "generated_train");
  fs::remove_all(root);
}
