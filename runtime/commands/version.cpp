// `leap version`.
#include "leap/build_info.hpp"
#include "runtime/commands/table.hpp"

#include <iostream>

namespace leap::runtime {

command version_command() {
  return {{"version"}, "", "print the version", command::needs::nothing, false, false,
          [](const command_context&) {
            std::cout << "leap " << build_info::version << "\n";
            return exit_ok;
          }};
}

} // namespace leap::runtime
