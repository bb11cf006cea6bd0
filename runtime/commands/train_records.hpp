// `leap train`'s records of a run (runtime/commands/train.hpp): the JSON object of one learner
// step in metrics.jsonl (with a clustered run's per-node figures), the line of one finished group
// in groups.jsonl, and the live display's per-node line. Internal to the train command: only
// runtime/commands/train*.cpp include it. Pure functions; called on the main thread.
#pragma once

#include "messages/cluster_messages.hpp"
#include "messages/train_messages.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace leap::runtime::train_detail {

// One metrics.jsonl object: the step's report, its wall seconds and attempts per second.
nlohmann::json report_json(const msg::step_report& r, double step_seconds, double attempts_per_s);
// Per-node figures of a clustered run (metrics.jsonl's "nodes").
nlohmann::json nodes_json(const msg::cluster_status& s);
// The step line's second line in a clustered run: one entry per node.
std::string nodes_line(const msg::cluster_status& s);
// One line of groups.jsonl: the group, its DCP decision, and every attempt's turns, end,
// reward and advantages, so anyone can check that a group accounts for all G attempts.
nlohmann::json group_json(std::int64_t step, const msg::group_summary& g);

} // namespace leap::runtime::train_detail
