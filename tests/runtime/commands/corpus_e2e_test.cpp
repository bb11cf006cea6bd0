// End-to-end labelling of a small corpus (two tasks) through the real evaluator: real nvcc, the
// CPU emulation, worker processes. Checks that labels are real verdicts, that repair records carry
// the buggy run's feedback and a fix that really passed, and that a rerun reads the label cache.
#include "common/fs.hpp"
#include "env/taskgen/generator.hpp"
#include "policy/corpus/kernel_corpus.hpp"
#include "runtime/workflows/corpus_labels.hpp"
#include "runtime/config/schema.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

using namespace leap;
using namespace leap::runtime;

namespace {

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  auto text = read_file(path);
  EXPECT_TRUE(text.ok());
  std::istringstream in(text.ok() ? *text : "");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      out.push_back(nlohmann::json::parse(line));
  return out;
}

} // namespace

// sft.bug_kinds' allowed names (written out in leap_config, which does not link the corpus) are
// exactly the generator's kinds, in order; the default is the first nine, the kinds of before
// swapped_name and sampling_noise.
// The config's family tags (sft.generated_families, sft.generated_family_weights) are taskgen's.
TEST(CorpusE2E, ConfigNamesEveryGeneratedFamily) {
  std::vector<std::string> tags;
  for (auto f : taskgen::all_families())
    tags.emplace_back(taskgen::tag(f));
  EXPECT_EQ(config::generated_family_tags(), tags);
  const auto* key = config::schema().find_section("sft")->find("generated_families");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->allowed, tags);
}

TEST(CorpusE2E, ConfigNamesEveryBugKind) {
  const auto* sec = config::schema().find_section("sft");
  ASSERT_NE(sec, nullptr);
  const auto* key = sec->find("bug_kinds");
  ASSERT_NE(key, nullptr);
  std::vector<std::string> names;
  for (auto k : corpus::all_bug_kinds())
    names.emplace_back(corpus::to_string(k));
  EXPECT_EQ(key->allowed, names);
  const auto defaults = config::defaults().sft.bug_kinds;
  ASSERT_EQ(defaults.size(), 9u);
  EXPECT_EQ(defaults, std::vector<std::string>(names.begin(), names.begin() + 9));
  auto cfg = config::defaults();
  auto bad = config::apply_override(cfg, "sft.bug_kinds=[\"off_by_one\", \"typo\"]");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("sft.bug_kinds"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("[sft] bug_kinds: element [1]: must be one of"), std::string::npos)
      << bad.message();
  EXPECT_NE(bad.message().find("(got \"typo\")"), std::string::npos) << bad.message();
}

TEST(CorpusE2E, SmallCorpusIsReallyLabelled) {
  auto cfg = config::defaults();
  ASSERT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 6;
  cfg.executor.trials = 1;
  cfg.executor.memory_limit_mb = 2048;
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  auto ev_made = evaluator::create(**svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;

  auto out = std::string(LEAP_TEST_OUTPUT_DIR) + "/corpus-e2e";
  std::filesystem::remove_all(out);
  corpus_options opt;
  opt.out_dir = out;
  opt.seed = 11;
  opt.tasks = {"vector_add", "row_max"};
  opt.reuse_labels = false; // label for real every time this test runs
  auto sum = build_corpus(**svc, ev, opt);
  ASSERT_TRUE(sum.ok()) << sum.message();
  EXPECT_EQ(sum->leap_errors, 0u);
  EXPECT_GE(sum->solutions, 10u);
  EXPECT_GE(sum->targets, 8u);
  EXPECT_GE(sum->repairs, 6u);

  auto recs = read_jsonl(sum->corpus_path);
  ASSERT_EQ(recs.size(), sum->variants + sum->repairs);
  std::map<std::string, nlohmann::json> by_variant;
  std::map<std::string, int> statuses;
  for (auto& r : recs) {
    ASSERT_TRUE(r.contains("task") && r.contains("kind") && r.contains("variant") && r.contains("code")
                && r.contains("status") && r.contains("feedback"))
      << r.dump();
    EXPECT_FALSE(r["feedback"].get<std::string>().empty()) << r.dump();
    if (r["kind"] != "repair") {
      by_variant[r["task"].get<std::string>() + "/" + r["variant"].get<std::string>()] = r;
      ++statuses[r["status"].get<std::string>()];
      EXPECT_EQ(r["target"].get<bool>(), r["kind"] == "solution" && r["status"] == "correct");
    }
  }
  // Typos are compile errors, with nvcc's line-numbered diagnostics in the feedback.
  EXPECT_GE(statuses["compile_error"], 6);
  EXPECT_GE(statuses["correct"], 8);
  EXPECT_GE(statuses["wrong_answer"] + statuses["runtime_error"], 2);
  for (auto& r : recs) {
    if (r["kind"] == "buggy" && r["bug"].get<std::string>().rfind("typo_", 0) == 0) {
      EXPECT_EQ(r["status"], "compile_error") << r["variant"];
      EXPECT_NE(r["feedback"].get<std::string>().find("solution.cu("), std::string::npos) << r["feedback"];
    }
    if (r["kind"] != "repair")
      continue;
    EXPECT_NE(r["status"], "correct");
    auto buggy = by_variant.at(r["task"].get<std::string>() + "/" + r["variant"].get<std::string>());
    EXPECT_EQ(r["buggy_code"], buggy["code"]);
    EXPECT_EQ(r["feedback"], buggy["feedback"]) << "repair feedback must be the buggy run's real text";
    auto fixed = by_variant.at(r["task"].get<std::string>() + "/" + r["fixed_variant"].get<std::string>());
    EXPECT_EQ(fixed["status"], "correct");
    EXPECT_EQ(fixed["kind"], "solution");
    EXPECT_EQ(r["fixed_code"], fixed["code"]);
    EXPECT_FALSE(r["prompt"].get<std::string>().empty());
  }
  auto stats = nlohmann::json::parse(*read_file(sum->stats_path));
  EXPECT_TRUE(stats["per_task"].contains("vector_add"));
  EXPECT_TRUE(stats["per_task"].contains("row_max"));
  EXPECT_TRUE(stats.contains("emulation_unsupported"));
  EXPECT_GT(stats["seconds"].get<double>(), 0.0);

  // The same corpus again with the label cache: every label written above... is not cached (the
  // run did not use it), so fill it once, then a third run reads every label from it.
  opt.reuse_labels = true;
  opt.tasks = {"vector_add"};
  auto fill = build_corpus(**svc, ev, opt);
  ASSERT_TRUE(fill.ok()) << fill.message();
  auto again = build_corpus(**svc, ev, opt);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->label_cache_hits, again->variants);
  EXPECT_EQ(again->targets, fill->targets);
}

// sft.generated_labels = construction: a generated task's reference target is labelled correct
// without a run (and marked so), its bugs are still labelled by runs and still become repair
// dialogues; and the environment, asked, gives the same verdict for the references.
TEST(CorpusE2E, GeneratedReferencesLabelledByConstructionAgreeWithTheEnvironment) {
  auto cfg = config::defaults();
  ASSERT_TRUE(config::apply_override(cfg, "environment.backend=cpu").ok());
  ASSERT_TRUE(config::apply_override(cfg, "environment.generated_tasks=2").ok());
  cfg.environment.cache_dir = LEAP_TEST_CACHE_DIR;
  cfg.executor.timeout_seconds = 6;
  cfg.executor.trials = 1;
  auto svc = make_services(cfg);
  ASSERT_TRUE(svc.ok()) << svc.message();
  std::vector<std::string> generated;
  for (const auto& [name, t] : *(*svc)->tasks)
    if (name.rfind("gen_", 0) == 0)
      generated.push_back(name);
  ASSERT_EQ(generated.size(), 2u);
  auto ev_made = evaluator::create(**svc);
  ASSERT_TRUE(ev_made) << ev_made.message();
  auto& ev = **ev_made;

  auto out = std::string(LEAP_TEST_OUTPUT_DIR) + "/corpus-e2e-construction";
  std::filesystem::remove_all(out);
  corpus_options opt;
  opt.out_dir = out;
  opt.tasks = generated;
  opt.bug_kinds = {"typo_semicolon", "missing_bounds"};
  opt.reuse_labels = false;
  opt.generated_references_by_construction = true;
  auto sum = build_corpus(**svc, ev, opt);
  ASSERT_TRUE(sum.ok()) << sum.message();
  EXPECT_EQ(sum->labels_by_construction, 2u);
  EXPECT_EQ(sum->targets, 2u);
  std::map<std::string, std::string> reference_code;
  std::map<std::string, int> ran_bugs, repairs;
  for (auto& r : read_jsonl(sum->corpus_path)) {
    const std::string task = r["task"];
    if (r["kind"] == "solution") {
      EXPECT_EQ(r.value("label", ""), "construction") << r.dump();
      EXPECT_EQ(r["status"], "correct");
      EXPECT_TRUE(r["target"].get<bool>());
      EXPECT_TRUE(r["feedback"].get<std::string>().empty()); // nothing ran
      reference_code[task] = r["code"];
    } else if (r["kind"] == "buggy") {
      EXPECT_FALSE(r.contains("label")) << r.dump();
      EXPECT_FALSE(r["feedback"].get<std::string>().empty()) << r.dump(); // a real run's verdict
      ++ran_bugs[task];
    } else {
      ASSERT_EQ(r["kind"], "repair");
      EXPECT_EQ(r["fixed_code"], reference_code[task]);
      ++repairs[task];
    }
  }
  auto stats = nlohmann::json::parse(*read_file(sum->stats_path));
  EXPECT_EQ(stats["labels_by_construction"], 2);
  for (auto& t : generated) {
    EXPECT_GE(ran_bugs[t], 1) << t;
    EXPECT_GE(repairs[t], 1) << t;
  }

  // The same references through the environment: correct too.
  opt.generated_references_by_construction = false;
  opt.bug_kinds = {"typo_semicolon"};
  auto ran = build_corpus(**svc, ev, opt);
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_EQ(ran->labels_by_construction, 0u);
  EXPECT_EQ(ran->targets, 2u);
  for (auto& r : read_jsonl(ran->corpus_path))
    if (r["kind"] == "solution") {
      EXPECT_EQ(r["status"], "correct") << r.dump();
      EXPECT_FALSE(r.contains("label"));
      EXPECT_FALSE(r["feedback"].get<std::string>().empty());
    }
  std::filesystem::remove_all(out);
}
