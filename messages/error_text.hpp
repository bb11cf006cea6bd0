// A caf::error as a sentence a user can act on: the text an actor put into it (errors made with
// caf::make_error(sec, "text"), as leap's pools and learner do), else CAF's rendering. Keeps the
// nested "system_error(runtime_error, (...))" wrappers out of leap's messages. Any thread.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>

#include <string>

namespace leap::msg {

inline std::string error_text(const caf::error& e, caf::actor_system& sys) {
  const auto& ctx = e.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return sys.render(e);
}

} // namespace leap::msg
