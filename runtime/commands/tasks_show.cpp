// `leap tasks show --task NAME [--reference]`: prints one task as it is stored or generated (its
// task.toml text, and its reference with --reference), bundled or generated alike. For a
// generated task it adds comment lines naming its split kind, canonical form and composition.
// Needs no LibTorch; CLI main thread.
#include "leap/build_info.hpp"
#include "env/task.hpp"
#include "env/taskgen/generator.hpp"
#include "runtime/commands/table.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace leap::runtime {

namespace {

int run_show(const command_context& ctx) {
  const auto& cfg = *ctx.cfg;
  auto name = ctx.args.opt("--task");
  if (!name) {
    std::cerr << "leap: tasks show needs --task NAME\n";
    return exit_usage;
  }
  const bool with_ref = ctx.args.has("--reference");
  if (taskgen::is_generated_name(*name)) {
    auto t = taskgen::generate_task(cfg.environment.generated_seed, *name);
    if (!t) {
      std::cerr << "leap: " << t.message() << "\n";
      return exit_usage;
    }
    std::printf("# %s: generated, seed %llu, %s (%s split)\n# operator:    %s\n# composition: %s\n",
                t->name.c_str(), static_cast<unsigned long long>(cfg.environment.generated_seed),
                taskgen::to_string(t->kind), env::to_string(t->spec.split),
                taskgen::canonical_form(t->op).c_str(), taskgen::composition(t->op).c_str());
    std::cout << t->toml;
    if (with_ref)
      std::cout << "\n# ---- reference.cu ----\n" << t->reference;
    return exit_ok;
  }
  auto dir = cfg.environment.tasks_dir.empty() ? std::string(build_info::source_dir) + "/tasks"
                                               : cfg.environment.tasks_dir;
  if (const char* home = std::getenv("LEAP_HOME"); home && cfg.environment.tasks_dir.empty())
    dir = std::string(home) + "/tasks";
  auto t = env::find_task(dir, *name);
  if (!t) {
    std::cerr << "leap: " << t.message() << "\n";
    return exit_usage;
  }
  std::cout << t->spec_source;
  if (with_ref)
    std::cout << "\n# ---- " << t->reference_path << " ----\n" << t->reference_source;
  return exit_ok;
}

} // namespace

command tasks_show_command() {
  return {{"tasks", "show"}, "--task NAME [--reference]",
          "print one task's task.toml (and reference): bundled, or generated (gen_<family>_<t|i|c><n>)",
          command::needs::config, false, false, run_show};
}

} // namespace leap::runtime
