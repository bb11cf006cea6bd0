// leap::config: the typed run configuration (one struct per TOML section) and the functions that
// build it: defaults, TOML files, `--set section.key=value` overrides, TOML and Markdown rendering.
// Every key is declared once in the key registry (runtime/config/schema.hpp); parsing, overrides,
// printing and docs/config.md all come from there. Callable from any thread (pure functions).
// No CAF, no LibTorch: anything in runtime/, bench/ and tests/ may include it (the enums it
// uses come from the layers below: algo/, policy/model/aggregation.hpp, messages/modes.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "algo/advantages.hpp"
#include "algo/tournament.hpp"
#include "common/result.hpp"
#include "messages/modes.hpp"
#include "policy/model/aggregation.hpp"

#include <map>

namespace leap::config {

// Which verification backend runs candidates.
enum class backend_kind {
  auto_select, // "auto": CUDA if a device is usable, else the CPU emulation
  cpu,         // "cpu": the CUDA-on-CPU emulation
  cuda,        // "cuda": the real device
};

// [environment]: tasks, caches, scratch space and the backend. Empty paths mean "the default place".
struct environment_section {
  backend_kind backend = backend_kind::auto_select;
  std::string tasks_dir; // empty = the bundled tasks/ directory
  std::string cache_dir; // empty = $LEAP_CACHE_DIR, else $XDG_CACHE_HOME/leap, else ~/.cache/leap
  std::string work_dir;  // empty = a fresh directory under $TMPDIR
  int cache_max_mb = 4096; // bound of <cache_dir>/builds (least recently used evicted); 0 = none
  int generated_tasks = 0;      // generated train tasks added to the suite (env/taskgen); 0 = none
  int generated_eval_tasks = 0; // generated eval tasks of each held-out kind (instance, composition)
  std::uint64_t generated_seed = 1; // seed of the generated suite
};

// [compiler]: the compile pool (nvcc for CUDA, a host C++ compiler for the CPU emulation).
struct compiler_section {
  int workers = 2;
  std::string nvcc; // empty = $CUDA_HOME/bin/nvcc or /usr/local/cuda/bin/nvcc
  std::string arch = "sm_90";
  std::vector<std::string> nvcc_flags = {"-O3", "-std=c++17"};
  std::string host_cxx = "g++";
  std::vector<std::string> emu_flags = {"-O2"};
  double timeout_seconds = 120.0;
  int max_diagnostic_lines = 12;
  int retries = 1; // more tries of a job that failed inside leap (a stage killed by a signal, ...)
};

// [executor]: the pool that runs compiled candidates against the reference.
struct executor_section {
  int workers = 2;
  double timeout_seconds = 30.0;
  int memory_limit_mb = 4096;
  int trials = 2;
  std::uint64_t seed = 0; // 0 = fresh random seed per check
  int output_limit_kb = 64;
  bool sandbox = true;
  bool check_repeat = true;
  int retries = 1; // more tries of a job that failed inside leap (the reference crashed, ...)
};

// [emulation]: the fiber-based CUDA-on-CPU emulation.
struct emulation_section {
  int threads = 2;
  int fiber_stack_kb = 128;
};

// [cuda]: device selection and timing on a real GPU.
struct cuda_section {
  int device = 0;
  int warmup = 3;
  int timing_runs = 10;
  int l2_flush_mb = 128; // 0 disables the flush
  double max_plausible_speedup = 10.0;
};

// How prompts and chats are written for the model (policy/text/prompt.hpp's chat_format), or auto:
// the format of the checkpoint's tokenizer_config.json chat_template, leap when it has none.
enum class chat_format_choice { auto_detect, leap, chatml, llama3 };

// The policy model (a Llama-style decoder) and its tokenizer.
struct policy_section {
  int vocab_size = 2048;     // target size of the BPE vocabulary trained on the corpus
  int d_model = 256;
  int n_layers = 4;
  int n_heads = 8;
  int n_kv_heads = 4;        // < n_heads: grouped KV heads
  int d_ff = 688;            // SwiGLU hidden size
  int max_seq_len = 2048;
  double rope_theta = 10000.0;
  bool tie_embeddings = true;
  chat_format_choice chat_format = chat_format_choice::auto_detect;
};

// How a repair dialogue's target is written: the whole fixed file, or SEARCH/REPLACE edits of
// the buggy one (policy/text/code_edit.hpp).
enum class repair_format { full, edit };

// How a generated task's reference target gets its label (sft.generated_labels): run through the
// environment like every variant, or taken as correct because it is the task's own reference with
// only comments and unused helper functions removed (policy/corpus/generator.cpp).
enum class generated_labels { environment, construction };

// Supervised warm start on the generated corpus (`leap pretrain`).
struct sft_section {
  double minutes = 10.0;     // wall-clock budget of the optimisation
  int max_steps = 0;         // 0 = as many as the budget allows
  int batch_sequences = 8;
  double lr = 2e-3;
  double min_lr_ratio = 0.1; // cosine decay to lr * min_lr_ratio
  int warmup_steps = 30;
  double weight_decay = 0.01;
  double grad_clip = 1.0;
  std::uint64_t seed = 1;
  std::uint64_t corpus_seed = 1;
  int bugs_per_kind = 1;
  int generated_bugs_per_kind = 1;
  int generated_bug_tasks = 0;     // bugs only for the first N generated tasks (and paraphrases); 0 = all
  generated_labels generated_reference_labels = generated_labels::environment;
  int solutions_per_task = 0;
  std::vector<std::string> bug_kinds = {"off_by_one",      "missing_bounds", "wrong_index",
                                        "missing_sync",    "wrong_reduction", "uninit_output",
                                        "typo_semicolon",  "typo_identifier", "typo_type"};
  double repair_weight = 1.0; // how often a repair dialogue is drawn relative to a turn-1 example
  repair_format repair_target = repair_format::full;
  double alt_solution_weight = 1.0; // weight factor of examples whose target is not the task's first solution
  // Self-repair: the last self_repair_steps of max_steps also train on the warm start's own
  // failed samples (self_repair_samples per task, their real feedback) answered with a correct
  // solution, weighted self_repair_weight. 0 = off.
  int self_repair_steps = 0;
  int self_repair_samples = 8;
  double self_repair_weight = 1.0;
  int self_repair_tasks = 0; // a sample of this many corpus tasks is sampled from; 0 = every one
  std::vector<std::string> tasks; // corpus tasks; empty = every bundled task (see bundled_tasks)
  // With tasks empty: true = every bundled train task joins the corpus, false = none (a
  // curriculum stage of generated tasks only).
  bool bundled_tasks = true;
  double bundled_weight = 1.0; // weight factor of a bundled task's examples (turn-1 and repair)
  // Generated train tasks (env/taskgen, environment.generated_seed) added to the corpus: the first
  // N of the generated suite, each its verified reference plus generic bugs; 0 = none.
  int generated_tasks = 0;
  // Which generated train tasks: of these families only (empty = all), from this index of each
  // family's list on (0 = its first); see the key table.
  std::vector<std::string> generated_families;
  int generated_first = 0;
  // Paraphrases (gen_<family>_p<n>: the same operators worded otherwise) of the first N of those
  // tasks, dealt the same way, added to the corpus; 0 = none.
  int generated_paraphrases = 0;
  // Written forms (gen_<family>_w<n>: the same operators worded otherwise again and laid out as
  // one paragraph of prose, as hand-written tasks are) of the first N of those tasks; 0 = none.
  int generated_written = 0;
  // Notation forms (gen_<family>_n<n>: in the hand-written tasks' mathematical notation) of the
  // first N of those tasks; 0 = none.
  int generated_notation = 0;
  // "family=weight" entries: the sampling weight of that family's generated examples is
  // multiplied by weight (small families seen several times in a stage); unlisted families 1.
  std::vector<std::string> generated_family_weights;
  // A checkpoint to continue from (its tokenizer, config and weights) instead of a new tokenizer
  // and fresh weights; empty = from scratch. Lets a warm start be trained in stages.
  std::string init_checkpoint;
};

// Sampling evaluation with multi-turn feedback (`leap eval`).
// Which tasks `leap eval` measures by default: the held-out eval split, the train split (to
// compare with what was trained on) or all of them.
enum class eval_split { eval, train, all };

struct eval_section {
  int group_size = 8;        // attempts per task (G)
  int max_turns = 3;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_new_tokens = 512;
  std::uint64_t seed = 1;
  eval_split split = eval_split::eval;
  std::vector<std::string> tasks; // empty = every task of `split`
};

// RL training (`leap train`): the LEAP pipeline's batch, groups, turns, DCP and rewards.
struct train_section {
  int steps = 20;              // learner steps of this run (a resumed run continues to this count)
  double max_minutes = 0;      // budget: learner-step wall-clock of the whole run; 0 = none
  int max_compiles = 0;        // budget: compile requests (cache hits included); 0 = none
  int max_lost_steps = 1;      // consecutive steps whose every attempt the infrastructure lost
                               // before the run stops with an error; 0 = never stop for that
  int batch_groups = 4;        // B: groups (tasks) per learner step
  int group_size = 8;          // G: attempts per group
  int max_turns = 3;           // turns per attempt (1 = single-turn)
  msg::train_mode mode = msg::train_mode::async; // async | sync (stage barriers, for comparison)
  int max_staleness = 1;       // learner versions a generated attempt may lag (async)
  msg::batch_order batch_order = msg::batch_order::finish; // which B groups make a step
  int generators = 1;          // generator workers, each with its own policy replica
  bool dcp = true;             // Difficulty-Conditioned Pruning; false = expand every failure
  double dcp_t_min = 0.5;      // expand when t_min <= N_fail <= t_max ...
  double dcp_t_max = 1.0;
  bool dcp_fractional = true;  // ... as fractions of G (else absolute counts)
  bool cancel_pruned_turn1 = false; // cancel a pruned group's turn-1 stragglers (no verdict)
  algo::estimator estimator = algo::estimator::rank;
  double gamma = 0.4;          // `discounted`
  std::vector<algo::tie_key> tie_keys = {algo::tie_key::speedup, algo::tie_key::tokens};
  double speedup_margin = 0.05; // tournament tie keys
  double tokens_margin = 0.10;
  double temperature = 1.0;
  double top_p = 1.0;
  int max_new_tokens = 384;
  std::uint64_t seed = 1;      // task order and sampling
  int checkpoint_every = 5;    // steps between checkpoints (the last step always saves)
  int eval_every = 0;          // held-out evaluation every N steps (a multiple of
                               // checkpoint_every); 0 = none
  int eval_tasks = 4;          // held-out tasks sampled per set (eval split, generated held-out)
  std::uint64_t eval_seed = 1; // seed of that sample and of the evaluation's sampling
  std::string warm_start;      // pretrain checkpoint; empty = <out>/pretrain (made if missing)
  std::string warm_start_sha256; // SHA-256 of warm_start's manifest.json; empty = not pinned
  std::vector<std::string> tasks; // empty = every bundled task
};

// The GRPO learner.
struct learner_section {
  double lr = 2e-4;
  double weight_decay = 0.0;
  double grad_clip = 1.0;
  double clip_low = 0.2;
  double clip_high = 0.28;
  double kl_coef = 0.0;        // k3 KL to the frozen warm-start policy; 0 = none
  policy::loss_aggregation aggregation = policy::loss_aggregation::token_mean;
  int micro_batch = 8;         // sequences per forward/backward
  int mini_batches = 1;        // optimizer steps per pass over a learner step's batch
  int epochs = 1;              // passes over the batch per learner step
};

// The roles a worker node (or the head itself, in a cluster) can host.
enum class node_role { compile, execute, generate };

// [node]: `leap node`, a worker process that hosts compile and execute pools for a head.
struct node_section {
  std::string listen = "127.0.0.1:0"; // HOST:PORT; port 0 = any free port (printed when ready)
  std::vector<node_role> roles = {node_role::compile, node_role::execute};
  std::string join;                   // HEAD:PORT (the head's cluster.listen) to ask to be used
  std::string checkpoint;             // role generate: the policy's architecture and tokenizer
};

// [cluster]: the head's worker nodes and how it talks to them.
struct cluster_section {
  std::vector<std::string> nodes;      // HOST:PORT of each `leap node`; empty = single process
  std::string listen;                  // HOST:PORT where nodes join and `leap cluster status` asks
  std::vector<node_role> local_roles;  // with nodes: what the head runs itself besides them
  int queue_per_worker = 1;            // credit: a node holds workers * (1 + this) jobs
  double heartbeat_seconds = 1.0;
  int heartbeat_misses = 3;
  double node_wait_seconds = 60;       // a job waiting this long with no node up fails
  std::string tls_cert, tls_key, tls_ca; // PEM files; all three or none
  std::vector<std::string> tls_peer_names; // names a peer's certificate may carry (tls_names.hpp)
  bool insecure = false;               // allow plain TCP off loopback
};

// [serve]: `leap serve`, the environment and LEAP's group logic over HTTP (docs/serve.md).
struct serve_section {
  std::string listen = "127.0.0.1:8420"; // HOST:PORT; port 0 = any free port (printed when ready)
  int threads = 2;                       // HTTP I/O threads
  int max_connections = 256;             // open connections beyond which new ones get 503
  int max_queue = 256;                   // waiting jobs at which calls get 429
  int max_groups = 4096;                 // open groups at which new groups get 429
  int max_group_size = 64;               // G of one group
  int max_body_kb = 1024;                // request body limit
  int max_header_kb = 16;                // request header limit
  double read_timeout_seconds = 30;      // a whole request must arrive within this
  double idle_timeout_seconds = 60;      // a kept-alive connection with no request closes
  double request_timeout_seconds = 900;  // a call the service has not answered by then: 504
  double group_ttl_seconds = 1800;       // an idle group expires
  double drain_seconds = 120;            // on SIGTERM: wait this long for running calls
  std::string token_env = "LEAP_SERVE_TOKEN"; // environment variable holding the bearer token
  std::string tls_cert, tls_key;         // PEM files: HTTPS when both are set
};

// [generation]: where `leap eval` and `leap bench` sample from.
enum class generation_source { policy, openai };
struct generation_section {
  generation_source source = generation_source::policy; // policy: in process; openai: [openai]
};

// [openai]: an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp's server, or
// `leap serve --checkpoint`) when generation.source = "openai".
struct openai_section {
  std::string url = "http://127.0.0.1:8000/v1"; // http:// or https://; POST {url}/completions
  std::string model;                              // the served model's name (required)
  std::string api_key_env = "OPENAI_API_KEY";     // environment variable holding the API key
  std::string tls_ca;                             // https: PEM CA file; empty = system store
  int max_concurrency = 8;                        // requests on the wire at once
  double timeout_seconds = 600;                   // one try; then retried (429/5xx too)
};

// The whole configuration. The member initialisers above are the defaults (the registry reads
// them, so docs and default.toml cannot drift from the code).
struct leap_config {
  environment_section environment;
  compiler_section compiler;
  executor_section executor;
  emulation_section emulation;
  cuda_section cuda;
  policy_section policy;
  sft_section sft;
  eval_section eval;
  train_section train;
  learner_section learner;
  node_section node;
  cluster_section cluster;
  serve_section serve;
  generation_section generation;
  openai_section openai;
};

// Equality over every registered key (used by round-trip tests and by callers that diff configs).
bool operator==(const leap_config& a, const leap_config& b);
inline bool operator!=(const leap_config& a, const leap_config& b) { return !(a == b); }

// The default configuration (same as leap_config{}).
leap_config defaults();

// The tags of the generated task families (env/taskgen's, in its order), for the keys that name
// them (sft.generated_families, sft.generated_family_weights); leap_config does not link taskgen.
const std::vector<std::string>& generated_family_tags();

// One sft.generated_family_weights entry, "family=weight": its family tag and weight, or what is
// wrong with it (not family=weight with a known family; a weight that is not a number in
// (0, 1000]). The config check and the warm start both read entries through it.
struct family_weight {
  std::string family;
  double weight = 1.0;
};
leap::result<family_weight> parse_family_weight(const std::string& entry);

// Parses a TOML file on top of the defaults. Unknown sections/keys, wrong types and values out of
// range are errors in the form every TOML reader shares (common/toml_schema.hpp):
// "<file>:<line>:<column>: [compiler] workers: must be at least 1 (got 0)", an unknown key with
// the closest known one where there is one. Several errors are reported one per line, in file
// order. A TOML syntax error reports toml++'s position and text.
leap::result<leap_config> load_file(const std::string& path);
leap::result<leap_config> load_string(std::string_view toml_text, const std::string& source_name);

// Layering: apply a file or TOML text on top of an existing config (keys absent stay as they are).
// On error cfg is left unchanged. `foreign_sections` names top-level tables another reader owns
// (e.g. `leap bench`'s [bench]): they are skipped instead of being unknown sections.
// `origins`, when given, records where each key set here came from (for check_consistency).
// load_file/load_string check the rules across keys; apply_* leave that to the caller, who
// checks once every layer is applied.
using key_origins = std::map<std::string, std::string>;
leap::result<void> apply_file(leap_config& cfg, const std::string& path,
                              const std::vector<std::string>& foreign_sections = {},
                              key_origins* origins = nullptr);
leap::result<void> apply_string(leap_config& cfg, std::string_view toml_text,
                                const std::string& source_name,
                                const std::vector<std::string>& foreign_sections = {},
                                key_origins* origins = nullptr);

// Where each key got its value: "<file>:<line>:<col>" or "--set <assignment>". Keys not listed
// hold their defaults.
// Rules across keys, checked once every layer is applied: train.dcp_t_min <= train.dcp_t_max,
// and with absolute thresholds (train.dcp_fractional = false) both <= train.group_size; with
// fractions both <= 1; sft.self_repair_steps < sft.max_steps when it is not 0. The error names
// each key involved and where its value came from.
leap::result<void> check_consistency(const leap_config& cfg, const key_origins& origins);

// Applies one command-line override "section.key=value" (value parsed according to the key's
// type: ints, floats, true/false, strings with or without quotes, string lists as TOML arrays
// ["-O3","-g"]). Errors read "--set <assignment>: [section] key: <what is wrong>". On error cfg
// is left unchanged.
leap::result<void> apply_override(leap_config& cfg, std::string_view assignment,
                                  key_origins* origins = nullptr);

// The value of one key ("compiler.workers") rendered as a TOML literal, e.g. `2` or `"sm_90"`.
leap::result<std::string> get_value_toml(const leap_config& cfg, std::string_view full_key);

// Renders the effective config as TOML: every key, in registry order. Loads back to an equal
// config. With comments = true each section and key is preceded by its doc text.
std::string to_toml(const leap_config& cfg);
std::string to_toml(const leap_config& cfg, bool comments);

// The content of docs/config.md: intro plus one `| key | type | default | meaning |` table per
// section.
std::string render_docs_markdown();

} // namespace leap::config
