#include "env/task.hpp"

#include "common/sha256.hpp"
#include "env/shape_expr.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace leap::env {

const char* to_string(arg_role r) {
  switch (r) {
    case arg_role::input: return "input";
    case arg_role::output: return "output";
    case arg_role::inout: return "inout";
    case arg_role::size: return "size";
  }
  return "?";
}

const char* to_string(task_split s) {
  switch (s) {
    case task_split::train: return "train";
    case task_split::eval: return "eval";
  }
  return "?";
}

const std::vector<task_category>& all_task_categories() {
  static const std::vector<task_category> all{
    task_category::activation, task_category::elementwise, task_category::reduction,
    task_category::norm,       task_category::softmax,     task_category::pooling,
    task_category::convolution, task_category::matmul,     task_category::loss,
    task_category::scan,       task_category::indexing,    task_category::attention,
    task_category::fused,      task_category::layout};
  return all;
}

const char* to_string(task_category c) {
  switch (c) {
    case task_category::activation: return "activation";
    case task_category::elementwise: return "elementwise";
    case task_category::reduction: return "reduction";
    case task_category::norm: return "norm";
    case task_category::softmax: return "softmax";
    case task_category::pooling: return "pooling";
    case task_category::convolution: return "convolution";
    case task_category::matmul: return "matmul";
    case task_category::loss: return "loss";
    case task_category::scan: return "scan";
    case task_category::indexing: return "indexing";
    case task_category::attention: return "attention";
    case task_category::fused: return "fused";
    case task_category::layout: return "layout";
  }
  return "?";
}

result<task_split> parse_task_split(std::string_view text) {
  if (text == "train")
    return task_split::train;
  if (text == "eval")
    return task_split::eval;
  return make_error("'" + std::string(text) + "' is not a split (one of: train, eval)");
}

result<task_category> parse_task_category(std::string_view text) {
  std::string list;
  for (auto c : all_task_categories()) {
    if (text == to_string(c))
      return c;
    list += (list.empty() ? "" : ", ") + std::string(to_string(c));
  }
  return make_error("'" + std::string(text) + "' is not a category (one of: " + list + ")");
}

namespace {

// SHA-256 over each task's name, task.toml and reference, in name order (length-prefixed fields),
// cut to 16 hex digits.
std::string suite_hash_of(std::vector<const task_spec*> tasks) {
  std::sort(tasks.begin(), tasks.end(),
            [](const task_spec* a, const task_spec* b) { return a->name < b->name; });
  sha256 h;
  for (auto* t : tasks)
    h.field(t->name).field(t->spec_source).field(t->reference_source);
  return h.hex_digest().substr(0, 16);
}

} // namespace

std::string task_suite_hash(const std::vector<task_spec>& suite) {
  std::vector<const task_spec*> tasks;
  for (auto& t : suite)
    tasks.push_back(&t);
  return suite_hash_of(std::move(tasks));
}

std::string task_suite_hash(const std::map<std::string, task_spec>& catalog) {
  std::vector<const task_spec*> tasks;
  for (auto& [name, t] : catalog)
    tasks.push_back(&t);
  return suite_hash_of(std::move(tasks));
}

result<std::vector<std::string>> select_tasks(const std::map<std::string, task_spec>& catalog,
                                              const std::string& key,
                                              const std::vector<std::string>& listed,
                                              const std::vector<task_split>& allowed) {
  auto ok = [&](task_split s) { return std::find(allowed.begin(), allowed.end(), s) != allowed.end(); };
  std::string allowed_text;
  for (auto s : allowed)
    allowed_text += (allowed_text.empty() ? "" : " or ") + std::string(to_string(s));
  std::vector<std::string> out;
  if (listed.empty()) {
    for (auto& [name, t] : catalog)
      if (ok(t.split))
        out.push_back(name);
    if (out.empty())
      return make_error(key + ": empty, and the task suite has no " + allowed_text + "-split task");
    return out;
  }
  std::set<std::string> seen;
  for (auto& name : listed) {
    auto it = catalog.find(name);
    if (it == catalog.end()) {
      std::string known;
      for (auto& [n, t] : catalog)
        if (ok(t.split))
          known += (known.empty() ? "" : ", ") + n;
      return make_error(key + ": unknown task '" + name + "' (" + allowed_text + "-split tasks: " +
                        known + ")");
    }
    if (!ok(it->second.split))
      return make_error(key + ": '" + name + "' is " +
                        (it->second.split == task_split::eval
                           ? "an eval-split task (held out: never in the SFT corpus or the RL draw)"
                           : "a train-split task") +
                        " but " + key + " may list only " + allowed_text + "-split tasks (" +
                        it->second.spec_path + " says split = \"" + to_string(it->second.split) + "\")");
    if (!seen.insert(name).second)
      return make_error(key + ": '" + name + "' is listed twice");
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> tasks_of_split(const std::vector<task_spec>& suite, task_split s) {
  std::vector<std::string> out;
  for (auto& t : suite)
    if (t.split == s)
      out.push_back(t.name);
  return out;
}

long long task_spec::elements(std::size_t arg_index, const size_set& s) const {
  auto r = eval_shape(args[arg_index].shape, s);
  return r ? *r : 0;
}

result<std::vector<task_spec>> load_task_suite(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(dir + ": task directory not found");
  std::vector<task_spec> out;
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "task.toml"))
      files.push_back(e.path() / "task.toml");
  if (files.empty())
    return make_error(dir + ": no tasks (expected <dir>/<name>/task.toml)");
  for (auto& f : files) {
    auto t = load_task(f.string());
    if (!t)
      return t.err();
    out.push_back(std::move(*t));
  }
  std::sort(out.begin(), out.end(), [](const task_spec& a, const task_spec& b) {
    return a.level != b.level ? a.level < b.level : a.name < b.name;
  });
  return out;
}

result<task_spec> find_task(const std::string& dir, const std::string& name) {
  auto path = fs::path(dir) / name / "task.toml";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::string known;
    for (auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory() && fs::exists(e.path() / "task.toml"))
        known += (known.empty() ? "" : ", ") + e.path().filename().string();
    return make_error("unknown task '" + name + "' in " + dir + " (known: " + known + ")");
  }
  return load_task(path.string());
}

} // namespace leap::env
