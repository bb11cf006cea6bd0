#include "messages/type_ids.hpp"

#include <caf/actor_system_config.hpp>

namespace leap::msg {

void register_message_types(caf::actor_system_config& cfg) {
  // Registers every type of the block under its type_name (add_message_type per type).
  cfg.add_message_types<caf::id_block::leap>();
}

} // namespace leap::msg
