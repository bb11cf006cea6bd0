// model_config JSON (HF config.json keys) and validation: see model_config.hpp.
#include "policy/model_config.hpp"

#include "common/fs.hpp"

#include <nlohmann/json.hpp>

namespace leap::policy {
namespace {

using json = nlohmann::json;

std::string field_error(const char* key, std::int64_t value, const char* what) {
  return "model config: " + std::string(key) + " = " + std::to_string(value) + ": " + what;
}

// Reads an optional integer key; errors when present with a non-integer type.
result<void> read_int(const json& j, const char* key, std::int64_t& out, bool required) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return make_error("model config: missing required key '" + std::string(key) + "'");
    return {};
  }
  if (it->is_array()) {  // eos_token_id may be a list (Llama 3): take the first
    if (it->empty() || !it->front().is_number_integer()) {
      return make_error("model config: '" + std::string(key) + "' must be an integer or a non-empty list of integers");
    }
    out = it->front().get<std::int64_t>();
    return {};
  }
  if (!it->is_number_integer()) {
    return make_error("model config: '" + std::string(key) + "' must be an integer, got " + it->dump());
  }
  out = it->get<std::int64_t>();
  return {};
}

result<void> read_double(const json& j, const char* key, double& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_number()) {
    return make_error("model config: '" + std::string(key) + "' must be a number, got " + it->dump());
  }
  out = it->get<double>();
  return {};
}

result<void> read_bool(const json& j, const char* key, bool& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_boolean()) {
    return make_error("model config: '" + std::string(key) + "' must be true or false, got " + it->dump());
  }
  out = it->get<bool>();
  return {};
}

} // namespace

std::int64_t model_config::parameter_count() const {
  const std::int64_t dh = dim_per_head();
  const std::int64_t q = n_heads * dh, kv = kv_heads() * dh;
  std::int64_t per_layer = d_model * q + 2 * d_model * kv + q * d_model  // q, k, v, o
                           + 3 * d_model * d_ff                          // gate, up, down
                           + 2 * d_model;                                // two norms
  if (qkv_bias) per_layer += q + 2 * kv;
  if (o_bias) per_layer += d_model;
  std::int64_t total = vocab_size * d_model + n_layers * per_layer + d_model;
  if (!tie_embeddings) total += vocab_size * d_model;
  return total;
}

result<void> validate(const model_config& c) {
  if (c.vocab_size <= 0) return make_error(field_error("vocab_size", c.vocab_size, "must be positive"));
  if (c.d_model <= 0) return make_error(field_error("hidden_size", c.d_model, "must be positive"));
  if (c.n_layers <= 0) return make_error(field_error("num_hidden_layers", c.n_layers, "must be positive"));
  if (c.n_heads <= 0) return make_error(field_error("num_attention_heads", c.n_heads, "must be positive"));
  if (c.n_kv_heads < 0) return make_error(field_error("num_key_value_heads", c.n_kv_heads, "must be positive"));
  if (c.n_heads % c.kv_heads() != 0) {
    return make_error(field_error("num_key_value_heads", c.kv_heads(),
                                  ("must divide num_attention_heads = " + std::to_string(c.n_heads)).c_str()));
  }
  if (c.head_dim < 0) return make_error(field_error("head_dim", c.head_dim, "must be positive"));
  if (c.head_dim == 0 && c.d_model % c.n_heads != 0) {
    return make_error(field_error("hidden_size", c.d_model,
                                  ("must be divisible by num_attention_heads = " + std::to_string(c.n_heads)).c_str()));
  }
  if (c.dim_per_head() % 2 != 0) {
    return make_error(field_error("head_dim", c.dim_per_head(), "must be even for rotary embeddings"));
  }
  if (c.d_ff <= 0) return make_error(field_error("intermediate_size", c.d_ff, "must be positive"));
  if (c.max_seq_len <= 0) return make_error(field_error("max_position_embeddings", c.max_seq_len, "must be positive"));
  if (!(c.rope_theta > 0)) return make_error("model config: rope_theta = " + std::to_string(c.rope_theta) + ": must be positive");
  if (!(c.rms_eps > 0)) return make_error("model config: rms_norm_eps = " + std::to_string(c.rms_eps) + ": must be positive");
  if (c.o_bias && !c.qkv_bias) {
    return make_error("model config: a bias on o_proj without biases on q/k/v_proj is not supported");
  }
  for (auto [key, v] : {std::pair{"bos_token_id", c.bos_id}, {"eos_token_id", c.eos_id}, {"pad_token_id", c.pad_id}}) {
    if (v < -1 || v >= c.vocab_size) {
      return make_error(field_error(key, v, ("must be -1 (none) or below vocab_size = " + std::to_string(c.vocab_size)).c_str()));
    }
  }
  return {};
}

result<model_config> model_config_from_json(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error("model config: not valid JSON");
  if (!j.is_object()) return make_error("model config: the top level must be a JSON object");

  std::string model_type;
  if (auto it = j.find("model_type"); it != j.end() && it->is_string()) model_type = it->get<std::string>();
  if (!model_type.empty() && model_type != "llama" && model_type != "qwen2" && model_type != "mistral") {
    return make_error("model config: model_type '" + model_type +
                      "' is not supported (supported: llama, qwen2, mistral)");
  }
  if (auto it = j.find("rope_scaling"); it != j.end() && !it->is_null()) {
    return make_error("model config: rope_scaling " + it->dump() + " is not supported");
  }
  if (auto it = j.find("hidden_act"); it != j.end() && *it != "silu") {
    return make_error("model config: hidden_act " + it->dump() + " is not supported (only \"silu\")");
  }
  for (const char* key : {"sliding_window", "use_sliding_window"}) {
    auto it = j.find(key);
    bool on = it != j.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>());
    // Qwen2 configs carry sliding_window together with use_sliding_window = false.
    if (on && std::string(key) == "sliding_window") {
      auto use = j.find("use_sliding_window");
      if (model_type == "qwen2" && (use == j.end() || (use->is_boolean() && !use->get<bool>()))) on = false;
    }
    if (on) return make_error(std::string("model config: ") + key + " " + it->dump() + " is not supported");
  }

  model_config c;
  c.qkv_bias = model_type == "qwen2";
  std::int64_t* ints[] = {&c.vocab_size, &c.d_model, &c.n_layers, &c.n_heads, &c.n_kv_heads, &c.head_dim,
                          &c.d_ff, &c.max_seq_len, &c.bos_id, &c.eos_id, &c.pad_id};
  const char* int_keys[] = {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                            "num_key_value_heads", "head_dim", "intermediate_size", "max_position_embeddings",
                            "bos_token_id", "eos_token_id", "pad_token_id"};
  const bool required[] = {true, true, true, true, false, false, true, false, false, false, false};
  for (std::size_t i = 0; i < std::size(ints); ++i) {
    if (auto r = read_int(j, int_keys[i], *ints[i], required[i]); !r) return r.err();
  }
  if (auto r = read_double(j, "rope_theta", c.rope_theta); !r) return r.err();
  if (auto r = read_double(j, "rms_norm_eps", c.rms_eps); !r) return r.err();
  if (auto r = read_bool(j, "tie_word_embeddings", c.tie_embeddings); !r) return r.err();
  bool attention_bias = false;
  if (j.contains("attention_bias")) {
    if (auto r = read_bool(j, "attention_bias", attention_bias); !r) return r.err();
    c.qkv_bias = attention_bias;
    c.o_bias = attention_bias;
  }
  if (c.n_kv_heads == 0) c.n_kv_heads = c.n_heads;
  // HF's Llama defines head_dim = hidden_size / heads when absent; normalise to 0 = derived.
  if (c.n_heads > 0 && c.head_dim * c.n_heads == c.d_model) c.head_dim = 0;
  if (auto r = validate(c); !r) return r.err();
  return c;
}

std::string model_config_to_json(const model_config& c) {
  json j = json::object();
  // Qwen2 is the Llama architecture with biases on q/k/v only.
  const bool qwen2 = c.qkv_bias && !c.o_bias;
  j["architectures"] = json::array({qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM"});
  j["model_type"] = qwen2 ? "qwen2" : "llama";
  j["hidden_act"] = "silu";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.d_model;
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.kv_heads();
  j["head_dim"] = c.dim_per_head();
  j["intermediate_size"] = c.d_ff;
  j["max_position_embeddings"] = c.max_seq_len;
  j["rope_theta"] = c.rope_theta;
  j["rms_norm_eps"] = c.rms_eps;
  j["tie_word_embeddings"] = c.tie_embeddings;
  if (!qwen2) j["attention_bias"] = c.qkv_bias;
  j["bos_token_id"] = c.bos_id >= 0 ? json(c.bos_id) : json(nullptr);
  j["eos_token_id"] = c.eos_id >= 0 ? json(c.eos_id) : json(nullptr);
  j["pad_token_id"] = c.pad_id >= 0 ? json(c.pad_id) : json(nullptr);
  j["torch_dtype"] = "float32";
  return j.dump(2) + "\n";
}

result<model_config> load_model_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.err();
  auto cfg = model_config_from_json(*text);
  if (!cfg) return make_error(path + ": " + cfg.message());
  return cfg;
}

result<void> save_model_config(const std::string& path, const model_config& cfg) {
  if (auto v = validate(cfg); !v) return v;
  return write_file_atomic(path, model_config_to_json(cfg));
}

} // namespace leap::policy
