// The key registry: every configuration key is declared here, once, in documentation order.
#include "runtime/config/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace leap::config {

// ---------------------------------------------------------------------------------------------
// The keys. To add a section: a struct in config.hpp, a member in leap_config, a function here.

namespace {

void register_environment(registry& r) {
  auto s = r.section("environment", &leap_config::environment,
                     "Where tasks, caches and scratch files live, and which backend verifies "
                     "candidates.");
  s.key_enum("backend", &environment_section::backend,
             {{"auto", backend_kind::auto_select},
              {"cpu", backend_kind::cpu},
              {"cuda", backend_kind::cuda}},
             "Verification backend: `auto` = CUDA if a device is usable, else the CPU emulation; "
             "`cpu` = the CUDA-on-CPU emulation; `cuda` = the real device.");
  s.key("tasks_dir", &environment_section::tasks_dir,
        "Directory of task specs; empty = the bundled `tasks/` directory.");
  s.key("cache_dir", &environment_section::cache_dir,
        "Cache directory (compiled artifacts); empty = `$LEAP_CACHE_DIR`, else "
        "`$XDG_CACHE_HOME/leap`, else `~/.cache/leap`.");
  s.key("work_dir", &environment_section::work_dir,
        "Directory for temporary files; empty = a fresh directory under `$TMPDIR`.");
  s.key("cache_max_mb", &environment_section::cache_max_mb,
        "Size bound of the build cache (`<cache_dir>/builds`) in MiB: past it, the least recently "
        "used builds are evicted (never one used in the last 10 minutes); 0 = unbounded. "
        "`leap cache stats|prune|clear` inspects and trims it.")
      .at_least(0);
  s.key("generated_tasks", &environment_section::generated_tasks,
        "Generated train tasks (`gen_<family>_t<n>`: elementwise, reductions, broadcasts, softmax, "
        "scans, pooling, matmul epilogues; env/taskgen) added to the bundled suite, spread over the "
        "families; 0 = none. They count in the suite hash like bundled tasks.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_eval_tasks", &environment_section::generated_eval_tasks,
        "Generated eval-split tasks of each held-out kind added to the suite: new instances of "
        "trained compositions (`gen_<family>_i<n>`) and held-out compositions (`gen_<family>_c<n>`); "
        "0 = none.")
      .at_least(0)
      .at_most(5000);
  s.key("generated_seed", &environment_section::generated_seed,
        "Seed of the generated tasks: the same seed and counts give the same tasks, byte for byte.");
}

void register_compiler(registry& r) {
  auto s = r.section("compiler", &leap_config::compiler,
                     "The compile pool: nvcc for the CUDA backend, a host C++ compiler for the CPU "
                     "emulation.");
  s.key("workers", &compiler_section::workers, "Compile jobs run concurrently.").at_least(1);
  s.key("nvcc", &compiler_section::nvcc,
        "Path of nvcc; empty = `$CUDA_HOME/bin/nvcc`, else `/usr/local/cuda/bin/nvcc`.");
  s.key("arch", &compiler_section::arch, "GPU architecture passed to nvcc (`-arch`).").non_empty();
  s.key("nvcc_flags", &compiler_section::nvcc_flags, "Extra nvcc flags.");
  s.key("host_cxx", &compiler_section::host_cxx, "C++ compiler for the CPU-emulation build.")
      .non_empty();
  s.key("emu_flags", &compiler_section::emu_flags, "Extra flags of the CPU-emulation build.");
  s.key("timeout_seconds", &compiler_section::timeout_seconds,
        "Time limit of one compile job; on expiry its whole process tree is killed.")
      .greater_than(0);
  s.key("max_diagnostic_lines", &compiler_section::max_diagnostic_lines,
        "Lines of compiler errors kept for the feedback text.")
      .at_least(1);
  s.key("retries", &compiler_section::retries,
        "More tries of a compile job that failed inside leap (a compiler stage killed by a "
        "signal, a tool that would not start, a worker that died); after the last, the attempt "
        "is dropped as an infrastructure fault, never judged or cached.")
      .at_least(0)
      .at_most(10);
}

void register_executor(registry& r) {
  auto s = r.section("executor", &leap_config::executor,
                     "The pool that runs compiled candidates against the reference.");
  s.key("workers", &executor_section::workers, "Candidate processes run concurrently.")
      .at_least(1);
  s.key("timeout_seconds", &executor_section::timeout_seconds,
        "Wall-clock limit of one candidate process.")
      .greater_than(0);
  s.key("memory_limit_mb", &executor_section::memory_limit_mb,
        "Address-space limit of a candidate process on the CPU backend, in MiB.")
      .at_least(64);
  s.key("trials", &executor_section::trials,
        "Correctness trials per size set, each with fresh random inputs.")
      .at_least(1);
  s.key("seed", &executor_section::seed,
        "Input seed: 0 = a fresh random seed per check; otherwise fixed, for reproducible "
        "checks.")
      .at_least(0);
  s.key("output_limit_kb", &executor_section::output_limit_kb,
        "KiB of stdout/stderr kept per candidate process.")
      .at_least(1);
  s.key("sandbox", &executor_section::sandbox,
        "Confine candidate processes with every protection this machine offers (Landlock, "
        "seccomp, network namespace, unprivileged uid; `leap doctor` lists them). Turn off only "
        "to debug the harness.");
  s.key("check_repeat", &executor_section::check_repeat,
        "Call the candidate a second time on identical inputs in the first trial and flag "
        "results that change across calls (a wrong_answer).");
  s.key("retries", &executor_section::retries,
        "More tries of a run that failed inside leap (the reference crashed, a temporary "
        "directory could not be made, a worker that died); after the last, the attempt is "
        "dropped as an infrastructure fault, never judged.")
      .at_least(0)
      .at_most(10);
}

void register_emulation(registry& r) {
  auto s = r.section("emulation", &leap_config::emulation,
                     "The fiber-based CUDA-on-CPU emulation (the `cpu` backend).");
  s.key("threads", &emulation_section::threads, "OS worker threads of the emulation.").at_least(1);
  s.key("fiber_stack_kb", &emulation_section::fiber_stack_kb,
        "Stack size of one emulated CUDA thread (fiber), in KiB.")
      .at_least(16)
      .at_most(65536);
}

void register_cuda(registry& r) {
  auto s = r.section("cuda", &leap_config::cuda, "Device selection and timing on a real GPU.");
  s.key("device", &cuda_section::device, "CUDA device ordinal.").at_least(0);
  s.key("warmup", &cuda_section::warmup, "Untimed runs before timing.").at_least(0);
  s.key("timing_runs", &cuda_section::timing_runs, "Timed runs per measurement.").at_least(1);
  s.key("l2_flush_mb", &cuda_section::l2_flush_mb,
        "MiB written between timed runs to flush the L2 cache; 0 disables the flush.")
      .at_least(0);
  s.key("max_plausible_speedup", &cuda_section::max_plausible_speedup,
        "A correct candidate faster than the reference by more than this factor is flagged "
        "`excessive_speedup` in its verdict, for review.")
      .greater_than(0);
}

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
        "swapped_name and sampling_noise imitate a sampled model's slips; the default leaves them "
        "out (in the quickstart they did not raise Acc@3 - Acc@1 and cost turn-1 accuracy; "
        "docs/results.md).")
      .one_of({"off_by_one", "missing_bounds", "wrong_index", "missing_sync", "wrong_reduction",
               "uninit_output", "typo_semicolon", "typo_identifier", "typo_type", "swapped_name",
               "sampling_noise"});
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
  s.key("tasks", &sft_section::tasks,
        "Tasks whose corpus is trained on; empty = every train-split task. Eval-split tasks are "
        "refused.");
  s.key("generated_tasks", &sft_section::generated_tasks,
        "Generated train tasks (`gen_<family>_t<n>`, env/taskgen, under "
        "environment.generated_seed) added to the corpus besides sft.tasks (or, when sft.tasks is "
        "empty, besides every bundled train task): the first N of the generated suite. Each gives "
        "its naive reference as a turn-1 target and its generic bugs (typos, the bounds guard off "
        "by one or removed) as repair dialogues, all labelled by the environment; 0 = none.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_bugs_per_kind", &sft_section::generated_bugs_per_kind,
        "Buggy variants per generated task and bug kind (sft.bugs_per_kind is the bundled tasks'): "
        "0 labels thousands of generated tasks for turn-1 targets only (one run each), while the "
        "bundled tasks' bugs still become repair dialogues.")
      .at_least(0);
}

void register_eval(registry& r) {
  auto s = r.section("eval", &leap_config::eval,
                     "Sampling evaluation with multi-turn feedback (`leap eval`): G attempts per "
                     "task, failed ones retried with the environment's feedback.");
  s.key("group_size", &eval_section::group_size, "Attempts per task (G).").at_least(1);
  s.key("max_turns", &eval_section::max_turns, "Turns per attempt, feedback in between.")
      .at_least(1);
  s.key("temperature", &eval_section::temperature, "Sampling temperature; 0 = greedy.")
      .at_least(0);
  s.key("top_p", &eval_section::top_p, "Nucleus sampling mass.").greater_than(0).at_most(1);
  s.key("max_new_tokens", &eval_section::max_new_tokens, "Longest completion, in tokens.")
      .at_least(1);
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
        "checkpoint is saved and leap train exits 0. 0 = no time budget.")
      .at_least(0);
  s.key("max_compiles", &train_section::max_compiles,
        "Budget: stop after the step that brings the run's compile requests (every candidate "
        "sent to the compiler, build-cache hits included, earlier segments included) to this "
        "count; as max_minutes. 0 = no compile budget.")
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
  s.key("temperature", &train_section::temperature, "Sampling temperature.").greater_than(0);
  s.key("top_p", &train_section::top_p, "Nucleus sampling mass.").greater_than(0).at_most(1);
  s.key("max_new_tokens", &train_section::max_new_tokens, "Longest completion, in tokens.")
      .at_least(1);
  s.key("seed", &train_section::seed, "Seed of the task order and of sampling.");
  s.key("checkpoint_every", &train_section::checkpoint_every,
        "Steps between checkpoints (the last step always saves).").at_least(1);
  s.key("warm_start", &train_section::warm_start,
        "Pretrain checkpoint to start from; empty = <out>/pretrain, made by `leap pretrain` "
        "settings when missing.");
  s.key("tasks", &train_section::tasks,
        "Tasks to train on; empty = every train-split task. Eval-split tasks are refused.");
}

const std::vector<std::pair<std::string, node_role>>& node_roles() {
  static const std::vector<std::pair<std::string, node_role>> v{{"compile", node_role::compile},
                                                                {"execute", node_role::execute},
                                                                {"generate", node_role::generate}};
  return v;
}

void register_node(registry& r) {
  auto s = r.section("node", &leap_config::node,
                     "`leap node`: a worker process that runs compile and execute jobs for a head "
                     "(docs/cluster.md). Its pools are sized by `compiler.workers` and "
                     "`executor.workers`; its TLS files are the `cluster.tls_*` keys.");
  s.key("listen", &node_section::listen,
        "HOST:PORT the node listens on (`--listen` overrides); port 0 = any free port, printed "
        "in the ready line. Plain TCP only on a loopback address unless `cluster.insecure`.")
      .non_empty();
  s.key_enum_list("roles", &node_section::roles, node_roles(),
                  "What the node hosts: `compile` (a compiler pool), `execute` (an executor "
                  "pool), `generate` (`train.generators` policy replicas, loaded from "
                  "`node.checkpoint`; the head sends its current weights when the node joins and "
                  "every update after).");
  s.key("checkpoint", &node_section::checkpoint,
        "Role `generate`: a checkpoint directory of the same architecture as the head's policy "
        "(config.json, tokenizer.json, model.safetensors; e.g. a copy of the warm start). Its "
        "weights are replaced by the head's before the node samples.");
  s.key("join", &node_section::join,
        "HEAD:PORT of a head's `cluster.listen` (`--join` overrides): the node asks that head "
        "to use it, again every few seconds, so a head started later (or restarted) finds it; "
        "empty = wait for heads that list it in `cluster.nodes`.");
}

void register_cluster(registry& r) {
  auto s = r.section("cluster", &leap_config::cluster,
                     "The head's worker nodes (`leap node` processes) for `leap train`, `leap "
                     "eval`, `leap bench`, `leap check` and `leap tasks verify` "
                     "(docs/cluster.md).");
  s.key("nodes", &cluster_section::nodes,
        "HOST:PORT of each node; empty = everything runs in this process. A listed node that "
        "is down is retried every heartbeat and used once it answers.");
  s.key("listen", &cluster_section::listen,
        "HOST:PORT where the head accepts nodes that join (`leap node --join`) and answers "
        "`leap cluster status --head`; empty = neither. Plain TCP only on loopback unless "
        "`cluster.insecure`.");
  s.key_enum_list("local_roles", &cluster_section::local_roles, node_roles(),
                  "With nodes: pools the head still runs itself, as one more node (`compile`, "
                  "`execute`, `generate`); empty = the head runs the learner, trainer, "
                  "gatekeeper and judge only, and nodes compile, execute and generate.");
  s.key("queue_per_worker", &cluster_section::queue_per_worker,
        "Credit: a node holds at most workers * (1 + queue_per_worker) jobs of a kind; the rest "
        "wait at the head and go to whichever node frees a slot first.")
      .at_least(0)
      .at_most(64);
  s.key("heartbeat_seconds", &cluster_section::heartbeat_seconds,
        "How often the head asks every node for its statistics, and retries the nodes that "
        "are down.")
      .greater_than(0);
  s.key("heartbeat_misses", &cluster_section::heartbeat_misses,
        "Heartbeats a node may leave unanswered before it is lost (its jobs go to other "
        "nodes); a closed connection loses it at once.")
      .at_least(1);
  s.key("node_wait_seconds", &cluster_section::node_wait_seconds,
        "A job that waits this long while no node able to run it is up fails (the attempt is "
        "dropped as an infrastructure fault; `leap check` exits with the nodes' problems). A "
        "clustered `leap train` or `leap eval` waits at most this long at start until every role "
        "it needs (compile, execute, and generate unless the head generates) has a node that is "
        "up, or refuses to start with exit 2, naming the role and the nodes' problems.")
      .greater_than(0);
  s.key("tls_cert", &cluster_section::tls_cert,
        "PEM certificate of this process (head or node), signed by `tls_ca`; with `tls_key` and "
        "`tls_ca`: every connection is TLS with mutual authentication.");
  s.key("tls_key", &cluster_section::tls_key, "PEM private key of `tls_cert`.");
  s.key("tls_ca", &cluster_section::tls_ca,
        "PEM certificate of the CA whose signature the other side's certificate must carry.");
  s.key("tls_peer_names", &cluster_section::tls_peer_names,
        "With TLS: names (DNS or IP) a peer's certificate may carry besides the host dialled. "
        "A process dialling (a head to a node, a node to `--join`) accepts a certificate whose "
        "subjectAltName names the host as written in `cluster.nodes`/`--join` or one of these; "
        "one accepting connections accepts any certificate of `tls_ca` when this is empty, "
        "otherwise only one naming one of these. A certificate of the same CA for another name "
        "is refused during the handshake, with a message naming both.");
  s.key("insecure", &cluster_section::insecure,
        "Allow plain TCP (no TLS) on addresses other than loopback; leap warns at start.");
}

void register_serve(registry& r) {
  auto s = r.section("serve", &leap_config::serve,
                     "`leap serve`: checks and LEAP groups over HTTP for external trainers "
                     "(docs/serve.md). It uses the same pools, cache and sandbox as `leap check` "
                     "(and the cluster's nodes when `cluster.nodes` is set); groups follow "
                     "`train.max_turns`, the `train.dcp_*` keys and `train.estimator`.");
  s.key("listen", &serve_section::listen,
        "HOST:PORT to listen on (`--listen` overrides); port 0 = any free port, printed in the "
        "ready line. On an address other than loopback a bearer token is required "
        "(`token_env`).")
      .non_empty();
  s.key("threads", &serve_section::threads, "HTTP I/O threads.").at_least(1).at_most(64);
  s.key("max_connections", &serve_section::max_connections,
        "Open connections beyond which a new one is answered 503 and closed.")
      .at_least(1);
  s.key("max_queue", &serve_section::max_queue,
        "Waiting jobs (queued beyond the compile and execute workers) at which checks, groups "
        "and turns are answered 429 with Retry-After.")
      .at_least(1);
  s.key("max_groups", &serve_section::max_groups,
        "Open groups at which a new group is answered 429.")
      .at_least(1);
  s.key("max_group_size", &serve_section::max_group_size, "The largest G of one group.")
      .at_least(1)
      .at_most(1024);
  s.key("max_body_kb", &serve_section::max_body_kb,
        "Request body limit in KiB; a larger body is answered 413.")
      .at_least(1);
  s.key("max_header_kb", &serve_section::max_header_kb,
        "Request line and headers limit in KiB; larger ones are answered 431.")
      .at_least(1)
      .at_most(1024);
  s.key("read_timeout_seconds", &serve_section::read_timeout_seconds,
        "A request (headers and body) must arrive within this, else the connection closes "
        "(408 when the headers were read).")
      .greater_than(0);
  s.key("idle_timeout_seconds", &serve_section::idle_timeout_seconds,
        "A kept-alive connection that sends no new request for this long is closed.")
      .greater_than(0);
  s.key("request_timeout_seconds", &serve_section::request_timeout_seconds,
        "A check, group or turn the service has not answered by then is answered 504 (a turn "
        "may be sent again: it is idempotent).")
      .greater_than(0);
  s.key("group_ttl_seconds", &serve_section::group_ttl_seconds,
        "A group nobody has asked about for this long expires (its jobs are cancelled; later "
        "calls get 404).")
      .greater_than(0);
  s.key("drain_seconds", &serve_section::drain_seconds,
        "On SIGTERM or SIGINT: stop accepting, then wait at most this long for running calls.")
      .at_least(0);
  s.key("token_env", &serve_section::token_env,
        "Environment variable holding the bearer token (`Authorization: Bearer TOKEN`). "
        "Required when `listen` is not a loopback address; optional on loopback (when the "
        "variable is set, the token is required there too).")
      .non_empty();
  s.key("tls_cert", &serve_section::tls_cert,
        "PEM certificate (chain) for HTTPS; with `tls_key`. Off loopback, serve HTTPS or put a "
        "TLS reverse proxy in front (docs/serve.md) so the token never crosses a network in "
        "clear text.");
  s.key("tls_key", &serve_section::tls_key, "PEM private key of `tls_cert`.");
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

void register_generation(registry& r) {
  auto s = r.section("generation", &leap_config::generation,
                     "Where `leap eval` samples its attempts from.");
  s.key_enum("source", &generation_section::source,
             {{"policy", generation_source::policy}, {"openai", generation_source::openai}},
             "policy = the checkpoint's policy in process; openai = an OpenAI-compatible server "
             "([openai]: vLLM, SGLang, llama.cpp's server, `leap serve --checkpoint`), sampled "
             "with the same eval.* keys and seeds. `leap train` refuses openai (a learner cannot "
             "update a remote server's weights).");
}

void register_openai(registry& r) {
  auto s = r.section("openai", &leap_config::openai,
                     "The OpenAI-compatible completions server of generation.source = \"openai\": "
                     "prompts go as token ids of the --checkpoint's tokenizer, answers need "
                     "`token_ids` (vLLM's return_token_ids; leap serve sends them) or are "
                     "re-encoded from their text. Timeouts, 429 and 5xx are retried with back-off.");
  s.key("url", &openai_section::url,
        "Base URL, http:// or https://, e.g. http://127.0.0.1:8000/v1; requests go to "
        "{url}/completions. With https:// the server's certificate must chain to `tls_ca` (or "
        "the system's trust store) and name the URL's host (DNS or IP subjectAltName).")
      .non_empty();
  s.key("model", &openai_section::model,
        "The served model's name (the `model` of every request); required with "
        "generation.source = \"openai\".");
  s.key("api_key_env", &openai_section::api_key_env,
        "Environment variable holding the API key (sent as a bearer token when set).");
  s.key("tls_ca", &openai_section::tls_ca,
        "With an https:// url: PEM file of the CA certificates the server's certificate must "
        "chain to; empty = the system's trust store (OpenSSL's default paths). A handshake the "
        "certificate fails is an error naming the URL and the reason, not retried.");
  s.key("max_concurrency", &openai_section::max_concurrency, "Requests on the wire at once.")
      .at_least(1)
      .at_most(1024);
  s.key("timeout_seconds", &openai_section::timeout_seconds,
        "One try's limit, connect to last byte; a try that runs out is retried.")
      .greater_than(0);
}

registry build_registry() {
  registry r;
  register_environment(r);
  register_compiler(r);
  register_executor(r);
  register_emulation(r);
  register_cuda(r);
  register_policy(r);
  register_sft(r);
  register_eval(r);
  register_train(r);
  register_learner(r);
  register_node(r);
  register_cluster(r);
  register_serve(r);
  register_generation(r);
  register_openai(r);
  return r;
}

} // namespace

const registry& schema() {
  static const registry r = build_registry();
  return r;
}

// ---------------------------------------------------------------------------------------------
// Registry plumbing.

registry::key_builder& registry::key_builder::at_least(double v) {
  d().min = v;
  d().min_exclusive = false;
  return *this;
}
registry::key_builder& registry::key_builder::greater_than(double v) {
  d().min = v;
  d().min_exclusive = true;
  return *this;
}
registry::key_builder& registry::key_builder::at_most(double v) {
  d().max = v;
  return *this;
}
registry::key_builder& registry::key_builder::one_of(std::vector<std::string> values) {
  d().allowed = std::move(values);
  return *this;
}
registry::key_builder& registry::key_builder::non_empty() {
  d().non_empty = true;
  return *this;
}

const key_descriptor* section_descriptor::find(std::string_view key) const {
  for (const auto& k : keys)
    if (k.name == key) return &k;
  return nullptr;
}

const section_descriptor* registry::find_section(std::string_view name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

const key_descriptor* registry::find_key(std::string_view section, std::string_view key) const {
  const section_descriptor* s = find_section(section);
  return s ? s->find(key) : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Values.

std::string kind_name(value_kind k) {
  switch (k) {
  case value_kind::boolean: return "boolean";
  case value_kind::integer: return "integer";
  case value_kind::floating: return "float";
  case value_kind::string: return "string";
  case value_kind::string_list: return "string list";
  }
  return "?";
}

namespace {

std::string quote_toml(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04X", u);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
  return out;
}

std::string float_to_toml(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d); // shortest round-trip form
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string number_text(double d) {
  // Bounds are written without a trailing ".0" when integral: ">= 1", "> 0".
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return float_to_toml(d);
}

} // namespace

std::string value_to_toml(const value& v) {
  struct visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return float_to_toml(d); }
    std::string operator()(const std::string& s) const { return quote_toml(s); }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string out = "[";
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i) out += ", ";
        out += quote_toml(l[i]);
      }
      return out + "]";
    }
  };
  return std::visit(visitor{}, v);
}

leap::result<void> check_value(const key_descriptor& d, const value& v) {
  if (v.index() != static_cast<std::size_t>(d.kind))
    return make_error("internal: value of the wrong kind, expected " + kind_name(d.kind));
  auto bound_error = [&](const std::string& shown) -> std::string {
    std::string rule;
    if (d.min && d.max)
      rule = "must be " + std::string(d.min_exclusive ? "> " : ">= ") + number_text(*d.min) +
             " and <= " + number_text(*d.max);
    else if (d.min)
      rule = "must be " + std::string(d.min_exclusive ? "> " : ">= ") + number_text(*d.min);
    else
      rule = "must be <= " + number_text(*d.max);
    return shown + " is out of range (" + rule + ")";
  };
  auto out_of_bounds = [&](double x) {
    if (d.min && (d.min_exclusive ? !(x > *d.min) : !(x >= *d.min))) return true;
    if (d.max && !(x <= *d.max)) return true;
    return false;
  };
  switch (d.kind) {
  case value_kind::boolean: break;
  case value_kind::integer: {
    std::int64_t i = std::get<std::int64_t>(v);
    if (out_of_bounds(static_cast<double>(i))) return make_error(bound_error(std::to_string(i)));
    if (i < d.repr_min || i > d.repr_max)
      return make_error(std::to_string(i) + " is out of range (must be between " +
                        std::to_string(d.repr_min) + " and " + std::to_string(d.repr_max) + ")");
    break;
  }
  case value_kind::floating: {
    double x = std::get<double>(v);
    if (!std::isfinite(x)) return make_error(float_to_toml(x) + " is not a finite number");
    if (out_of_bounds(x)) return make_error(bound_error(float_to_toml(x)));
    break;
  }
  case value_kind::string: {
    const std::string& s = std::get<std::string>(v);
    if (!d.allowed.empty() && std::find(d.allowed.begin(), d.allowed.end(), s) == d.allowed.end()) {
      std::string msg = quote_toml(s) + " is not allowed; expected one of ";
      for (std::size_t i = 0; i < d.allowed.size(); ++i)
        msg += (i ? ", " : "") + quote_toml(d.allowed[i]);
      return make_error(msg);
    }
    if (d.non_empty && s.empty()) return make_error("must not be empty");
    break;
  }
  case value_kind::string_list: {
    const auto& list = std::get<std::vector<std::string>>(v);
    if (d.non_empty && list.empty())
      return make_error("must not be empty");
    for (std::size_t k = 0; k < list.size() && !d.allowed.empty(); ++k) {
      if (std::find(d.allowed.begin(), d.allowed.end(), list[k]) != d.allowed.end())
        continue;
      std::string msg = "element [" + std::to_string(k) + "]: " + quote_toml(list[k])
                        + " is not allowed; expected one of ";
      for (std::size_t i = 0; i < d.allowed.size(); ++i)
        msg += (i ? ", " : "") + quote_toml(d.allowed[i]);
      return make_error(msg);
    }
    if (d.distinct) {
      for (std::size_t k = 0; k < list.size(); ++k)
        for (std::size_t j = 0; j < k; ++j)
          if (list[j] == list[k])
            return make_error("element [" + std::to_string(k) + "]: " + quote_toml(list[k])
                              + " appears twice");
    }
    break;
  }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Suggestions.

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: insert, delete, substitute, swap two adjacent characters
  // ("wrokers" -> "workers" is one edit).
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> t(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) t[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) t[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t sub = t[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      t[i][j] = std::min({t[i - 1][j] + 1, t[i][j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        t[i][j] = std::min(t[i][j], t[i - 2][j - 2] + 1);
    }
  }
  return t[n][m];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  if (!best) return std::nullopt;
  std::size_t limit = std::max<std::size_t>(2, std::min(word.size(), best->size()) / 3);
  if (best_d == 0 || best_d > limit) return std::nullopt;
  return best;
}

} // namespace leap::config
