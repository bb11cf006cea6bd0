// load_run: see run_data.hpp.
#include "runtime/report/run_data.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace leap::report {

namespace {

// Reads field `key` of `j` into `out`; a missing field keeps the default, a wrong type is an error.
template <class T>
result<void> field(const nlohmann::json& j, const char* key, T& out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    return {};
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string())
      return make_error(where + ": field " + key + ": expected a string");
  } else {
    if (!it->is_number())
      return make_error(where + ": field " + key + ": expected a number");
  }
  out = it->get<T>();
  return {};
}

result<step_row> parse_row(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object())
    return make_error(where + ": expected a JSON object");
  step_row r;
  if (!j.contains("step"))
    return make_error(where + ": field step: missing");
  for (auto res : {field(j, "step", r.step, where), field(j, "acc_at_1", r.acc_at_1, where),
                   field(j, "acc_at_2", r.acc_at_2, where), field(j, "acc_at_3", r.acc_at_3, where),
                   field(j, "turns_per_pass", r.turns_per_pass, where),
                   field(j, "activated_groups", r.activated_groups, where),
                   field(j, "compiles", r.compiles, where),
                   field(j, "cache_hits", r.cache_hits, where),
                   field(j, "compiles_later_turns", r.compiles_later_turns, where),
                   field(j, "attempts", r.attempts, where),
                   field(j, "step_seconds", r.step_seconds, where), field(j, "loss", r.loss, where),
                   field(j, "kl", r.kl, where), field(j, "clip_fraction", r.clip_fraction, where),
                   field(j, "grad_norm", r.grad_norm, where),
                   field(j, "util_generate", r.util_generate, where),
                   field(j, "util_compile", r.util_compile, where),
                   field(j, "util_execute", r.util_execute, where),
                   field(j, "outcome", r.outcome, where)})
    if (!res)
      return res.err();
  if (auto res = field(j, "dropped", r.dropped, where); !res)
    return res.err();
  if (auto it = j.find("infra"); it != j.end() && !it->is_null()) {
    if (!it->is_object())
      return make_error(where + ": field infra: expected an object");
    for (auto res : {field(*it, "jobs_retried", r.jobs_retried, where + ": infra"),
                     field(*it, "nodes_lost", r.nodes_lost, where + ": infra"),
                     field(*it, "nodes_rejoined", r.nodes_rejoined, where + ": infra"),
                     field(*it, "jobs_rerun", r.jobs_rerun, where + ": infra")})
      if (!res)
        return res.err();
  }
  if (auto it = j.find("heldout"); it != j.end() && !it->is_null()) {
    if (!it->is_object())
      return make_error(where + ": field heldout: expected an object");
    const std::string w = where + ": heldout";
    heldout_row h;
    for (auto res : {field(*it, "acc_at_1", h.acc_at_1, w), field(*it, "acc_at_3", h.acc_at_3, w),
                     field(*it, "tasks", h.tasks, w), field(*it, "attempts", h.attempts, w),
                     field(*it, "compiles", h.compiles, w),
                     field(*it, "cache_hits", h.cache_hits, w), field(*it, "seconds", h.seconds, w)})
      if (!res)
        return res.err();
    if (auto sets = it->find("sets"); sets != it->end() && !sets->is_null()) {
      if (!sets->is_object())
        return make_error(w + ": field sets: expected an object");
      for (auto& [name, sj] : sets->items()) {
        if (!sj.is_object())
          return make_error(w + ": sets: field " + name + ": expected an object");
        heldout_set_row hs;
        hs.name = name;
        const std::string ws = w + ": sets: " + name;
        for (auto res : {field(sj, "tasks", hs.tasks, ws), field(sj, "attempts", hs.attempts, ws),
                         field(sj, "acc_at_1", hs.acc_at_1, ws),
                         field(sj, "acc_at_3", hs.acc_at_3, ws)})
          if (!res)
            return res.err();
        h.sets.push_back(hs);
      }
    }
    r.heldout = std::move(h);
  }
  if (auto it = j.find("recovery"); it != j.end() && !it->is_null()) {
    if (!it->is_number())
      return make_error(where + ": field recovery: expected a number or null");
    r.recovery = it->get<double>();
  }
  return r;
}

} // namespace

result<run_data> load_run(const std::string& dir) {
  namespace fs = std::filesystem;
  run_data run;
  run.dir = dir;
  auto p = fs::path(dir).lexically_normal();
  run.name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  const std::string path = (fs::path(dir) / "metrics.jsonl").string();
  auto text = read_file(path);
  if (!text)
    return make_error(dir + ": not a leap train run directory (" + text.message() + ")");
  auto lines = split_lines(*text);
  const bool ends_clean = !text->empty() && text->back() == '\n';
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty())
      continue;
    const std::string where = path + ":" + std::to_string(i + 1);
    auto j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded()) {
      if (i + 1 == lines.size() && !ends_clean) {
        run.warning = where + ": skipped a torn last line (the run was killed while writing it)";
        continue;
      }
      return make_error(where + ": not JSON");
    }
    auto row = parse_row(j, where);
    if (!row)
      return row.err();
    run.steps.push_back(*row);
  }
  double wall = 0, elapsed = 0;
  long long spent = 0;
  for (auto& s : run.steps) {
    wall += s.step_seconds;
    elapsed += s.step_seconds + (s.heldout ? s.heldout->seconds : 0);
    spent += s.compile_requests();
    run.wall_seconds.push_back(wall);
    run.elapsed_seconds.push_back(elapsed);
    run.compile_requests_spent.push_back(spent);
  }
  // The checkpoint's record of what the run trained on (optional: an early-killed run has none).
  if (auto st = read_file((fs::path(dir) / "checkpoint" / "trainer_state.json").string())) {
    auto j = nlohmann::json::parse(*st, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("extra") && j["extra"].is_object()) {
      const auto& e = j["extra"];
      if (e.contains("tasks") && e["tasks"].is_array())
        for (auto& t : e["tasks"])
          if (t.is_string())
            run.tasks.push_back(t.get<std::string>());
      if (e.contains("task_suite") && e["task_suite"].is_string())
        run.task_suite = e["task_suite"].get<std::string>();
    }
  }
  return run;
}

} // namespace leap::report
