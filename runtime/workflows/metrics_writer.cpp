// The metrics of a training run: see metrics_writer.hpp.
#include "runtime/workflows/metrics_writer.hpp"

#include "common/allocator.hpp"
#include "common/json_text.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/train_messages.hpp"
#include "runtime/workflows/heldout_eval.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace leap::runtime {

namespace {

// Per-node figures of a clustered run (metrics.jsonl's "nodes"): jobs answered and failed, the
// fraction of its job slots the head kept busy (job time on it, queueing there included / (up
// time x (compile + execute workers + generate slots))), how
// often it was lost and came back, and the jobs taken off it when lost.
double busy_fraction(const msg::node_row& n) {
  double capacity =
    n.up_seconds * std::max(1u, n.compile_workers + n.execute_workers + n.generate_slots);
  return capacity > 0 ? n.busy_seconds / capacity : 0.0;
}

nlohmann::json report_json(const msg::step_report& r, double step_seconds, double attempts_per_s) {
  return nlohmann::json{{"step", r.step},
                        {"acc_at_1", r.acc_at_1},
                        {"acc_at_2", r.acc_at_2},
                        {"acc_at_3", r.acc_at_3},
                        {"turns_per_pass", r.turns_per_pass},
                        {"activated_groups", r.activated_groups},
                        {"recovery", r.recovery >= 0 ? nlohmann::json(r.recovery) : nlohmann::json()},
                        {"compiles", r.compiles},
                        {"cache_hits", r.cache_hits},
                        {"cancelled", r.cancelled},
                        {"dropped", r.dropped},
                        {"unsupported", r.unsupported},
                        {"compiles_later_turns", r.compiles_later_turns},
                        {"attempts", r.attempts},
                        {"attempts_per_second", attempts_per_s},
                        {"step_seconds", step_seconds},
                        {"learn_seconds", r.learn_seconds},
                        {"outcome", msg::to_string(r.outcome)},
                        {"loss", r.loss},
                        {"pg_loss", r.pg_loss},
                        {"kl", r.kl},
                        {"clip_fraction", r.clip_fraction},
                        {"grad_norm", r.grad_norm},
                        {"tokens", r.tokens},
                        {"sequences", r.sequences},
                        {"max_lag", r.max_lag},
                        {"util_generate", r.util_generate},
                        {"util_compile", r.util_compile},
                        {"util_execute", r.util_execute},
                        {"policy_version", r.policy_version},
                        {"tasks", r.tasks},
                        {"epochs", r.epochs}};
}

nlohmann::json nodes_json(const msg::cluster_status& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : s.nodes) {
    out.push_back({{"node", n.name},
                   {"state", msg::to_string(n.state)},
                   {"done", n.done},
                   {"failed", n.failed},
                   {"busy_fraction", busy_fraction(n)},
                   {"lost", n.lost},
                   {"rejoined", n.rejoined},
                   {"rerun", n.rerun},
                   {"rebuilt", n.rebuilt}});
  }
  return out;
}

// One line of groups.jsonl: the group, its DCP decision, and every attempt's turns, end,
// reward and advantages, so anyone can check that a group accounts for all G attempts.
nlohmann::json group_json(std::int64_t step, const msg::group_summary& g) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : g.attempts) {
    nlohmann::json turns = nlohmann::json::array();
    for (const auto& t : a.turns)
      turns.push_back({{"status", t.judged ? env::to_string(t.status) : "none"},
                       {"reason", t.reason},
                       {"tokens", t.tokens}});
    attempts.push_back({{"end", algo::to_string(a.end)},
                        {"end_reason", a.end_reason},
                        {"solved_turn", a.solved_turn},
                        {"dropped", a.end == algo::attempt_end::dropped},
                        {"cancelled", a.end == algo::attempt_end::cancelled},
                        {"unsupported", a.end == algo::attempt_end::unsupported},
                        {"ranked", algo::is_ranked(a.end)},
                        {"reward", a.reward},
                        {"advantages", a.advantages},
                        {"turns", turns}});
  }
  return nlohmann::json{{"step", step},          {"group", g.group_id},
                        {"task", g.task},        {"epoch", g.epoch},
                        {"index", g.index},      {"dcp", algo::to_string(g.dcp)},
                        {"activated", g.activated}, {"seconds", g.seconds},
                        {"attempts", attempts}};
}

// The writing process's memory when the step ends (the head's: the learner, the local pools'
// bookkeeping and the verdicts' comparisons live there): its resident set, and the heap
// allocator's figures (in use, resident, of those free for reuse), so a long run shows whether
// its memory grows and where. Figures a platform lacks are left out.
nlohmann::json memory_json() {
  constexpr double mib = 1024.0 * 1024.0;
  auto m = nlohmann::json::object();
  if (auto rss = process_resident_bytes(); rss.ok())
    m["rss_mib"] = static_cast<double>(*rss) / mib;
  if (auto h = heap_figures_now(); h.ok()) {
    m["allocator"] = to_string(h->allocator);
    m["heap_in_use_mib"] = static_cast<double>(h->in_use_bytes) / mib;
    m["heap_resident_mib"] = static_cast<double>(h->resident_bytes) / mib;
    m["heap_free_mib"] = static_cast<double>(h->free_bytes) / mib;
  }
  return m;
}

} // namespace

metrics_writer::metrics_writer(std::string metrics_path, std::string groups_path)
    : metrics_path_(std::move(metrics_path)), groups_path_(std::move(groups_path)),
      metrics_(metrics_path_, std::ios::app), groups_(groups_path_, std::ios::app) {}

result<metrics_writer> metrics_writer::open(const std::string& metrics_path,
                                            const std::string& groups_path) {
  metrics_writer w(metrics_path, groups_path);
  if (!w.metrics_ || !w.groups_)
    return make_error("cannot write " + (!w.metrics_ ? metrics_path : groups_path));
  return w;
}

result<void> metrics_writer::write_step(const msg::step_report& r, double step_s, double aps,
                                        const step_retries& inf,
                                        const msg::cluster_status* nodes,
                                        const heldout_figures* heldout) {
  std::string write_error;
  auto row = report_json(r, step_s, aps);
  // What the infrastructure cost this step: attempts lost, jobs tried again, nodes lost and
  // back, jobs run again elsewhere after a node was lost.
  std::uint64_t lost_now = 0, rejoined_now = 0, rerun_now = 0;
  if (nodes)
    for (const auto& n : nodes->nodes) {
      lost_now += n.lost;
      rejoined_now += n.rejoined;
      rerun_now += n.rerun;
    }
  auto delta = [](std::uint64_t now, std::uint64_t& before) {
    const auto d = now - std::min(now, before);
    before = now;
    return d;
  };
  row["infra"] = {{"attempts_lost", r.dropped},
                  {"jobs_retried", inf.compile + inf.execute},
                  {"compile_retried", inf.compile},
                  {"execute_retried", inf.execute},
                  {"nodes_lost", delta(lost_now, nodes_lost_before_)},
                  {"nodes_rejoined", delta(rejoined_now, nodes_rejoined_before_)},
                  {"jobs_rerun", delta(rerun_now, jobs_rerun_before_)}};
  row["memory"] = memory_json();
  if (nodes) {
    row["nodes"] = nodes_json(*nodes);
    if (nodes->weights_version >= 0)
      row["weights_to_nodes"] = {{"version", nodes->weights_version},
                                 {"bytes", nodes->weights_bytes},
                                 {"ms", nodes->weights_ms},
                                 {"nodes", nodes->weights_nodes}};
  }
  if (heldout) {
    auto sets = nlohmann::json::object();
    for (const auto& hs : heldout->sets)
      sets[hs.name] = {{"tasks", hs.tasks}, {"attempts", hs.attempts},
                       {"acc_at_1", hs.acc_at_1}, {"acc_at_3", hs.acc_at_3}};
    row["heldout"] = {{"acc_at_1", heldout->acc_at_1}, {"acc_at_3", heldout->acc_at_3},
                      {"tasks", heldout->tasks}, {"attempts", heldout->attempts},
                      {"compiles", heldout->compiles}, {"cache_hits", heldout->cache_hits},
                      {"seconds", heldout->seconds}, {"sets", sets}};
  }
  errno = 0;
  metrics_ << dump_lossy(row) << "\n";
  metrics_.flush();
  if (!metrics_ && write_error.empty())
    write_error = "cannot write " + metrics_path_ + ": " + std::strerror(errno ? errno : EIO);
  errno = 0;
  for (const auto& g : r.group_details)
    groups_ << dump_lossy(group_json(r.step, g)) << "\n";
  groups_.flush();
  if (!groups_ && write_error.empty())
    write_error = "cannot write " + groups_path_ + ": " + std::strerror(errno ? errno : EIO);
  if (!write_error.empty())
    return make_error(write_error);
  return {};
}

void metrics_writer::flush() { metrics_.flush(); }

// The step line's second line in a clustered run: one entry per node.
std::string nodes_line(const msg::cluster_status& s) {
  std::string line = "      nodes:";
  if (s.weights_version >= 0) {
    char w[128];
    std::snprintf(w, sizeof w, " weights v%lld %.1f MB to %u node(s) in %.0f ms;",
                  static_cast<long long>(s.weights_version), s.weights_bytes / 1e6,
                  s.weights_nodes, s.weights_ms);
    line += w;
  }
  for (const auto& n : s.nodes) {
    char buf[256];
    std::snprintf(buf, sizeof buf, " %s %s done %llu busy %.0f%%%s%s;", n.name.c_str(),
                  msg::to_string(n.state), static_cast<unsigned long long>(n.done),
                  100 * busy_fraction(n),
                  n.lost ? (" lost " + std::to_string(n.lost) + " rerun "
                            + std::to_string(n.rerun)).c_str() : "",
                  n.rejoined ? (" rejoined " + std::to_string(n.rejoined)).c_str() : "");
    line += buf;
  }
  return line;
}

} // namespace leap::runtime
