// The key registry's sections, one register_<section>() each, in three files by what the keys
// configure: schema_keys_environment.cpp (where tasks live, the compiler, the executor, the CPU
// emulation, CUDA), schema_keys_training.cpp (the policy, SFT, eval, RL training, the learner) and
// schema_keys_services.cpp (nodes, the cluster, `leap serve`, where eval samples from, OpenAI
// servers). Internal: only schema.cpp, which builds the registry once in documentation order,
// calls them (on the first schema() call, any thread; the registry is read-only after).
// To add a section: a struct in config.hpp, a member in leap_config, a register_<section>() in the
// file of its kind, declared here and called from build_registry() in schema.cpp.
#pragma once

#include "runtime/config/schema.hpp"

namespace leap::config::keys {

// schema_keys_environment.cpp
void register_environment(registry& r);
void register_compiler(registry& r);
void register_executor(registry& r);
void register_emulation(registry& r);
void register_cuda(registry& r);

// schema_keys_training.cpp
void register_policy(registry& r);
void register_sft(registry& r);
void register_eval(registry& r);
void register_train(registry& r);
void register_learner(registry& r);

// schema_keys_services.cpp
void register_node(registry& r);
void register_cluster(registry& r);
void register_serve(registry& r);
void register_generation(registry& r);
void register_openai(registry& r);

} // namespace leap::config::keys
