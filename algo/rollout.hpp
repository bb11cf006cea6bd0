// The multi-turn rollout of one GRPO group as a pure state machine (docs/design.md "One group,
// turn by turn"). It owns the method's control flow and nothing else: which attempt goes to
// which stage next, when Difficulty-Conditioned Pruning decides (as soon as the verdicts in make
// the decision certain), which failed attempts get another turn, which stragglers to cancel, and
// when the group is finished. Events go in (a completion sampled, with or without code; code
// built; a verdict; an attempt dropped by the infrastructure; its next prompt has no room; a job
// cancelled from outside); each returns the actions to take, in order (generate a turn, compile,
// execute, cancel a job, group finished). Whoever drives it (the gatekeeper actor for `leap
// train`, `leap eval` and `leap bench`) does the I/O: prompts, tokens, jobs, replies.
//
// Rules (docs/design.md "The reward"):
// - An attempt lost to the infrastructure ends `dropped`; one whose code the CPU emulation
//   cannot build ends `unsupported`. Neither is the candidate's fault: both are left out of the
//   ranking, and on turn 1 out of DCP, which then decides on the attempts that can still have a
//   verdict (group size G minus those lost). A decision, once taken, is final.
// - With `cancel_pruned_turn1` false (the default) every turn-1 attempt of a pruned group keeps
//   its verdict; with true, the turn-1 stragglers still compiling or executing are cancelled and
//   left out of the ranking. A pruned group never starts a later turn.
// - max_turns 1 is single-turn: no DCP, a failed attempt ends `out_of_turns`.
// Events that no longer apply (a reply for an attempt that ended, or for a stage it left) are
// ignored and return no action, so late replies are harmless.
// Pure (no CAF, no LibTorch, no I/O); one owner thread at a time.
#pragma once

#include "algo/dcp.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace leap::algo {

struct rollout_config {
  int group_size = 8;               // G
  int max_turns = 3;
  dcp_config dcp;
  bool cancel_pruned_turn1 = false; // cancel a pruned group's turn-1 stragglers
};

// A turn's verdict as the rollout needs it: correct, the candidate's failure, or code the
// emulation cannot build (not the candidate's fault).
enum class turn_verdict { correct, failed, unsupported };

enum class attempt_phase { generating, compiling, executing, waiting_dcp, ended };

// Why an attempt ended.
enum class attempt_end {
  none,         // still running
  solved,       // a turn was correct
  out_of_turns, // failed its last allowed turn
  not_expanded, // failed turn 1 in a group DCP pruned
  no_room,      // the next turn's prompt left no room to answer
  cancelled,    // a turn-1 straggler of a pruned group (cancel_pruned_turn1), or cancelled from outside
  dropped,      // lost to the infrastructure
  unsupported,  // the CPU emulation cannot build its code
};
const char* to_string(attempt_end e);
bool parse_attempt_end(const std::string& text, attempt_end& out);
// Ranked: solved, out_of_turns, not_expanded, no_room. The rest take no part in the reward.
bool is_ranked(attempt_end e);

// What the group's DCP decided, as recorded once it finished.
enum class group_decision {
  undecided,      // only while turn-1 verdicts are missing
  expand,         // failed attempts were given further turns
  prune_easy,     // too few failures
  prune_hopeless, // too many failures
  single_turn,    // max_turns = 1: no DCP
  no_verdicts,    // every turn-1 attempt was lost (dropped or unsupported)
};
const char* to_string(group_decision d);
bool parse_group_decision(const std::string& text, group_decision& out);

struct rollout_turn {
  bool has_code = false;
  std::string code;          // the extracted code (empty without)
  long long tokens = 0;      // completion tokens of this turn
  bool judged = false;       // its verdict is in
  turn_verdict verdict = turn_verdict::failed;
  std::string feedback;      // shown on the next turn
  bool timed = false;        // correct on a GPU: a speedup was measured
  double speedup = 0;
};

struct rollout_attempt {
  std::vector<rollout_turn> turns;
  attempt_phase phase = attempt_phase::generating;
  attempt_end end = attempt_end::none;
  int solved_turn = 0;       // 1-based; 0 = not solved
  std::string end_reason;    // dropped: what the infrastructure said
};

// The verdict of an attempt's current turn.
struct turn_judgement {
  turn_verdict verdict = turn_verdict::failed;
  std::string feedback;
  bool timed = false;
  double speedup = 0;
};

struct rollout_action {
  enum class kind { generate, compile, execute, cancel, finished };
  kind what = kind::generate;
  // generate: the attempts whose turn `turn` to sample (turn 1: all G from one prompt; later:
  // one prompt each); compile / execute / cancel: one attempt.
  std::vector<int> attempts;
  int turn = 0;
  attempt_phase stage = attempt_phase::compiling; // cancel: the stage whose job to cancel
};

class rollout {
public:
  explicit rollout(rollout_config cfg);

  // Turn 1: one generate action for all G attempts.
  std::vector<rollout_action> start();
  // A completion of attempt `a`'s current turn with extracted code: compile it.
  std::vector<rollout_action> sampled(int a, std::string code, long long tokens);
  // A completion without extractable code: a failed turn with this feedback.
  std::vector<rollout_action> sampled_without_code(int a, long long tokens, std::string feedback);
  // The attempt's code built: execute it.
  std::vector<rollout_action> built(int a);
  // The verdict of the attempt's current turn (from its build or its run).
  std::vector<rollout_action> judged(int a, const turn_judgement& j);
  // The prompt of the attempt's next turn leaves no room to answer: it ends unsolved.
  std::vector<rollout_action> no_room(int a);
  // The infrastructure lost the attempt's job (every try failed, an internal error, a lost node).
  std::vector<rollout_action> dropped(int a, std::string reason);
  // Its job was cancelled from outside the rollout: it ends `cancelled`, out of the ranking.
  std::vector<rollout_action> cancelled(int a);

  bool finished() const { return finished_; }
  group_decision decision() const;
  bool activated() const { return activated_; } // some attempt was sent to turn 2
  const rollout_config& config() const { return cfg_; }
  const std::vector<rollout_attempt>& attempts() const { return att_; }
  const rollout_attempt& attempt(int a) const { return att_.at(static_cast<std::size_t>(a)); }
  // Turn-1 verdicts counted by DCP, and turn-1 attempts lost before theirs.
  int turn1_failed() const { return failed1_; }
  int turn1_passed() const { return passed1_; }
  int turn1_lost() const { return lost1_; }

private:
  rollout_attempt* live(int a, attempt_phase expected);
  rollout_attempt* live_in_job(int a);
  static void end(rollout_attempt& at, attempt_end why);
  void after_turn1(std::vector<rollout_action>& out);
  void apply(dcp_decision d, std::vector<rollout_action>& out);
  void next_turn(const std::vector<int>& idxs, std::vector<rollout_action>& out);
  void check_finished(std::vector<rollout_action>& out);

  rollout_config cfg_;
  std::vector<rollout_attempt> att_;
  dcp_decision dcp_ = dcp_decision::undecided;
  int failed1_ = 0, passed1_ = 0, lost1_ = 0;
  bool started_ = false, finished_ = false, activated_ = false;
};

} // namespace leap::algo
