// The corpus-labelling workflow: see corpus_labels.hpp.
#include "runtime/workflows/corpus_labels.hpp"

#include "runtime/workflows/label_cache.hpp"

#include "common/fs.hpp"
#include "common/json_text.hpp"
#include "common/sha256.hpp"
#include "policy/corpus/kernel_corpus.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace leap::runtime {

namespace fs = std::filesystem;

namespace {

struct label {
  env::status st = env::status::rejected;
  std::string reason, feedback;
  bool emulation_unsupported = false;
  bool cached = false;
};

std::string label_key(const services& svc, const env::task_spec& t, const std::string& source) {
  std::string k = "leap-corpus-label-v1\n" + std::string(env::to_string(svc.backend)) + "\n" + t.name + "\n"
                  + std::to_string(svc.cfg.executor.trials) + "\n" + std::to_string(t.atol) + " "
                  + std::to_string(t.rtol) + "\n" + sha256_hex(t.reference_source) + "\n"
                  + sha256_hex(read_file(t.spec_path).ok() ? *read_file(t.spec_path) : t.spec_path) + "\n" + source;
  return sha256_hex(k);
}

bool load_label(const std::string& path, label& l) {
  cached_label c;
  std::string problem;
  switch (read_cached_label(path, c, problem)) {
    case label_read::miss:
      return false;
    case label_read::repaired:
      std::fprintf(stderr, "leap corpus: warning: %s; removed, labelling the variant again\n",
                   problem.c_str());
      return false;
    case label_read::hit:
      break;
  }
  l.st = c.st;
  l.reason = c.reason;
  l.feedback = c.feedback;
  l.emulation_unsupported = c.emulation_unsupported;
  l.cached = true;
  return true;
}

nlohmann::json base_record(const corpus::variant& v) {
  nlohmann::json j{{"task", v.task},       {"family", v.family}, {"kind", corpus::to_string(v.kind)},
                   {"variant", v.name},    {"strategy", v.strategy}};
  if (v.kind == corpus::variant_kind::buggy) {
    j["bug"] = corpus::to_string(v.bug);
    j["origin"] = v.origin;
  }
  return j;
}

} // namespace

corpus_options corpus_options_of(const config::sft_section& sft) {
  corpus_options co;
  co.bugs_per_kind = sft.bugs_per_kind;
  co.generated_bugs_per_kind = sft.generated_bugs_per_kind;
  co.generated_references_by_construction =
      sft.generated_reference_labels == config::generated_labels::construction;
  co.solutions_per_task = sft.solutions_per_task;
  co.bug_kinds = sft.bug_kinds;
  return co;
}

result<corpus_summary> build_corpus(services& svc, evaluator& ev, const corpus_options& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (opt.out_dir.empty())
    return make_error("corpus: no output directory");
  auto names = env::select_tasks(*svc.tasks, opt.tasks_key, opt.tasks, {env::task_split::train});
  if (!names)
    return make_error("corpus: " + names.message());
  std::vector<env::task_spec> tasks;
  for (auto& n : *names)
    tasks.push_back(svc.tasks->at(n));
  corpus::generate_options go;
  go.seed = opt.seed;
  go.bugs_per_kind = opt.bugs_per_kind;
  go.generated_bugs_per_kind = opt.generated_bugs_per_kind;
  go.generated_bug_tasks = opt.generated_bug_tasks;
  go.solutions_per_task = opt.solutions_per_task;
  for (auto& name : opt.bug_kinds) {
    corpus::bug_kind k;
    if (!corpus::parse_bug_kind(name, k) || k == corpus::bug_kind::none)
      return make_error("corpus: sft.bug_kinds: '" + name + "' is not a bug kind");
    go.kinds.push_back(k);
  }
  auto gen = corpus::generate(tasks, go);
  if (!gen)
    return gen.err();
  const auto& vars = *gen;

  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);
  if (ec)
    return make_error("corpus: cannot create " + opt.out_dir + ": " + ec.message());
  const std::string label_dir = svc.cache_dir + "/corpus-labels";
  if (opt.reuse_labels) {
    fs::create_directories(label_dir, ec);
    if (ec)
      return make_error("corpus: cannot create " + label_dir + ": " + ec.message());
  }

  // 1. Labels: cache hits first, the rest through the evaluator in batches.
  corpus_summary sum;
  std::vector<label> labels(vars.size());
  std::vector<bool> have(vars.size(), false);
  std::vector<std::string> keys(vars.size());
  std::vector<std::size_t> unlabelled;
  std::vector<bool> by_construction(vars.size(), false);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (opt.generated_references_by_construction && corpus::is_generated_reference(vars[i])) {
      labels[i].st = env::status::correct;
      have[i] = by_construction[i] = true;
      ++sum.labels_by_construction;
      continue;
    }
    keys[i] = label_key(svc, svc.tasks->at(vars[i].task), vars[i].source);
    if (opt.reuse_labels && load_label(label_dir + "/" + keys[i] + ".json", labels[i])) {
      have[i] = true;
      ++sum.label_cache_hits;
    } else {
      unlabelled.push_back(i);
    }
  }
  std::size_t done = vars.size() - unlabelled.size();
  if (opt.progress)
    opt.progress(done, vars.size());
  const std::size_t batch = std::max<std::size_t>(1, opt.batch);
  for (std::size_t b = 0; b < unlabelled.size(); b += batch) {
    std::vector<check_item> items;
    std::vector<std::size_t> idx;
    for (std::size_t k = b; k < std::min(unlabelled.size(), b + batch); ++k) {
      auto i = unlabelled[k];
      items.push_back({vars[i].task, vars[i].source, false, false});
      idx.push_back(i);
    }
    auto out = ev.evaluate(items);
    for (std::size_t k = 0; k < idx.size(); ++k) {
      auto i = idx[k];
      if (!out[k]) {
        ++sum.leap_errors;
        std::cerr << "leap corpus: " << vars[i].task << "/" << vars[i].name << ": " << out[k].message() << "\n";
        continue;
      }
      const auto& v = out[k]->v;
      auto& l = labels[i];
      l.st = v.st;
      l.reason = v.reason;
      l.feedback = v.feedback;
      l.emulation_unsupported = v.emulation_unsupported;
      have[i] = true;
      if (opt.reuse_labels) {
        cached_label c{v.st, v.reason, v.feedback, v.emulation_unsupported};
        (void)write_cached_label(label_dir + "/" + keys[i] + ".json", c, vars[i].task, vars[i].name);
      }
    }
    done += idx.size();
    if (opt.progress)
      opt.progress(done, vars.size());
  }

  // 2. Records.
  std::map<std::string, std::map<std::string, std::size_t>> by_name; // task -> name -> index
  for (std::size_t i = 0; i < vars.size(); ++i)
    by_name[vars[i].task][vars[i].name] = i;
  auto passed = [&](std::size_t i) { return have[i] && labels[i].st == env::status::correct; };

  std::string jsonl;
  // task -> solution|buggy|repair -> status (or "count") -> n
  std::map<std::string, std::map<std::string, std::map<std::string, std::size_t>>> counts;
  std::map<std::string, std::size_t> totals;
  nlohmann::json failed = nlohmann::json::array(), benign = nlohmann::json::array();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (!have[i])
      continue;
    const auto& v = vars[i];
    const auto& l = labels[i];
    const bool is_sol = v.kind == corpus::variant_kind::solution;
    auto j = base_record(v);
    j["code"] = v.source;
    j["status"] = env::to_string(l.st);
    j["reason"] = l.reason;
    j["feedback"] = l.feedback;
    j["emulation_unsupported"] = l.emulation_unsupported;
    j["target"] = is_sol && l.st == env::status::correct;
    j["label_cached"] = l.cached;
    if (by_construction[i])
      j["label"] = "construction";
    jsonl += dump_lossy(j) + "\n";
    ++sum.variants;
    ++totals[env::to_string(l.st)];
    counts[v.task][is_sol ? "solution" : "buggy"][env::to_string(l.st)] += 1;
    if (l.emulation_unsupported)
      ++sum.emulation_unsupported;
    if (is_sol) {
      ++sum.solutions;
      if (l.st == env::status::correct) {
        ++sum.targets;
      } else {
        ++sum.failed_solutions;
        failed.push_back({{"task", v.task}, {"variant", v.name}, {"status", env::to_string(l.st)},
                          {"reason", l.reason}, {"feedback", l.feedback}});
      }
      continue;
    }
    ++sum.buggy;
    if (l.st == env::status::correct) {
      ++sum.benign_bugs;
      benign.push_back({{"task", v.task}, {"variant", v.name}});
      continue;
    }
    // A repair: the fix is the origin when it really passed, else another passing solution of the
    // task with the same strategy, else any passing solution of the task.
    std::size_t fix = vars.size();
    auto o = by_name[v.task].find(v.origin);
    if (o != by_name[v.task].end() && passed(o->second))
      fix = o->second;
    for (int pass = 0; pass < 2 && fix == vars.size(); ++pass)
      for (std::size_t k = 0; k < vars.size(); ++k)
        if (vars[k].task == v.task && vars[k].kind == corpus::variant_kind::solution && passed(k)
            && (pass == 1 || vars[k].strategy == v.strategy)) {
          fix = k;
          break;
        }
    if (fix == vars.size())
      continue;
    const auto& t = svc.tasks->at(v.task);
    auto r = base_record(v);
    r["kind"] = "repair";
    r["prompt"] = t.description + "\n" + t.signature;
    r["buggy_code"] = v.source;
    r["status"] = env::to_string(l.st);
    r["reason"] = l.reason;
    r["feedback"] = l.feedback;
    r["fixed_variant"] = vars[fix].name;
    r["fixed_code"] = vars[fix].source;
    r["code"] = vars[fix].source;
    jsonl += dump_lossy(r) + "\n";
    ++sum.repairs;
    counts[v.task]["repair"]["count"] += 1;
  }
  nlohmann::json per_task = nlohmann::json::object();
  for (auto& [task, kinds] : counts)
    for (auto& [kind, m] : kinds) {
      if (kind == "repair")
        per_task[task]["repair"] = m.at("count");
      else
        per_task[task][kind] = m;
    }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::json stats{{"seed", opt.seed},
                       {"backend", env::to_string(svc.backend)},
                       {"seconds", sum.seconds},
                       {"variants", sum.variants},
                       {"solutions", sum.solutions},
                       {"buggy", sum.buggy},
                       {"repairs", sum.repairs},
                       {"targets", sum.targets},
                       {"failed_solutions", sum.failed_solutions},
                       {"benign_bugs", sum.benign_bugs},
                       {"emulation_unsupported", sum.emulation_unsupported},
                       {"label_cache_hits", sum.label_cache_hits},
                       {"labels_by_construction", sum.labels_by_construction},
                       {"leap_errors", sum.leap_errors},
                       {"status_totals", totals},
                       {"per_task", per_task},
                       {"failed_solution_list", failed},
                       {"benign_bug_list", benign}};
  sum.corpus_path = opt.out_dir + "/corpus.jsonl";
  sum.stats_path = opt.out_dir + "/corpus_stats.json";
  if (auto w = write_file_atomic(sum.corpus_path, jsonl); !w)
    return w.err();
  if (auto w = write_file_atomic(sum.stats_path, dump_lossy(stats, 2) + "\n"); !w)
    return w.err();
  return sum;
}

} // namespace leap::runtime
