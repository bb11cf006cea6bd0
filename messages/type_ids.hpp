// leap's CAF type-id block and atoms. Every message type that crosses an actor boundary is
// registered here; whoever starts an actor system (runtime/pipeline/, bench/, tests/) calls
// register_message_types(cfg) before it starts.
#pragma once

#include "messages/cluster_messages.hpp"
#include "messages/env_messages.hpp"
#include "messages/serve_messages.hpp"
#include "messages/train_messages.hpp"

#include <caf/type_id.hpp>
#include <caf/atom.hpp>

namespace caf {
class actor_system_config;
}

CAF_BEGIN_TYPE_ID_BLOCK(leap, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(leap, (leap::env::verdict))
CAF_ADD_TYPE_ID(leap, (leap::msg::compile_request))
CAF_ADD_TYPE_ID(leap, (leap::msg::compile_reply))
CAF_ADD_TYPE_ID(leap, (leap::msg::exec_request))
CAF_ADD_TYPE_ID(leap, (leap::msg::exec_reply))
CAF_ADD_TYPE_ID(leap, (leap::msg::pool_stats))
CAF_ADD_TYPE_ID(leap, (leap::msg::generate_request))
CAF_ADD_TYPE_ID(leap, (leap::msg::generated))
CAF_ADD_TYPE_ID(leap, (leap::msg::generate_reply))
CAF_ADD_TYPE_ID(leap, (leap::msg::weights_update))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_start))
CAF_ADD_TYPE_ID(leap, (leap::msg::turn_record))
CAF_ADD_TYPE_ID(leap, (leap::msg::trajectory_record))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_result))
CAF_ADD_TYPE_ID(leap, (leap::msg::scored_group))
CAF_ADD_TYPE_ID(leap, (leap::msg::stage_usage))
CAF_ADD_TYPE_ID(leap, (leap::msg::save_request))
CAF_ADD_TYPE_ID(leap, (leap::msg::checkpoint_saved))
CAF_ADD_TYPE_ID(leap, (leap::msg::turn_summary))
CAF_ADD_TYPE_ID(leap, (leap::msg::attempt_summary))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_summary))
CAF_ADD_TYPE_ID(leap, (leap::msg::step_report))
CAF_ADD_TYPE_ID(leap, (leap::msg::build_identity))
CAF_ADD_TYPE_ID(leap, (leap::msg::node_info))
CAF_ADD_TYPE_ID(leap, (leap::msg::node_stats))
CAF_ADD_TYPE_ID(leap, (leap::msg::node_exec_reply))
CAF_ADD_TYPE_ID(leap, (leap::msg::node_row))
CAF_ADD_TYPE_ID(leap, (leap::msg::cluster_status))
CAF_ADD_TYPE_ID(leap, (leap::msg::submission))
CAF_ADD_TYPE_ID(leap, (leap::msg::check_call))
CAF_ADD_TYPE_ID(leap, (leap::msg::check_answer))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_call))
CAF_ADD_TYPE_ID(leap, (leap::msg::turn_call))
CAF_ADD_TYPE_ID(leap, (leap::msg::turn_view))
CAF_ADD_TYPE_ID(leap, (leap::msg::attempt_view))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_view))
CAF_ADD_TYPE_ID(leap, (leap::msg::group_answer))
CAF_ADD_TYPE_ID(leap, (leap::msg::service_stats))
CAF_ADD_ATOM(leap, leap::msg, compile_atom, "compile")
CAF_ADD_ATOM(leap, leap::msg, exec_atom, "exec")
CAF_ADD_ATOM(leap, leap::msg, cancel_atom, "cancel")
CAF_ADD_ATOM(leap, leap::msg, stats_atom, "stats")
CAF_ADD_ATOM(leap, leap::msg, done_atom, "done")
CAF_ADD_ATOM(leap, leap::msg, generate_atom, "generate")
CAF_ADD_ATOM(leap, leap::msg, weights_atom, "weights")
CAF_ADD_ATOM(leap, leap::msg, group_atom, "group")
CAF_ADD_ATOM(leap, leap::msg, finished_atom, "finished")
CAF_ADD_ATOM(leap, leap::msg, scored_atom, "scored")
CAF_ADD_ATOM(leap, leap::msg, report_atom, "report")
CAF_ADD_ATOM(leap, leap::msg, save_atom, "save")
CAF_ADD_ATOM(leap, leap::msg, stop_atom, "stop")
CAF_ADD_ATOM(leap, leap::msg, flush_atom, "flush")
CAF_ADD_ATOM(leap, leap::msg, subscribe_atom, "subscribe")
CAF_ADD_ATOM(leap, leap::msg, hello_atom, "hello")
CAF_ADD_ATOM(leap, leap::msg, drain_atom, "drain")
CAF_ADD_ATOM(leap, leap::msg, tick_atom, "tick")
CAF_ADD_ATOM(leap, leap::msg, connected_atom, "connected")
CAF_ADD_ATOM(leap, leap::msg, join_atom, "join")
CAF_ADD_ATOM(leap, leap::msg, check_atom, "check")
CAF_ADD_ATOM(leap, leap::msg, turn_atom, "turn")
CAF_ADD_ATOM(leap, leap::msg, view_atom, "view")
CAF_END_TYPE_ID_BLOCK(leap)

namespace leap::msg {
void register_message_types(caf::actor_system_config& cfg);
}
