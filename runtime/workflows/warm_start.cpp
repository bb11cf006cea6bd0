// The warm-start workflow: see warm_start.hpp.
#include "runtime/workflows/warm_start.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "env/taskgen/generator.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/text/bpe_trainer.hpp"
#include "policy/policy_model.hpp"
#include "policy/text/special_tokens.hpp"
#include "runtime/pipeline/evaluator.hpp"
#include "runtime/pipeline/policy_io.hpp"
#include "runtime/workflows/corpus_labels.hpp"
#include "runtime/workflows/sample_failures.hpp"
#include "runtime/workflows/sft_weights.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <utility>

namespace leap::runtime {

namespace {

std::string clock_text(double s) {
  int t = static_cast<int>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
  return buf;
}

// The generated train tasks of sft.generated_tasks: the suite's first N (round-robin over every
// family), or, with sft.generated_families or sft.generated_first, N dealt round-robin over the
// listed families from index generated_first of each. Then the paraphrases (gen_<family>_p<n>)
// of the first sft.generated_paraphrases of them, the written forms (gen_<family>_w<n>) of
// the first sft.generated_written, and the notation forms (gen_<family>_n<n>) of the first
// sft.generated_notation.
result<std::vector<env::task_spec>> generated_train_specs(const config::leap_config& cfg) {
  const auto& sft = cfg.sft;
  std::vector<env::task_spec> specs;
  if (sft.generated_families.empty() && sft.generated_first == 0) {
    taskgen::gen_options go;
    go.seed = cfg.environment.generated_seed;
    go.train = sft.generated_tasks;
    auto made = taskgen::generated_specs(go);
    if (!made)
      return made.err();
    specs = std::move(*made);
  } else {
    std::vector<taskgen::family> families;
    for (const auto& tag : sft.generated_families) {
      auto f = taskgen::parse_family(tag);
      if (!f)
        return f.err();
      families.push_back(*f);
    }
    if (families.empty())
      families = taskgen::all_families();
    const int n = static_cast<int>(families.size());
    std::vector<std::string> names;
    for (int k = 0; k < sft.generated_tasks; ++k)
      names.push_back(taskgen::task_name(families[k % n], taskgen::gen_kind::train,
                                         sft.generated_first + k / n));
    auto made = taskgen::generate_tasks(cfg.environment.generated_seed, names);
    if (!made)
      return made.err();
    for (auto& t : *made)
      specs.push_back(std::move(t.spec));
  }
  // The paraphrases (gen_<family>_p<n>), the written forms (gen_<family>_w<n>), then the
  // notation forms (gen_<family>_n<n>), of the first N train tasks each.
  std::vector<std::string> others;
  for (auto [n, name_of] : {std::pair{sft.generated_paraphrases, &taskgen::paraphrase_of},
                            std::pair{sft.generated_written, &taskgen::written_of},
                            std::pair{sft.generated_notation, &taskgen::notation_of}})
    for (std::size_t i = 0; i < specs.size() && static_cast<int>(i) < n; ++i) {
      auto p = name_of(specs[i].name);
      if (!p)
        return p.err();
      others.push_back(*p);
    }
  if (!others.empty()) {
    auto made = taskgen::generate_tasks(cfg.environment.generated_seed, others);
    if (!made)
      return made.err();
    for (auto& t : *made)
      specs.push_back(std::move(t.spec));
  }
  return specs;
}

struct model_start {
  policy::tokenizer tok;
  policy::policy_model model;
};

// A tokenizer trained on the corpus text and fresh weights of [policy]'s sizes.
result<model_start> fresh_start(const config::leap_config& cfg, const std::vector<sft_text>& texts) {
  std::vector<std::string> corpus_text;
  for (auto& t : texts)
    corpus_text.push_back(t.prompt + t.completion);
  policy::bpe_trainer_options to;
  to.vocab_size = cfg.policy.vocab_size;
  auto tok = policy::bpe_trainer(to).train(corpus_text);
  if (!tok)
    return make_error("training the tokenizer: " + tok.message());
  policy::model_config mc;
  mc.vocab_size = tok->vocab_size();
  mc.d_model = cfg.policy.d_model;
  mc.n_layers = cfg.policy.n_layers;
  mc.n_heads = cfg.policy.n_heads;
  mc.n_kv_heads = cfg.policy.n_kv_heads;
  mc.d_ff = cfg.policy.d_ff;
  mc.max_seq_len = cfg.policy.max_seq_len;
  mc.rope_theta = cfg.policy.rope_theta;
  mc.tie_embeddings = cfg.policy.tie_embeddings;
  mc.bos_id = tok->token_id(policy::special::bos);
  mc.eos_id = tok->token_id(policy::special::eos);
  mc.pad_id = tok->token_id(policy::special::pad);
  auto model = policy::policy_model::create(mc, cfg.sft.seed);
  if (!model)
    return make_error("[policy]: " + model.message());
  return model_start{std::move(*tok), std::move(*model)};
}

// The tokenizer and weights of a leap checkpoint (sft.init_checkpoint), checked against its
// manifest.
result<model_start> checkpoint_start(const std::string& dir) {
  auto fail = [&](const std::string& what) {
    return make_error("sft.init_checkpoint = " + dir + ": " + what);
  };
  auto tok_path = policy::checkpoint_tokenizer_path(dir);
  if (!tok_path)
    return fail(tok_path.message());
  auto tok = policy::tokenizer::load(*tok_path);
  if (!tok)
    return fail(tok.message());
  if (auto v = policy::verify_checkpoint(dir, {"config.json", "model.safetensors"}); !v)
    return fail(v.message());
  auto model = policy::policy_model::load(dir);
  if (!model)
    return fail(model.message());
  return model_start{std::move(*tok), std::move(*model)};
}

} // namespace

result<pretrain_summary> pretrain(services& svc, const std::string& out_dir, bool show) {
  const auto& cfg = svc.cfg;
  pretrain_summary sum;
  sum.checkpoint_dir = out_dir;
  // 1. The corpus, labelled by the real environment (verdicts cached by content).
  auto co = corpus_options_of(cfg.sft);
  // One directory per corpus: the seed, and a hash of whatever else shapes it when that is not
  // the default (runs with different corpora then never rewrite each other's corpus.jsonl).
  co.out_dir = svc.cache_dir + "/corpus/seed-" + std::to_string(cfg.sft.corpus_seed);
  std::string shape;
  for (auto& t : cfg.sft.tasks)
    shape += t + ",";
  const auto defaults = config::defaults().sft;
  if (cfg.sft.bugs_per_kind != defaults.bugs_per_kind || cfg.sft.bug_kinds != defaults.bug_kinds) {
    shape += "|bugs_per_kind=" + std::to_string(cfg.sft.bugs_per_kind) + "|kinds=";
    for (auto& k : cfg.sft.bug_kinds)
      shape += k + ",";
  }
  if (cfg.sft.solutions_per_task != defaults.solutions_per_task)
    shape += "|solutions_per_task=" + std::to_string(cfg.sft.solutions_per_task);
  if (cfg.sft.generated_tasks > 0 && (!cfg.sft.generated_families.empty() || cfg.sft.generated_first > 0)) {
    shape += "|generated_first=" + std::to_string(cfg.sft.generated_first) + "|families=";
    for (auto& f : cfg.sft.generated_families)
      shape += f + ",";
  }
  if (cfg.sft.generated_paraphrases > 0)
    shape += "|generated_paraphrases=" + std::to_string(cfg.sft.generated_paraphrases);
  if (cfg.sft.generated_written > 0)
    shape += "|generated_written=" + std::to_string(cfg.sft.generated_written);
  if (cfg.sft.generated_notation > 0)
    shape += "|generated_notation=" + std::to_string(cfg.sft.generated_notation);
  if (cfg.sft.generated_tasks > 0)
    shape += "|generated_tasks=" + std::to_string(cfg.sft.generated_tasks)
             + "|generated_seed=" + std::to_string(cfg.environment.generated_seed)
             + (cfg.sft.generated_bugs_per_kind != defaults.generated_bugs_per_kind
                  ? "|generated_bugs_per_kind=" + std::to_string(cfg.sft.generated_bugs_per_kind)
                  : std::string())
             + (cfg.sft.generated_bug_tasks != defaults.generated_bug_tasks
                  ? "|generated_bug_tasks=" + std::to_string(cfg.sft.generated_bug_tasks)
                  : std::string());
  if (cfg.sft.generated_reference_labels != defaults.generated_reference_labels)
    shape += "|generated_labels=construction";
  if (cfg.sft.tasks.empty() && !cfg.sft.bundled_tasks)
    shape += "|bundled_tasks=false";
  if (!shape.empty())
    co.out_dir += "-" + sha256_hex(shape).substr(0, 10);
  co.seed = cfg.sft.corpus_seed;
  // Train-split tasks only (build_corpus refuses an eval-split one, naming sft.tasks).
  co.tasks = cfg.sft.tasks;
  co.tasks_key = "sft.tasks";
  // Generated tasks named in sft.tasks, and the first sft.generated_tasks generated train tasks,
  // join the catalog (before any evaluator holds it) and the corpus.
  if (auto added = add_generated_tasks(svc, cfg.sft.tasks, "sft.tasks"); !added)
    return added.err();
  if (cfg.sft.generated_tasks > 0) {
    auto gen = generated_train_specs(cfg);
    if (!gen)
      return make_error("sft.generated_tasks: " + gen.message());
    if (co.tasks.empty() && cfg.sft.bundled_tasks) // every bundled train task, as sft.tasks = [] means
      for (const auto& [name, t] : *svc.tasks)
        if (t.split == env::task_split::train && !taskgen::is_generated_name(name))
          co.tasks.push_back(name);
    // sft.generated_bug_tasks: the first N generated tasks (gen lists them before the
    // paraphrases) and their paraphrases and written forms get bugs.
    const auto n_bug = std::min<std::size_t>(static_cast<std::size_t>(cfg.sft.generated_bug_tasks),
                                             static_cast<std::size_t>(cfg.sft.generated_tasks));
    for (std::size_t i = 0; i < n_bug && i < gen->size(); ++i) {
      co.generated_bug_tasks.push_back((*gen)[i].name);
      for (auto other : {&taskgen::paraphrase_of, &taskgen::written_of, &taskgen::notation_of})
        if (auto o = other((*gen)[i].name))
          co.generated_bug_tasks.push_back(*o);
    }
    auto m = std::make_shared<std::map<std::string, env::task_spec>>(*svc.tasks);
    for (auto& t : *gen) {
      if (std::find(co.tasks.begin(), co.tasks.end(), t.name) == co.tasks.end())
        co.tasks.push_back(t.name);
      m->emplace(t.name, t);
    }
    svc.tasks = m;
  }
  if (show)
    co.progress = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\rcorpus: labelled %zu/%zu variants", done, total);
      if (done == total)
        std::fputc('\n', stderr);
    };
  {
    auto made = evaluator::create(svc);
    if (!made)
      return made.err();
    auto& ev = **made;
    auto c = build_corpus(svc, ev, co);
    if (!c)
      return c.err();
    sum.corpus_seconds = c->seconds;
    sum.corpus_path = c->corpus_path;
    if (show)
      std::fprintf(stderr, "corpus: %zu targets, %zu repair dialogues (%zu labels cached) in %.1f s\n",
                   c->targets, c->repairs, c->label_cache_hits, c->seconds);
  }
  auto texts = load_sft_texts(co.out_dir + "/corpus.jsonl", *svc.tasks, cfg.sft.repair_target);
  if (!texts)
    return texts.err();
  // 2. The tokenizer and the model: those of sft.init_checkpoint, or a tokenizer trained on
  // exactly the text the model will see and fresh weights.
  auto begun = cfg.sft.init_checkpoint.empty() ? fresh_start(cfg, *texts)
                                               : checkpoint_start(cfg.sft.init_checkpoint);
  if (!begun)
    return begun.err();
  auto& tok = begun->tok;
  auto& model = begun->model;
  auto tok_path = svc.work_dir + "/tokenizer.json";
  if (auto saved = tok.save(tok_path); !saved)
    return saved.err();
  sum.vocab_size = tok.vocab_size();
  // 3. Examples.
  std::vector<policy::sft_example> examples;
  const sft_task_weights by_task(cfg.sft);
  for (auto& t : *texts) {
    auto p = encode_pair(tok, t);
    double w = (t.repair ? cfg.sft.repair_weight : 1.0)
               * (t.alternative == 0 ? 1.0 : cfg.sft.alt_solution_weight) * by_task.of(t.task);
    examples.push_back({p.prompt, p.completion, w});
    (t.repair ? sum.repair_examples : sum.turn1_examples)++;
  }
  sum.parameters = model.parameter_count();
  int threads = policy::set_torch_threads(0);
  if (show)
    std::fprintf(stderr,
                 "sft: %.2fM parameters, vocab %d, %zu turn-1 + %zu repair examples, %d threads, "
                 "budget %.1f min\n",
                 sum.parameters / 1e6, sum.vocab_size, sum.turn1_examples, sum.repair_examples,
                 threads, cfg.sft.minutes);
  policy::sft_options so;
  so.minutes = cfg.sft.minutes;
  so.max_steps = cfg.sft.max_steps - cfg.sft.self_repair_steps; // check_consistency: > 0 then
  so.schedule_steps = cfg.sft.max_steps;
  so.batch_sequences = cfg.sft.batch_sequences;
  so.lr = cfg.sft.lr;
  so.min_lr_ratio = cfg.sft.min_lr_ratio;
  so.warmup_steps = cfg.sft.warmup_steps;
  so.weight_decay = cfg.sft.weight_decay;
  so.grad_clip = cfg.sft.grad_clip;
  so.seed = cfg.sft.seed;
  auto last_print = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  auto show_step = [&](const policy::sft_progress& p) {
    auto now = std::chrono::steady_clock::now();
    if (!show || (now - last_print < std::chrono::seconds(5) && p.step > 1))
      return;
    last_print = now;
    std::fprintf(stderr, "sft: step %5d  loss %.4f  lr %.2e  %6.0f tok/s  elapsed %s  ETA %s\n",
                 p.step, p.loss, p.lr, p.tokens_per_second, clock_text(p.elapsed_seconds).c_str(),
                 clock_text(p.eta_seconds).c_str());
  };
  auto r = model.sft(examples, so, show_step);
  if (!r)
    return r.err();
  sum.steps = r->steps;
  sum.first_loss = r->first_loss;
  sum.final_loss = r->final_loss;
  sum.sft_seconds = r->seconds;
  sum.skipped_examples = static_cast<std::size_t>(r->skipped_examples);
  long long tokens = r->tokens;
  // 5. Self-repair: the model's own failed samples, judged by the environment, answered by a
  // correct solution, for the last sft.self_repair_steps steps of the same schedule.
  const double minutes_left = cfg.sft.minutes - r->seconds / 60;
  const bool budget_spent = r->steps < so.max_steps || minutes_left <= 0;
  if (cfg.sft.self_repair_steps > 0 && budget_spent && show)
    std::fprintf(stderr, "sft: the %.1f-minute budget (sft.minutes) was spent after %d steps; no "
                 "self-repair phase\n", cfg.sft.minutes, r->steps);
  if (cfg.sft.self_repair_steps > 0 && !budget_spent) {
    // The generators load a checkpoint: the model as it is now, in the scratch directory.
    const std::string sampled_dir = svc.work_dir + "/self-repair-checkpoint";
    if (auto saved_a = model.save(sampled_dir, tok_path, r->steps); !saved_a)
      return saved_a.err();
    std::vector<std::string> corpus_tasks;
    for (const auto& t : *texts)
      if (!t.repair && std::find(corpus_tasks.begin(), corpus_tasks.end(), t.task) == corpus_tasks.end())
        corpus_tasks.push_back(t.task);
    // sft.self_repair_tasks: a sample of them, drawn with sft.seed, kept in corpus order.
    const auto keep = static_cast<std::size_t>(cfg.sft.self_repair_tasks);
    if (keep > 0 && keep < corpus_tasks.size()) {
      std::vector<std::size_t> order(corpus_tasks.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::mt19937_64 rng(cfg.sft.seed);
      std::shuffle(order.begin(), order.end(), rng);
      order.resize(keep);
      std::sort(order.begin(), order.end());
      std::vector<std::string> sample;
      for (auto i : order)
        sample.push_back(corpus_tasks[i]);
      corpus_tasks = std::move(sample);
    }
    auto sampled = sample_failures(svc, sampled_dir, corpus_tasks, cfg.sft.self_repair_samples, show);
    policy::set_torch_threads(threads); // sampling ran one compute thread per replica
    std::error_code ignored;
    std::filesystem::remove_all(sampled_dir, ignored);
    if (!sampled)
      return make_error("self-repair sampling: " + sampled.message());
    auto dialogues = self_repair_texts(sampled->failures, *texts, *svc.tasks);
    for (const auto& t : dialogues) {
      auto p = encode_pair(tok, t);
      examples.push_back({p.prompt, p.completion, cfg.sft.self_repair_weight * by_task.of(t.task)});
    }
    sum.self_repair_samples = sampled->samples;
    sum.self_repair_passed = sampled->passed;
    sum.self_repair_examples = dialogues.size();
    sum.self_repair_seconds = sampled->seconds;
    if (show)
      std::fprintf(stderr,
                   "self-repair: %lld of %lld turn-1 samples of %zu tasks failed -> %zu repair "
                   "dialogues (%.1f s); %d more steps\n",
                   sampled->samples - sampled->passed, sampled->samples, corpus_tasks.size(),
                   dialogues.size(), sampled->seconds, cfg.sft.self_repair_steps);
    so.first_step = so.max_steps;
    so.max_steps = cfg.sft.self_repair_steps;
    so.minutes = minutes_left;
    auto r2 = model.sft(examples, so, show_step);
    if (!r2)
      return r2.err();
    sum.steps += r2->steps;
    sum.final_loss = r2->final_loss;
    sum.sft_seconds += r2->seconds;
    sum.skipped_examples = static_cast<std::size_t>(r2->skipped_examples);
    tokens += r2->tokens;
  }
  sum.tokens_per_second = sum.sft_seconds > 0 ? tokens / sum.sft_seconds : 0;
  auto s = model.save(out_dir, tok_path, sum.steps);
  if (!s)
    return s.err();
  return sum;
}

} // namespace leap::runtime
