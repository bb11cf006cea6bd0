#include "common/strings.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/services.hpp"

#include <algorithm>
#include <iostream>

namespace leap::runtime {

bool cli_args::has(const std::string& f) const {
  return std::find(flags.begin(), flags.end(), f) != flags.end();
}

std::optional<std::string> cli_args::opt(const std::string& k) const {
  auto it = opts.find(k);
  if (it == opts.end() || it->second.empty())
    return std::nullopt;
  return it->second.back();
}

int usage_error(const std::string& msg) {
  std::cerr << "leap: " << msg << "\n(run 'leap --help' for usage)\n";
  return exit_usage;
}

namespace {

std::vector<command>& registry() {
  static std::vector<command> r;
  return r;
}

result<cli_args> parse_args(int argc, char** argv) {
  static const std::vector<std::string> with_value{"--config", "--set", "--task", "--source",
                                                   "--backend", "--out", "--seed",
                                                   "--checkpoint", "--sweep", "--listen",
                                                   "--head", "--join", "--tokenizer"};
  static const std::vector<std::string> bare{"--json", "--reference", "--help", "-h", "--resume",
                                             "--jsonl", "--by-arm"};
  cli_args a;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    std::string key = w, value;
    bool inline_value = false;
    if (starts_with(w, "--") && w.find('=') != std::string::npos) {
      key = w.substr(0, w.find('='));
      value = w.substr(w.find('=') + 1);
      inline_value = true;
    }
    if (std::find(with_value.begin(), with_value.end(), key) != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= argc)
          return make_error(key + " needs a value");
        value = argv[++i];
      }
      if (key == "--config")
        a.config_file = value;
      else if (key == "--set")
        a.sets.push_back(value);
      else
        a.opts[key].push_back(value);
    } else if (std::find(bare.begin(), bare.end(), w) != bare.end()) {
      a.flags.push_back(w == "-h" ? "--help" : w);
    } else if (starts_with(w, "-")) {
      return make_error("unknown option '" + w + "'");
    } else {
      a.words.push_back(w);
    }
  }
  return a;
}

// Defaults, then the --config file, then every --set in order, then the rules across keys.
result<config::leap_config> make_config(const cli_args& a) {
  auto cfg = config::defaults();
  config::key_origins origins;
  if (!a.config_file.empty())
    if (auto r = config::apply_file(cfg, a.config_file, {}, &origins); !r)
      return r.err();
  for (auto& s : a.sets)
    if (auto r = config::apply_override(cfg, s, &origins); !r)
      return r.err();
  if (auto b = a.opt("--backend"))
    if (auto r = config::apply_override(cfg, "environment.backend=" + *b, &origins); !r)
      return make_error("--backend " + *b + ": expected auto, cpu or cuda");
  if (auto r = config::check_consistency(cfg, origins); !r)
    return r.err();
  return cfg;
}

// The command whose words are the longest prefix of the command line's words.
const command* find_command(const std::vector<command>& table, const std::vector<std::string>& words) {
  const command* best = nullptr;
  for (const auto& c : table) {
    if (c.words.size() > words.size() || (best && best->words.size() >= c.words.size()))
      continue;
    if (std::equal(c.words.begin(), c.words.end(), words.begin()))
      best = &c;
  }
  return best;
}

} // namespace

command_registrar::command_registrar(command c) { registry().push_back(std::move(c)); }

const std::vector<command>& registered_commands() { return registry(); }

std::string usage_text(const std::vector<command>& table) {
  std::string out =
    "leap - multi-turn RL for CUDA kernels (LEAP), verification environment\n\n"
    "usage: leap [--config FILE] [--set section.key=value ...] COMMAND [options]\n\ncommands:\n";
  for (const auto& c : table) {
    auto line = "  " + join(c.words, " ") + (c.usage.empty() ? "" : " " + c.usage);
    auto summary = split_lines(c.summary);
    if (line.size() < 43 && !summary.empty()) {
      line.resize(43, ' ');
      out += line + summary.front() + "\n";
      summary.erase(summary.begin());
    } else {
      out += line + "\n";
    }
    for (auto& s : summary)
      out += std::string(43, ' ') + s + "\n";
  }
  out += "\nglobal options:\n"
         "  --config FILE          TOML configuration (unknown keys are errors; see docs/config.md)\n"
         "  --set section.key=v    override one key (repeatable), e.g. --set executor.trials=3\n"
         "  -h, --help             this text\n\n"
         "exit codes: 0 done (whatever the verdict), 1 leap failed to do what was asked, 2 bad\n"
         "usage/config/task\n";
  return out;
}

int dispatch(int argc, char** argv, const std::vector<command>& table,
             const std::function<int()>& elsewhere) {
  auto parsed = parse_args(argc, argv);
  if (!parsed)
    return usage_error(parsed.message());
  auto& a = *parsed;
  const command* c = a.has("--help") ? nullptr : find_command(table, a.words);
  if (!c && elsewhere)
    return elsewhere();
  if (a.has("--help") || a.words.empty()) {
    std::cout << usage_text(table);
    return a.words.empty() && !a.has("--help") ? exit_usage : exit_ok;
  }
  if (!c) {
    std::string known;
    for (const auto& k : table)
      known += (known.empty() ? "" : ", ") + join(k.words, " ");
    return usage_error("unknown command '" + join(a.words, " ") + "' (commands: " + known + ")");
  }
  if (!c->positional && a.words.size() > c->words.size())
    return usage_error(join(c->words, " ") + ": unexpected argument '" + a.words[c->words.size()]
                       + "'");
  command_context ctx{a, c->words.size(), nullptr, nullptr};
  if (c->setup == command::needs::nothing)
    return c->run(ctx);
  auto cfg = make_config(a);
  if (!cfg) {
    std::cerr << "leap: " << cfg.message() << "\n";
    return exit_usage;
  }
  ctx.cfg = &*cfg;
  if (c->setup == command::needs::config)
    return c->run(ctx);
  auto svc = make_services(*cfg, c->load_tasks);
  if (!svc) {
    std::cerr << "leap: " << svc.message() << "\n";
    return exit_usage;
  }
  ctx.svc = svc->get();
  return c->run(ctx);
}

} // namespace leap::runtime
