// The verification environment assembled from a config: resolved directories, the toolchain,
// the chosen backend, the task catalog, and the shared process runner, compiler and executor.
// Built once by a command on the main thread (blocking: probes tools); afterwards read-only and
// shared with the pool actors. No CAF here.
#pragma once

#include "common/result.hpp"
#include "env/compiler.hpp"
#include "env/executor.hpp"
#include "env/process.hpp"
#include "env/task.hpp"
#include "env/taskgen/generator.hpp"
#include "env/toolchain.hpp"
#include "runtime/config/config.hpp"

#include <map>
#include <memory>
#include <string>

namespace leap::runtime {

struct services {
  config::leap_config cfg;
  env::toolchain tools;
  env::backend backend = env::backend::cpu; // after resolving "auto"
  std::string backend_reason; // why (device name, or why no device is usable)
  std::string tasks_dir, cache_dir, work_dir;
  std::shared_ptr<const std::map<std::string, env::task_spec>> tasks;
  std::shared_ptr<env::process_runner> runner;
  std::shared_ptr<env::compiler> compiler;
  std::shared_ptr<env::executor> executor;
  env::sandbox_capabilities sandbox; // probed once at start

  ~services(); // removes work_dir when leap created it
  bool owns_work_dir = false;
};

// Loads the task suite too; `load_tasks = false` skips it (for `leap doctor`).
result<std::unique_ptr<services>> make_services(const config::leap_config& cfg, bool load_tasks = true);

std::string default_cache_dir();
// The generated-suite options of a configuration (environment.generated_*).
taskgen::gen_options generated_options(const config::leap_config& cfg);
// The generated task names (gen_<family>_<t|i|c><n>) of `names` that the catalog lacks are
// generated under environment.generated_seed (each family drawn once) and added, so task lists
// and `leap check|tasks verify --task gen_...` work without enabling the whole generated suite.
// Call before an evaluator holds the catalog (CLI main thread). Other names are left alone; a
// generated name that does not exist is an error starting with `what`, the key or option that
// listed it ("train.tasks", "--task").
result<void> add_generated_tasks(services& s, const std::vector<std::string>& names,
                                 const std::string& what);

} // namespace leap::runtime
