#include "actors/group_record.hpp"

namespace leap::actors {

group_record::group_record(msg::group_start start, int group_size, clock::time_point t0)
    : start_(std::move(start)), t0_(t0), io_(static_cast<std::size_t>(std::max(0, group_size))) {}

double group_record::seconds() const {
  return std::chrono::duration<double>(clock::now() - t0_).count();
}

void group_record::sampled(int a, const msg::generated& s, std::int64_t policy_version) {
  auto& io = this->io(a);
  msg::turn_record rec;
  rec.prompt = io.prompt;
  rec.completion = s.tokens;
  rec.logprobs = s.logprobs;
  rec.policy_version = policy_version;
  rec.t_generated = seconds();
  io.turns.push_back(std::move(rec));
  ++counts_.attempts;
}

void group_record::judged(int a, const env::verdict& v) {
  auto& turns = io(a).turns;
  if (turns.empty())
    return;
  auto& rec = turns.back();
  rec.judged = true;
  rec.status = v.st;
  rec.reason = v.reason;
  rec.timed = v.timed;
  rec.speedup = v.speedup;
  rec.t_verdict = seconds();
}

msg::group_result group_record::finish(const algo::rollout& r) {
  msg::group_result res = std::move(counts_);
  res.group_id = start_.group_id;
  res.task = start_.task;
  res.epoch = start_.epoch;
  res.index = start_.index;
  res.dcp = r.decision();
  res.activated = r.activated();
  res.seconds = seconds();
  const auto& atts = r.attempts();
  for (std::size_t a = 0; a < atts.size() && a < io_.size(); ++a) {
    msg::trajectory_record tr;
    tr.solved_turn = atts[a].solved_turn;
    tr.end = atts[a].end;
    tr.end_reason = atts[a].end_reason;
    tr.turns = std::move(io_[a].turns);
    // The rollout keeps each turn's extracted code and feedback (what a next turn shows).
    for (std::size_t k = 0; k < tr.turns.size() && k < atts[a].turns.size(); ++k) {
      tr.turns[k].code = atts[a].turns[k].code;
      tr.turns[k].feedback = atts[a].turns[k].feedback;
    }
    res.trajectories.push_back(std::move(tr));
  }
  return res;
}

} // namespace leap::actors
