// The whole command table: every verb of runtime/ plus the registered ones (`leap bench`).
// Linked only into `leap-torch`, since several verbs load LibTorch.
#include "runtime/commands/cli.hpp"
#include "runtime/commands/table.hpp"

namespace leap::runtime {

std::vector<command> builtin_commands() {
  return {tasks_list_command(), tasks_show_command(), tasks_verify_command(), check_command(),  corpus_command(),
          pretrain_command(),   eval_command(),         train_command(),  experiment_command(),
          config_command(),
          node_command(),       serve_command(),        cluster_status_command(), cache_command(),
          tokenize_command(),   report_command(),       doctor_command(),       version_command()};
}

int run_cli(int argc, char** argv) {
  auto table = builtin_commands();
  for (const auto& c : registered_commands())
    table.push_back(c);
  return dispatch(argc, argv, table, nullptr);
}

} // namespace leap::runtime
