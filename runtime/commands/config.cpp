// `leap config show|defaults|docs`: the effective configuration as TOML, every key with its
// default and meaning, and docs/config.md (all rendered from the key registry).
#include "runtime/commands/table.hpp"

#include <iostream>

namespace leap::runtime {

namespace {

int run_config(const command_context& ctx) {
  const auto& w = ctx.args.words;
  auto sub = w.size() > ctx.word_count ? w[ctx.word_count] : std::string();
  if (w.size() > ctx.word_count + 1)
    return usage_error("config: unexpected argument '" + w[ctx.word_count + 1] + "'");
  if (sub == "show") {
    std::cout << config::to_toml(*ctx.cfg);
    return exit_ok;
  }
  if (sub == "docs") {
    std::cout << config::render_docs_markdown();
    return exit_ok;
  }
  if (sub == "defaults") {
    std::cout << config::to_toml(config::defaults(), true);
    return exit_ok;
  }
  return usage_error("config needs 'show', 'defaults' or 'docs'");
}

} // namespace

command config_command() {
  return {{"config"}, "show|defaults|docs",
          "print the effective configuration as TOML, every key\nwith its default and meaning, "
          "or docs/config.md",
          command::needs::config, false, true, run_config};
}

} // namespace leap::runtime
