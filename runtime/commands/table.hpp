// The `leap` command line's verbs as one table: each entry names its words ("tasks verify"),
// its usage line and summary (the --help text is made from the table), what it needs built
// before it runs (nothing, the configuration, or the verification environment), and the
// function that runs it. The dispatcher (runtime/commands/cli.cpp) looks a command up by its
// words; an unknown one is a usage error that lists the known ones. runtime/'s own verbs are
// listed by builtin_commands(); a layer above runtime (bench/: `leap bench`) adds its verb with a
// command_registrar before main() runs. Read after static initialisation, on the main thread.
#pragma once

#include "runtime/config/config.hpp"
#include "runtime/workflows/exit_status.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leap::runtime {

struct services;

// The parsed command line.
struct cli_args {
  std::string config_file;
  std::vector<std::string> sets;                          // --set section.key=value
  std::vector<std::string> words;                         // command words and positional args
  std::map<std::string, std::vector<std::string>> opts;   // --flag value(s)
  std::vector<std::string> flags;                         // --json, --reference, --resume
  bool has(const std::string& flag) const;
  std::optional<std::string> opt(const std::string& key) const;
};

struct command_context {
  const cli_args& args;
  std::size_t word_count;            // how many of args.words name the command
  const config::leap_config* cfg;    // set for needs::config and needs::services
  services* svc;                     // set for needs::services
};

struct command {
  enum class needs { nothing, config, services };
  std::vector<std::string> words;    // e.g. {"tasks", "verify"}
  std::string usage;                 // the arguments after the words
  std::string summary;               // one or more lines of --help text
  needs setup = needs::config;
  bool load_tasks = true;            // needs::services: load the task suite
  bool positional = false;           // takes words after its own (else they are an error)
  std::function<int(const command_context&)> run;
};

// runtime/'s verbs, in --help order (runtime/commands/full_cli.cpp: links every command, and so
// LibTorch).
std::vector<command> builtin_commands();

// The verbs that need no LibTorch (runtime/commands/light_cli.cpp): what the `leap` front end runs
// itself.
std::vector<command> light_commands();

// Parses the command line and runs its verb from `table`. When `elsewhere` is set, --help, no verb
// and a verb not in `table` go to it instead (the front end hands them to `leap-torch`); without
// it they print the usage or a usage error naming the known verbs.
int dispatch(int argc, char** argv, const std::vector<command>& table,
             const std::function<int()>& elsewhere);

// Verbs added by layers above runtime (static registration: construct one at namespace scope).
struct command_registrar {
  explicit command_registrar(command c);
};
const std::vector<command>& registered_commands();

// The --help text: usage lines of every command, global options, exit codes.
std::string usage_text(const std::vector<command>& table);

// One command's verb entry (each file of runtime/commands/ defines one or two).
command tasks_list_command();
command tasks_show_command();
command tasks_verify_command();
command check_command();
command corpus_command();
command pretrain_command();
command eval_command();
command train_command();
command config_command();
command doctor_command();
command cache_command();
command version_command();
command node_command();
command serve_command();
command report_command();
command experiment_command();
command cluster_status_command();
command tokenize_command();

// Shared by the commands: a usage error (exit 2) with the hint to run --help.
int usage_error(const std::string& message);

} // namespace leap::runtime
