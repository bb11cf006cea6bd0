// The judge's arithmetic on one finished group, without CAF: which attempts are ranked (those
// that ended solved, out of turns, not expanded or without room; not those dropped by the
// infrastructure, cancelled, or not buildable by the emulation), their outcomes (solving turn,
// speedup when timed, completion tokens over all turns) and per-turn rewards (1 correct, 0 not),
// and the configured estimator's advantages (algo/advantages.hpp). Attempts that are not ranked
// get reward 0 and advantage 0 on every turn: no gradient. Pure; any thread.
#pragma once

#include "algo/advantages.hpp"
#include "algo/metrics.hpp"
#include "messages/train_messages.hpp"

namespace leap::actors {

// Is this trajectory part of the ranking (and of the learner's batch)?
bool is_ranked(const msg::trajectory_record& t);

// The group as the paper's metrics count it (algo/metrics.hpp): the solving turn of each ranked
// attempt, and whether DCP activated the group.
algo::group_record record_of(const msg::group_result& g);

// rewards[i]: the rank estimator's tournament reward, or the baselines' scalar trajectory
// reward; advantages[i][k]: trajectory i, turn k. A turn's completion tokens (the tournament's
// tie key) are its completion's length, or `tokens[i][k]` when given (`leap serve`: the client
// says how many tokens each submission took; its records hold no token ids).
msg::scored_group score_group(msg::group_result g, const algo::estimator_config& cfg,
                              const std::vector<std::vector<std::int64_t>>* tokens = nullptr);

} // namespace leap::actors
