// The keys of the policy, its supervised warm start, evaluation, RL training and the learner.
#include "runtime/config/schema_keys.hpp"

namespace leap::config::keys {

namespace {

enum class greedy { allowed, refused };

// The sampling keys, declared once for every section that samples completions ([eval], [train]):
// the same names, meanings and bounds, on the section's own members. Temperature 0 (greedy) is
// refused where the learner scores the samples (`greedy::refused`: training).
template <class Section>
void sampling_keys(registry::section_builder<Section>& s, greedy g) {
  if (g == greedy::allowed)
    s.key("temperature", &Section::temperature, "Sampling temperature; 0 = greedy.").at_least(0);
  else
    s.key("temperature", &Section::temperature, "Sampling temperature; not 0 (greedy): the "
          "learner scores each token's log-probability at this temperature.").greater_than(0);
  s.key("top_p", &Section::top_p, "Nucleus sampling mass.").greater_than(0).at_most(1);
  s.key("max_new_tokens", &Section::max_new_tokens, "Longest completion, in tokens.").at_least(1);
}

} // namespace

void register_policy(registry& r) {
  auto s = r.section("policy", &leap_config::policy,
                     "The policy: a Llama-style decoder (RMSNorm, rotary embeddings, grouped KV "
                     "heads, SwiGLU) and its byte-level BPE tokenizer.");
  s.key("vocab_size", &policy_section::vocab_size,
        "Target BPE vocabulary size (trained on the corpus; a small corpus may give fewer).")
      .at_least(300);
  s.key("d_model", &policy_section::d_model, "Hidden size.").at_least(16);
  s.key("n_layers", &policy_section::n_layers, "Decoder layers.").at_least(1);
  s.key("n_heads", &policy_section::n_heads, "Attention heads (d_model must divide by it).")
      .at_least(1);
  s.key("n_kv_heads", &policy_section::n_kv_heads,
        "Key/value heads; fewer than n_heads = grouped-query attention (must divide n_heads).")
      .at_least(1);
  s.key("d_ff", &policy_section::d_ff, "SwiGLU hidden size.").at_least(16);
  s.key("max_seq_len", &policy_section::max_seq_len,
        "Longest prompt + completion, in tokens (rotary tables and KV caches are sized by it).")
      .at_least(64);
  s.key("rope_theta", &policy_section::rope_theta, "Rotary embedding base.").greater_than(0);
  s.key("tie_embeddings", &policy_section::tie_embeddings,
        "Share the token embedding with the output head.");
  s.key_enum("chat_format", &policy_section::chat_format,
             {{"auto", chat_format_choice::auto_detect},
              {"leap", chat_format_choice::leap},
              {"chatml", chat_format_choice::chatml},
              {"llama3", chat_format_choice::llama3}},
             "How task prompts, feedback turns and served chats are written for the model: leap "
             "(<|user|>/<|assistant|> markers of leap's own tokenizer), chatml (<|im_start|>role, "
             "Qwen2/Qwen3), llama3 (<|start_header_id|>role<|end_header_id|>, Llama 3); auto = "
             "the format of the checkpoint's tokenizer_config.json chat_template, leap when it "
             "has none. The tokenizer must have the format's marker tokens.");
}

void register_sft(registry& r) {
  auto s = r.section("sft", &leap_config::sft,
                     "Supervised warm start (`leap pretrain`) on the generated, environment-labelled "
                     "corpus: turn-1 solutions and repair dialogues.");
  s.key("minutes", &sft_section::minutes, "Wall-clock budget of the optimisation.").greater_than(0);
  s.key("max_steps", &sft_section::max_steps, "Optimizer steps; 0 = as many as the budget allows.")
      .at_least(0);
  s.key("batch_sequences", &sft_section::batch_sequences, "Sequences per optimizer step.")
      .at_least(1);
  s.key("lr", &sft_section::lr, "Peak AdamW learning rate.").greater_than(0);
  s.key("min_lr_ratio", &sft_section::min_lr_ratio,
        "The cosine schedule decays to lr * min_lr_ratio at the end of the budget.")
      .at_least(0)
      .at_most(1);
  s.key("warmup_steps", &sft_section::warmup_steps, "Linear warm-up steps.").at_least(0);
  s.key("weight_decay", &sft_section::weight_decay, "AdamW weight decay.").at_least(0);
  s.key("grad_clip", &sft_section::grad_clip, "Gradient-norm clip; 0 disables it.").at_least(0);
  s.key("seed", &sft_section::seed, "Seed of initialisation and batch order.");
  s.key("corpus_seed", &sft_section::corpus_seed, "Seed of the generated corpus.");
  s.key("bugs_per_kind", &sft_section::bugs_per_kind,
        "Buggy variants per task and bug kind in the corpus (each from a different correct "
        "solution where the task has enough); every one the environment fails becomes a repair "
        "dialogue.")
      .at_least(0);
  s.key("solutions_per_task", &sft_section::solutions_per_task,
        "Correct strategies per task in the corpus: each task's first N (its simplest first) and "
        "only the buggy variants derived from them; 0 = all. Fewer variants to label (each is "
        "compiled and run), for configs whose sft.alt_solution_weight gives the others little "
        "weight.")
      .at_least(0);
  // The names of corpus::all_bug_kinds(), in its order (tests/runtime/commands/corpus_e2e_test.cpp
  // checks that they agree; leap_config does not link the corpus).
  s.key("bug_kinds", &sft_section::bug_kinds,
        "Bug kinds the corpus injects (each failing variant becomes a repair dialogue). "
        "swapped_name, sampling_noise and typo_bracket imitate a sampled model's slips; the default "
        "leaves them out (in the quickstart the first two did not raise Acc@3 - Acc@1 and cost "
        "turn-1 accuracy; docs/results.md).")
      .one_of({"off_by_one", "missing_bounds", "wrong_index", "missing_sync", "wrong_reduction",
               "uninit_output", "typo_semicolon", "typo_identifier", "typo_type", "swapped_name",
               "sampling_noise", "typo_bracket"});
  s.key_enum("repair_format", &sft_section::repair_target,
             {{"full", repair_format::full}, {"edit", repair_format::edit}},
             "How a repair dialogue's answer is written: full = the whole fixed file in a ```cuda "
             "block; edit = ```edit SEARCH/REPLACE blocks that change only the lines the fix "
             "changes. Sampled answers may take either form in any case (the environment applies "
             "an edit to the attempt's previous code).");
  s.key("repair_weight", &sft_section::repair_weight,
        "Sampling weight of a repair dialogue relative to a turn-1 example.")
      .at_least(0);
  s.key("alt_solution_weight", &sft_section::alt_solution_weight,
        "Sampling weight factor of an example (turn-1 or repair) whose target is one of a task's "
        "other correct solutions rather than its first (simplest) one; below 1 a small model "
        "memorises one solution per task sooner, and its repairs converge on that solution.")
      .at_least(0);
  s.key("self_repair_steps", &sft_section::self_repair_steps,
        "The last self_repair_steps of sft.max_steps (which must be larger) also train on the "
        "model's own mistakes: after the first max_steps - self_repair_steps steps, leap samples "
        "self_repair_samples turn-1 attempts of every corpus task from the model "
        "(eval.temperature, eval.top_p, eval.max_new_tokens, eval.seed), judges them in the "
        "environment, and adds each failed one as a repair dialogue: its code and real feedback, "
        "answered by the task's first correct solution. 0 = off.")
      .at_least(0);
  s.key("self_repair_samples", &sft_section::self_repair_samples,
        "Turn-1 samples per task for the self-repair dialogues.")
      .at_least(1);
  s.key("self_repair_weight", &sft_section::self_repair_weight,
        "Sampling weight of a self-repair dialogue relative to a turn-1 example.")
      .at_least(0);
  s.key("self_repair_tasks", &sft_section::self_repair_tasks,
        "The self-repair phase samples only this many of the corpus's tasks, drawn with sft.seed "
        "(a corpus of thousands of generated tasks would take hours to sample whole); 0 = every "
        "corpus task.")
      .at_least(0);
  s.key("tasks", &sft_section::tasks,
        "Tasks whose corpus is trained on; empty = every bundled train-split task (unless "
        "sft.bundled_tasks = false). Eval-split tasks are refused.");
  s.key("bundled_tasks", &sft_section::bundled_tasks,
        "With sft.tasks empty: true = every bundled train task joins the corpus; false = none, so "
        "the corpus is sft.generated_tasks alone (a curriculum stage of one generated family).");
  s.key("bundled_weight", &sft_section::bundled_weight,
        "Weight factor of each example (turn-1 or repair) of a bundled task (tasks/, written by "
        "hand) in a corpus that also holds generated tasks: SFT draws examples by weight, so 47 "
        "bundled tasks beside thousands of generated ones are otherwise seen less than once a "
        "stage. 1 = as a generated example.")
      .at_least(0.0);
  s.key("generated_tasks", &sft_section::generated_tasks,
        "Generated train tasks (`gen_<family>_t<n>`, env/taskgen, under "
        "environment.generated_seed) added to the corpus besides sft.tasks (or, when sft.tasks is "
        "empty, besides every bundled train task): the first N of the generated suite. Each gives "
        "its naive reference as a turn-1 target and its generic bugs (typos, the bounds guard off "
        "by one or removed) as repair dialogues, all labelled by the environment; 0 = none.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_families", &sft_section::generated_families,
        "Generated families sft.generated_tasks draws from (ew elementwise, red reductions, bcast "
        "broadcasts, softmax, scan, pool, matmul, layout, stencil); empty = all of them. With "
        "families or sft.generated_first set, the N tasks are dealt round-robin over the listed "
        "families (in this order), each family's from index sft.generated_first on: "
        "`gen_ew_t<first>`, `gen_ew_t<first+1>`, ... A curriculum's first stage can be one family.")
      .one_of(generated_family_tags());
  s.key("generated_first", &sft_section::generated_first,
        "Index of the first generated train task taken from each family's list (see "
        "sft.generated_families): a later stage of a curriculum can start past the tasks an "
        "earlier stage trained on.")
      .at_least(0)
      .at_most(90000);
  s.key("generated_paraphrases", &sft_section::generated_paraphrases,
        "Paraphrases of the first N of sft.generated_tasks's tasks, added to the corpus beside "
        "them: `gen_<family>_p<n>` is the same operator as `gen_<family>_t<n>`, worded otherwise "
        "(elementwise: other buffer names such as x and y, pred and target, or a, b and w, a title "
        "of its operations that the prompt shows instead of the task's name, and the hand-written "
        "tasks' phrasings, e.g. a piecewise formula as \"s if p > q, else t\"; the "
        "other families: a second draw of their wording, sizes and ranges), so that the model "
        "learns to read the prose and copy the signature rather than one wording. Labelled like "
        "their originals; 0 = none; at most sft.generated_tasks.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_written", &sft_section::generated_written,
        "Written forms of the first N of sft.generated_tasks's tasks, added to the corpus beside "
        "them: `gen_<family>_w<n>` is the same operator as `gen_<family>_t<n>`, worded as a "
        "paraphrase (a draw of its own) and laid out as the suite's hand-written tasks are: one "
        "paragraph of prose with the formula inline, not a formula on a line of its own between "
        "fixed sentences, so that the model reads the task wherever the line breaks fall. "
        "Labelled like their originals; 0 = none; at most sft.generated_tasks.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_notation", &sft_section::generated_notation,
        "Notation forms of the first N of sft.generated_tasks's tasks, added to the corpus beside "
        "them: `gen_<family>_n<n>` is the same operator as `gen_<family>_t<n>`, worded in the "
        "mathematical notation of the suite's hand-written tasks (`out[c] = (1 / rows) * sum_r "
        "x[r, c]`, `y[r, j] = sum_{0 <= k <= j} x[r, k]`, `alpha * (exp(x) - 1) with alpha = 1 "
        "and x = x[i]`), opened by the operation's name (often with its torch call), with buffer "
        "names drawn per task and pooling windows sometimes passed as the ints k and s; laid out "
        "as a written form. Broadcast, layout and stencil tasks get another written form. "
        "Labelled like their originals; 0 = none; at most sft.generated_tasks.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_family_weights", &sft_section::generated_family_weights,
        "`family=weight` entries (e.g. [\"red=4\", \"scan=4\"]): each example (turn-1 or repair) "
        "of a generated task of that family is drawn weight times as often; families not listed "
        "keep 1. SFT draws examples by weight, so a family with few distinct operators (the "
        "reductions have 66) can be seen several times in a stage while the large ones are seen "
        "about once.");
  s.key("generated_bugs_per_kind", &sft_section::generated_bugs_per_kind,
        "Buggy variants per generated task and bug kind (sft.bugs_per_kind is the bundled tasks'): "
        "0 labels thousands of generated tasks for turn-1 targets only (one run each), while the "
        "bundled tasks' bugs still become repair dialogues.")
      .at_least(0);
  s.key("generated_bug_tasks", &sft_section::generated_bug_tasks,
        "Only the first N of sft.generated_tasks (and the paraphrases and written forms of those N) get "
        "sft.generated_bugs_per_kind bug variants; the rest are turn-1 targets only. 0 = every "
        "generated task. Repair dialogues from a few thousand tasks (each bug is labelled by a "
        "real compile or run) beside the turn-1 targets of many more.")
      .at_least(0);
  s.key_enum("generated_labels", &sft_section::generated_reference_labels,
             {{"environment", generated_labels::environment},
              {"construction", generated_labels::construction}},
             "How a generated task's reference target is labelled: environment = compiled and run "
             "like every variant (about a second each on 2 CPU cores, so thousands take an hour); "
             "construction = correct without a run, because it is the task's own reference (what "
             "candidates are compared with; `leap tasks verify` checks it against LibTorch) with "
             "only its comment lines and unused helper functions removed. Bug variants are always "
             "labelled by the environment. corpus.jsonl marks each such record `\"label\": "
             "\"construction\"`.");
  s.key("init_checkpoint", &sft_section::init_checkpoint,
        "A leap checkpoint to continue from (a warm start, or an earlier SFT stage): its "
        "tokenizer, model config and weights are used instead of a tokenizer trained on this "
        "corpus and fresh weights, so [policy]'s sizes do not apply; AdamW and the schedule start "
        "afresh from this [sft]. Empty = from scratch. Trains a warm start in stages (a "
        "curriculum: one family, then all of them). A relative path is read from the working "
        "directory.");
}

void register_eval(registry& r) {
  auto s = r.section("eval", &leap_config::eval,
                     "Sampling evaluation with multi-turn feedback (`leap eval`): G attempts per "
                     "task, failed ones retried with the environment's feedback.");
  s.key("group_size", &eval_section::group_size, "Attempts per task (G).").at_least(1);
  s.key("max_turns", &eval_section::max_turns, "Turns per attempt, feedback in between.")
      .at_least(1);
  sampling_keys(s, greedy::allowed);
  s.key("seed", &eval_section::seed, "Sampling seed.");
  s.key_enum("split", &eval_section::split,
             {{"eval", eval_split::eval}, {"train", eval_split::train}, {"all", eval_split::all}},
             "Which tasks are evaluated: eval = the held-out split (never in the SFT corpus or "
             "the RL draw), train = the training split, all = both.");
  s.key("tasks", &eval_section::tasks,
        "Tasks to evaluate; empty = every task of eval.split. Each must belong to eval.split.");
}

void register_train(registry& r) {
  auto s = r.section("train", &leap_config::train,
                     "RL training (`leap train`): B groups of G attempts per learner step, up to "
                     "max_turns turns with feedback, Difficulty-Conditioned Pruning, rewards.");
  s.key("steps", &train_section::steps, "Learner steps (a resumed run continues up to this count).")
      .at_least(1);
  s.key("max_minutes", &train_section::max_minutes,
        "Budget: stop after the step that brings the run's wall-clock (the sum of its steps' "
        "step_seconds, earlier segments of a resumed run included) to this many minutes; the "
        "checkpoint is saved and leap train exits 0 (in async mode a step the learner finished "
        "while the stop was on its way is kept too). 0 = no time budget.")
      .at_least(0);
  s.key("max_compiles", &train_section::max_compiles,
        "Budget: stop after the step that brings the run's compile requests (every candidate "
        "sent to the compiler, build-cache hits included, earlier segments included) to this "
        "count, exactly (the learner takes no further step, in async mode too); the checkpoint "
        "is saved and leap train exits 0. 0 = no compile budget.")
      .at_least(0);
  s.key("max_lost_steps", &train_section::max_lost_steps,
        "Stop the run with an error (exit 1, checkpoint of the last step saved) after this many "
        "consecutive steps in which the infrastructure lost every attempt (no compiler, executor "
        "or node could serve them): such steps train nothing. 0 = keep going.")
      .at_least(0);
  s.key("batch_groups", &train_section::batch_groups, "B: groups (tasks) per learner step.")
      .at_least(1);
  s.key("group_size", &train_section::group_size, "G: attempts per group.").at_least(2);
  s.key("max_turns", &train_section::max_turns, "Turns per attempt; 1 = single-turn GRPO.")
      .at_least(1);
  s.key_enum("mode", &train_section::mode,
             {{"async", msg::train_mode::async}, {"sync", msg::train_mode::sync}},
             "async: every attempt flows on as soon as its own step is done; sync: stage "
             "barriers (generate all, compile all, execute all, judge, learn), for comparison.");
  s.key("max_staleness", &train_section::max_staleness,
        "Admission control (async): accepted + running groups <= (max_staleness + version + 1) * B.")
      .at_least(0);
  s.key_enum("batch_order", &train_section::batch_order,
             {{"finish", msg::batch_order::finish}, {"admission", msg::batch_order::admission}},
             "Which B finished groups make a learner step: finish = the first B to finish (no "
             "wait; a step may hold two groups of one task), admission = the B admitted for that "
             "step (each step trains on the tasks drawn for it, so step metrics are comparable; a "
             "step waits for its slowest group, which costs throughput: see docs/results.md, Benchmarks).");
  s.key("generators", &train_section::generators,
        "Generator workers, each with its own policy replica.")
      .at_least(1);
  s.key("dcp", &train_section::dcp,
        "Difficulty-Conditioned Pruning; false expands every failed attempt (unpruned multi-turn).");
  s.key("dcp_t_min", &train_section::dcp_t_min,
        "Expand a group to further turns when t_min <= N_fail (turn-1 failures) ... (t_min <= "
        "t_max; with absolute counts both <= group_size).").at_least(0);
  s.key("dcp_t_max", &train_section::dcp_t_max, "... <= t_max.").at_least(0);
  s.key("dcp_fractional", &train_section::dcp_fractional,
        "t_min/t_max are fractions of G (the default 0.5..1 is the paper's best setting). "
        "Attempts lost to the infrastructure or not buildable by the emulation are left out: "
        "DCP decides on the attempts that can still have a verdict.");
  s.key("cancel_pruned_turn1", &train_section::cancel_pruned_turn1,
        "When DCP prunes a group, cancel its turn-1 attempts still compiling or executing (they "
        "are then left out of the ranking). false: every turn-1 attempt keeps its verdict, which "
        "the rank reward needs; only later turns of a pruned group are never started.");
  s.key_enum("estimator", &train_section::estimator,
             {{"rank", algo::estimator::rank},
              {"grpo", algo::estimator::grpo},
              {"drgrpo", algo::estimator::drgrpo},
              {"trloo", algo::estimator::trloo},
              {"discounted", algo::estimator::discounted}},
             "Advantage estimator: rank (LEAP tournament), grpo, drgrpo, trloo, discounted.");
  s.key("gamma", &train_section::gamma, "Discount of the `discounted` estimator.").at_least(0).at_most(1);
  s.key_enum_list("tie_keys", &train_section::tie_keys,
                  {{"speedup", algo::tie_key::speedup}, {"tokens", algo::tie_key::tokens}},
                  "Tournament: how two attempts solved on the same turn are ordered, in this "
                  "order: speedup (when both were timed on a GPU), tokens (fewer completion "
                  "tokens over all turns). Unsolved attempts always draw with each other; an "
                  "empty list makes every tie a draw.");
  s.key("speedup_margin", &train_section::speedup_margin,
        "Tournament tie key: a beats b on speed when speedup_a > speedup_b * (1 + margin).")
      .at_least(0);
  s.key("tokens_margin", &train_section::tokens_margin,
        "Tournament tie key: a beats b on length when tokens_a * (1 + margin) < tokens_b.")
      .at_least(0);
  sampling_keys(s, greedy::refused);
  s.key("seed", &train_section::seed, "Seed of the task order and of sampling.");
  s.key("checkpoint_every", &train_section::checkpoint_every,
        "Steps between checkpoints (the last step always saves).").at_least(1);
  s.key("eval_every", &train_section::eval_every,
        "Held-out evaluation during training: every N learner steps (a multiple of "
        "train.checkpoint_every) the policy of that step, loaded from its checkpoint, is "
        "evaluated on a fixed sample of held-out tasks with [eval]'s group_size, max_turns, "
        "temperature, top_p and max_new_tokens. Its Acc@1/Acc@3, compiles and seconds go on "
        "that step's metrics.jsonl row (\"heldout\"), apart from the training figures and the "
        "run's budget. 0 = none.").at_least(0);
  s.key("eval_tasks", &train_section::eval_tasks,
        "Held-out tasks sampled (under train.eval_seed, the same at every evaluation) from each "
        "held-out set: the eval split's bundled tasks, and each kind of generated held-out "
        "task (environment.generated_eval_tasks).").at_least(1);
  s.key("eval_seed", &train_section::eval_seed,
        "Seed of the held-out sample and of the held-out evaluation's sampling.");
  s.key("warm_start", &train_section::warm_start,
        "Pretrain checkpoint to start from; empty = <out>/pretrain, made by `leap pretrain` "
        "settings when missing. A relative path is read from the working directory.");
  s.key("warm_start_sha256", &train_section::warm_start_sha256,
        "SHA-256 of train.warm_start's manifest.json (which holds the size and SHA-256 of every "
        "file of the checkpoint): training refuses a warm start that is not the pinned one, or "
        "whose files do not match it. The quickstart pins the warm start shipped in "
        "assets/warm_start; `make warm-start` rebuilds it and renews the pin. Empty = not "
        "pinned.");
  s.key("tasks", &train_section::tasks,
        "Tasks to train on; empty = every train-split task. Eval-split tasks are refused.");
}

void register_learner(registry& r) {
  auto s = r.section("learner", &leap_config::learner,
                     "The GRPO learner: token-level clipped surrogate (clip-higher), optional k3 "
                     "KL to the warm-start policy, AdamW.");
  s.key("lr", &learner_section::lr, "AdamW learning rate.").greater_than(0);
  s.key("weight_decay", &learner_section::weight_decay, "AdamW weight decay.").at_least(0);
  s.key("grad_clip", &learner_section::grad_clip, "Gradient-norm clip; 0 disables it.").at_least(0);
  s.key("clip_low", &learner_section::clip_low, "Importance ratio lower clip: 1 - clip_low.")
      .at_least(0).at_most(1);
  s.key("clip_high", &learner_section::clip_high, "Importance ratio upper clip: 1 + clip_high.")
      .at_least(0);
  s.key("kl_coef", &learner_section::kl_coef,
        "Weight of the k3 KL penalty to the frozen warm-start policy; 0 = no reference.")
      .at_least(0);
  s.key_enum("aggregation", &learner_section::aggregation,
             {{"token_mean", policy::loss_aggregation::token_mean},
              {"dr_grpo", policy::loss_aggregation::dr_grpo}},
             "token_mean: mean over real tokens; dr_grpo: sum / (sequences * max_new_tokens).");
  s.key("micro_batch", &learner_section::micro_batch,
        "Sequences per forward/backward pass (gradients accumulate over a mini batch).")
      .at_least(1);
  s.key("mini_batches", &learner_section::mini_batches,
        "Optimizer steps per pass over a learner step's batch: the sequences are dealt round "
        "robin into this many mini batches, each one AdamW step (later ones are off-policy and "
        "clipped). 1 = one on-policy step per learner step.")
      .at_least(1);
  s.key("epochs", &learner_section::epochs,
        "Passes over the batch per learner step (PPO epochs); each pass costs one more "
        "forward/backward over every sequence.")
      .at_least(1);
}

} // namespace leap::config::keys
