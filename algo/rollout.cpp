#include "algo/rollout.hpp"

#include <map>
#include <utility>

namespace leap::algo {

namespace {

constexpr attempt_end all_ends[] = {
  attempt_end::none,     attempt_end::solved,    attempt_end::out_of_turns,
  attempt_end::not_expanded, attempt_end::no_room, attempt_end::cancelled,
  attempt_end::dropped,  attempt_end::unsupported};

constexpr group_decision all_decisions[] = {
  group_decision::undecided,      group_decision::expand,      group_decision::prune_easy,
  group_decision::prune_hopeless, group_decision::single_turn, group_decision::no_verdicts};

} // namespace

const char* to_string(attempt_end e) {
  switch (e) {
    case attempt_end::none: return "none";
    case attempt_end::solved: return "solved";
    case attempt_end::out_of_turns: return "out_of_turns";
    case attempt_end::not_expanded: return "not_expanded";
    case attempt_end::no_room: return "no_room";
    case attempt_end::cancelled: return "cancelled";
    case attempt_end::dropped: return "dropped";
    case attempt_end::unsupported: return "unsupported";
  }
  return "?";
}

bool parse_attempt_end(const std::string& text, attempt_end& out) {
  for (auto e : all_ends)
    if (text == to_string(e)) {
      out = e;
      return true;
    }
  return false;
}

bool is_ranked(attempt_end e) {
  return e == attempt_end::solved || e == attempt_end::out_of_turns
         || e == attempt_end::not_expanded || e == attempt_end::no_room;
}

const char* to_string(group_decision d) {
  switch (d) {
    case group_decision::undecided: return "undecided";
    case group_decision::expand: return "expand";
    case group_decision::prune_easy: return "prune_easy";
    case group_decision::prune_hopeless: return "prune_hopeless";
    case group_decision::single_turn: return "single_turn";
    case group_decision::no_verdicts: return "no_verdicts";
  }
  return "?";
}

bool parse_group_decision(const std::string& text, group_decision& out) {
  for (auto d : all_decisions)
    if (text == to_string(d)) {
      out = d;
      return true;
    }
  return false;
}

rollout::rollout(rollout_config cfg) : cfg_(std::move(cfg)) {
  att_.resize(static_cast<std::size_t>(cfg_.group_size > 0 ? cfg_.group_size : 0));
}

std::vector<rollout_action> rollout::start() {
  std::vector<rollout_action> out;
  if (started_)
    return out;
  started_ = true;
  std::vector<int> all;
  for (std::size_t a = 0; a < att_.size(); ++a)
    all.push_back(static_cast<int>(a));
  if (all.empty()) {
    check_finished(out);
    return out;
  }
  out.push_back({rollout_action::kind::generate, all, 1, attempt_phase::generating});
  return out;
}

rollout_attempt* rollout::live(int a, attempt_phase expected) {
  if (a < 0 || static_cast<std::size_t>(a) >= att_.size())
    return nullptr;
  auto& at = att_[static_cast<std::size_t>(a)];
  if (at.end != attempt_end::none || at.phase != expected)
    return nullptr;
  return &at;
}

rollout_attempt* rollout::live_in_job(int a) {
  if (auto* at = live(a, attempt_phase::compiling))
    return at;
  return live(a, attempt_phase::executing);
}

std::vector<rollout_action> rollout::sampled(int a, std::string code, long long tokens) {
  std::vector<rollout_action> out;
  auto* at = live(a, attempt_phase::generating);
  if (!at)
    return out;
  rollout_turn t;
  t.has_code = true;
  t.code = std::move(code);
  t.tokens = tokens;
  at->turns.push_back(std::move(t));
  at->phase = attempt_phase::compiling;
  out.push_back({rollout_action::kind::compile, {a}, static_cast<int>(at->turns.size()),
                 attempt_phase::compiling});
  return out;
}

std::vector<rollout_action> rollout::sampled_without_code(int a, long long tokens,
                                                          std::string feedback) {
  auto* at = live(a, attempt_phase::generating);
  if (!at)
    return {};
  rollout_turn t;
  t.tokens = tokens;
  at->turns.push_back(std::move(t));
  at->phase = attempt_phase::compiling; // judged at once, as a build would be
  turn_judgement j;
  j.verdict = turn_verdict::failed;
  j.feedback = std::move(feedback);
  return judged(a, j);
}

std::vector<rollout_action> rollout::built(int a) {
  std::vector<rollout_action> out;
  auto* at = live(a, attempt_phase::compiling);
  if (!at)
    return out;
  at->phase = attempt_phase::executing;
  out.push_back({rollout_action::kind::execute, {a}, static_cast<int>(at->turns.size()),
                 attempt_phase::executing});
  return out;
}

std::vector<rollout_action> rollout::judged(int a, const turn_judgement& j) {
  std::vector<rollout_action> out;
  auto* at = live_in_job(a);
  if (!at || at->turns.empty())
    return out;
  auto& t = at->turns.back();
  t.judged = true;
  t.verdict = j.verdict;
  t.feedback = j.feedback;
  t.timed = j.timed;
  t.speedup = j.speedup;
  const int turn = static_cast<int>(at->turns.size());
  switch (j.verdict) {
    case turn_verdict::unsupported:
      end(*at, attempt_end::unsupported);
      if (turn == 1) {
        ++lost1_;
        after_turn1(out);
      }
      break;
    case turn_verdict::correct:
      at->solved_turn = turn;
      end(*at, attempt_end::solved);
      if (turn == 1) {
        ++passed1_;
        after_turn1(out);
      }
      break;
    case turn_verdict::failed:
      if (turn >= cfg_.max_turns) {
        end(*at, attempt_end::out_of_turns);
        if (turn == 1) {
          ++failed1_;
          after_turn1(out);
        }
      } else if (turn == 1) {
        ++failed1_;
        if (dcp_ == dcp_decision::expand) {
          next_turn({a}, out);
        } else if (dcp_ == dcp_decision::undecided) {
          at->phase = attempt_phase::waiting_dcp;
          after_turn1(out); // may expand it (and the others waiting) right away
        } else {
          end(*at, attempt_end::not_expanded);
        }
      } else {
        next_turn({a}, out);
      }
      break;
  }
  check_finished(out);
  return out;
}

std::vector<rollout_action> rollout::no_room(int a) {
  std::vector<rollout_action> out;
  auto* at = live(a, attempt_phase::generating);
  if (!at)
    return out;
  end(*at, attempt_end::no_room);
  if (at->turns.empty()) {
    // Not even turn 1 fits: an unsolved attempt, and a failure for DCP.
    ++failed1_;
    after_turn1(out);
  }
  check_finished(out);
  return out;
}

std::vector<rollout_action> rollout::dropped(int a, std::string reason) {
  std::vector<rollout_action> out;
  rollout_attempt* at = live(a, attempt_phase::generating);
  if (!at)
    at = live_in_job(a);
  if (!at)
    return out;
  const bool turn1_pending = at->turns.empty() || !at->turns.front().judged;
  at->end_reason = std::move(reason);
  end(*at, attempt_end::dropped);
  if (turn1_pending) {
    ++lost1_;
    after_turn1(out);
  }
  check_finished(out);
  return out;
}

std::vector<rollout_action> rollout::cancelled(int a) {
  std::vector<rollout_action> out;
  rollout_attempt* at = live(a, attempt_phase::generating);
  if (!at)
    at = live_in_job(a);
  if (!at)
    at = live(a, attempt_phase::waiting_dcp);
  if (!at)
    return out;
  const bool turn1_pending = at->turns.empty() || !at->turns.front().judged;
  end(*at, attempt_end::cancelled);
  if (turn1_pending) {
    ++lost1_;
    after_turn1(out);
  }
  check_finished(out);
  return out;
}

void rollout::end(rollout_attempt& at, attempt_end why) {
  at.end = why;
  at.phase = attempt_phase::ended;
}

// A turn-1 verdict came in or a turn-1 attempt was lost: decide as soon as it is certain, over
// the attempts that can still have a verdict.
void rollout::after_turn1(std::vector<rollout_action>& out) {
  if (cfg_.max_turns <= 1 || dcp_ != dcp_decision::undecided)
    return;
  const int n = cfg_.group_size - lost1_;
  if (n <= 0)
    return; // no verdict can come: the group finishes as no_verdicts
  auto d = decide(cfg_.dcp, n, failed1_, passed1_);
  if (d != dcp_decision::undecided)
    apply(d, out);
}

void rollout::apply(dcp_decision d, std::vector<rollout_action>& out) {
  dcp_ = d;
  std::vector<int> waiting;
  for (std::size_t i = 0; i < att_.size(); ++i) {
    auto& at = att_[i];
    const int a = static_cast<int>(i);
    if (at.end != attempt_end::none)
      continue;
    if (at.phase == attempt_phase::waiting_dcp) {
      if (d == dcp_decision::expand)
        waiting.push_back(a);
      else
        end(at, attempt_end::not_expanded);
    } else if (d != dcp_decision::expand && cfg_.cancel_pruned_turn1 && at.turns.size() <= 1) {
      // A turn-1 straggler of a pruned group: its queued or running job is cancelled at once.
      if (at.phase == attempt_phase::compiling || at.phase == attempt_phase::executing)
        out.push_back({rollout_action::kind::cancel, {a}, static_cast<int>(at.turns.size()),
                       at.phase});
      end(at, attempt_end::cancelled);
    }
  }
  if (!waiting.empty())
    next_turn(waiting, out);
}

void rollout::next_turn(const std::vector<int>& idxs, std::vector<rollout_action>& out) {
  std::map<int, std::vector<int>> by_turn;
  for (int a : idxs) {
    auto& at = att_[static_cast<std::size_t>(a)];
    at.phase = attempt_phase::generating;
    by_turn[static_cast<int>(at.turns.size()) + 1].push_back(a);
  }
  for (auto& [turn, list] : by_turn) {
    if (turn >= 2)
      activated_ = true;
    out.push_back({rollout_action::kind::generate, list, turn, attempt_phase::generating});
  }
}

void rollout::check_finished(std::vector<rollout_action>& out) {
  if (finished_ || !started_)
    return;
  for (auto& at : att_)
    if (at.end == attempt_end::none)
      return;
  finished_ = true;
  out.push_back({rollout_action::kind::finished, {}, 0, attempt_phase::ended});
}

group_decision rollout::decision() const {
  if (cfg_.max_turns <= 1)
    return group_decision::single_turn;
  switch (dcp_) {
    case dcp_decision::expand: return group_decision::expand;
    case dcp_decision::prune_easy: return group_decision::prune_easy;
    case dcp_decision::prune_hopeless: return group_decision::prune_hopeless;
    case dcp_decision::undecided: break;
  }
  return finished_ ? group_decision::no_verdicts : group_decision::undecided;
}

} // namespace leap::algo
