// A training run's directory: see run_dir.hpp.
#include "runtime/workflows/run_dir.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"
#include "policy/model/checkpoint_verify.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace leap::runtime {

namespace fs = std::filesystem;

result<jsonl_repair> truncate_jsonl(const std::string& path, std::int64_t step) {
  jsonl_repair r;
  std::error_code ec;
  if (!fs::exists(path, ec))
    return r;
  auto text = read_file(path);
  if (!text)
    return text.err();
  std::string kept, first_bad;
  std::size_t line_no = 0;
  for (auto& line : split_lines(*text)) {
    ++line_no;
    if (trim(line).empty())
      continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) {
      if (r.damaged++ == 0)
        first_bad = std::to_string(line_no);
      continue;
    }
    if (j["step"].get<std::int64_t>() <= step) {
      kept += line + "\n";
      ++r.kept;
    } else {
      ++r.after_step;
    }
  }
  if (r.damaged)
    r.warning = path + ": dropped " + std::to_string(r.damaged) + " damaged line(s) (first: line "
                + first_bad + "; a line cut by a kill or a full disk); the resumed run writes "
                "those steps again";
  if (auto w = write_file_atomic(path, kept); !w)
    return w.err();
  return r;
}

result<run_dir> run_dir::open(const std::string& dir, const std::string& who) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error("cannot create " + dir + ": " + ec.message());
  // One run per directory, before anything in it is read or truncated.
  auto lock = dir_lock::acquire(dir, who);
  if (!lock)
    return lock.err();
  return run_dir(dir, std::move(*lock));
}

bool run_dir::is_checkpoint(const std::string& dir) {
  return fs::exists(dir + "/config.json") && fs::exists(dir + "/model.safetensors");
}

result<resume_point> run_dir::read_resume_point(
  const std::vector<std::string>& tasks, const std::string& suite_hash,
  const std::function<void(const std::string&)>& warn) const {
  const std::string ck_dir = checkpoint_dir();
  resume_point p;
  auto st = read_file(ck_dir + "/trainer_state.json");
  try {
    auto j = nlohmann::json::parse(st ? *st : std::string("{}"));
    p.step = j.at("step").get<std::int64_t>();
    auto extra = j.at("extra");
    if (extra.at("tasks").get<std::vector<std::string>>() != tasks)
      return make_error("the checkpoint was trained on other tasks (train.tasks differs); resume "
                        "with the same configuration");
    if (extra.contains("task_suite") && extra.at("task_suite").get<std::string>() != suite_hash)
      warn("the task suite changed since the checkpoint (suite hash "
           + extra.at("task_suite").get<std::string>() + ", now " + suite_hash
           + "); task files were edited");
    if (!actors::progress_from_json(extra.at("progress").dump(), p.progress))
      throw std::runtime_error("bad progress record");
  } catch (const std::exception& e) {
    return make_error(ck_dir + "/trainer_state.json: " + e.what());
  }
  return p;
}

result<void> run_dir::truncate_logs(std::int64_t step,
                                    const std::function<void(const std::string&)>& warn) const {
  for (const auto& path : {metrics_path(), groups_path()}) {
    auto r = truncate_jsonl(path, step);
    if (!r)
      return r.err();
    if (r->warning)
      warn(*r->warning);
  }
  return {};
}

std::vector<std::string> run_dir::remove_logs() const {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& path : {metrics_path(), groups_path()})
    if (fs::exists(path)) {
      fs::remove(path, ec);
      removed.push_back(path);
    }
  return removed;
}

// Removes `<base>.<step>` directories: checkpoints the learner staged that a killed run never
// promoted (the promoted one is `checkpoint` itself).
void run_dir::remove_staged() const {
  std::error_code ec;
  fs::path b(staged_base());
  const auto prefix = b.filename().string() + ".";
  for (auto& e : fs::directory_iterator(b.parent_path(), ec))
    if (e.is_directory(ec) && e.path().filename().string().rfind(prefix, 0) == 0)
      fs::remove_all(e.path(), ec);
}

result<void> run_dir::promote(std::int64_t step) const {
  return policy::promote_checkpoint(staged_base() + "." + std::to_string(step), checkpoint_dir());
}

std::optional<long long> run_dir::checkpoint_step() const {
  auto text = read_file(checkpoint_dir() + "/trainer_state.json");
  if (!text)
    return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.contains("step") || !j["step"].is_number_integer())
    return std::nullopt;
  return j["step"].get<long long>();
}

} // namespace leap::runtime
