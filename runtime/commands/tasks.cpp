// `leap tasks list`: the task suite, its splits and its hash. Needs no LibTorch (`leap tasks
// verify`, which compares with LibTorch oracles, lives in verify.cpp).
#include "leap/build_info.hpp"
#include "common/strings.hpp"
#include "env/task.hpp"
#include "env/taskgen/generator.hpp"
#include "runtime/pipeline/services.hpp"
#include "runtime/commands/table.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace leap::runtime {

namespace {

int run_list(const command_context& ctx) {
  const auto& cfg = *ctx.cfg;
  auto dir = cfg.environment.tasks_dir.empty() ? std::string(build_info::source_dir) + "/tasks"
                                               : cfg.environment.tasks_dir;
  if (const char* home = std::getenv("LEAP_HOME"); home && cfg.environment.tasks_dir.empty())
    dir = std::string(home) + "/tasks";
  auto suite = env::load_task_suite(dir);
  if (!suite) {
    std::cerr << "leap: " << suite.message() << "\n";
    return exit_usage;
  }
  auto gen = taskgen::generated_specs(generated_options(cfg));
  if (!gen) {
    std::cerr << "leap: environment.generated_tasks: " << gen.message() << "\n";
    return exit_usage;
  }
  suite->insert(suite->end(), gen->begin(), gen->end());
  if (ctx.args.has("--json")) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& t : *suite) {
      nlohmann::json sizes = nlohmann::json::array();
      for (auto& s : t.sizes)
        sizes.push_back(s);
      arr.push_back({{"name", t.name}, {"level", t.level}, {"split", env::to_string(t.split)},
                     {"category", env::to_string(t.category)}, {"signature", t.signature},
                     {"sizes", sizes}, {"atol", t.atol}, {"rtol", t.rtol}});
    }
    std::cout << arr.dump() << "\n";
    return exit_ok;
  }
  std::printf("%-20s %-5s %-5s %-11s %-5s %s\n", "task", "level", "split", "category", "sizes",
              "signature");
  for (auto& t : *suite) {
    std::string sig = t.signature.substr(t.signature.find("solution"));
    std::printf("%-20s %-5d %-5s %-11s %-5zu %s\n", t.name.c_str(), t.level,
                env::to_string(t.split), env::to_string(t.category), t.sizes.size(), sig.c_str());
  }
  std::printf("%zu tasks in %s (%zu train, %zu eval; suite hash %s)\n", suite->size(), dir.c_str(),
              env::tasks_of_split(*suite, env::task_split::train).size(),
              env::tasks_of_split(*suite, env::task_split::eval).size(),
              env::task_suite_hash(*suite).c_str());
  return exit_ok;
}

} // namespace

command tasks_list_command() {
  return {{"tasks", "list"}, "[--json]", "list the task suite", command::needs::config, true,
          false, run_list};
}

} // namespace leap::runtime
