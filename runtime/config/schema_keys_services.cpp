// The keys of the processes leap runs and talks to: nodes, the cluster, `leap serve`, where eval
// samples from and OpenAI-compatible servers.
#include "runtime/config/schema_keys.hpp"

namespace leap::config::keys {

namespace {

const std::vector<std::pair<std::string, node_role>>& node_roles() {
  static const std::vector<std::pair<std::string, node_role>> v{{"compile", node_role::compile},
                                                                {"execute", node_role::execute},
                                                                {"generate", node_role::generate}};
  return v;
}

} // namespace

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

} // namespace leap::config::keys
