// The key registry: every configuration key is declared once, in documentation order (the sections
// in schema_keys_*.cpp, built here), and the registry's plumbing.
#include "runtime/config/schema.hpp"

#include "runtime/config/schema_keys.hpp"

namespace leap::config {

namespace {

registry build_registry() {
  using namespace keys;
  registry r;
  register_environment(r);
  register_compiler(r);
  register_executor(r);
  register_emulation(r);
  register_cuda(r);
  register_policy(r);
  register_sft(r);
  register_eval(r);
  register_train(r);
  register_learner(r);
  register_node(r);
  register_cluster(r);
  register_serve(r);
  register_generation(r);
  register_openai(r);
  return r;
}

} // namespace

const registry& schema() {
  static const registry r = [] {
    registry built = build_registry();
    built.build_file_schema();
    return built;
  }();
  return r;
}

// ---------------------------------------------------------------------------------------------
// Registry plumbing.

const key_descriptor* section_descriptor::find(std::string_view key) const {
  for (const auto& k : keys)
    if (k.name == key) return &k;
  return nullptr;
}

const section_descriptor* registry::find_section(std::string_view name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

const key_descriptor* registry::find_key(std::string_view section, std::string_view key) const {
  const section_descriptor* s = find_section(section);
  return s ? s->find(key) : nullptr;
}

} // namespace leap::config
