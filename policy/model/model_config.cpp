// model_config JSON (HF config.json keys) and validation: see model_config.hpp.
#include "policy/model/model_config.hpp"

#include "common/fs.hpp"
#include "policy/text/hf_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

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
  if (it->is_array()) {  // eos_token_id may be a list (Llama 3): the first here, all in read_id_list
    if (it->empty() || !std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_number_integer(); })) {
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

const char* const supported_architectures[] = {"LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"};

// An architecture the decoder implements, or an error naming it.
result<void> check_architecture(const std::string& name) {
  if (std::find(std::begin(supported_architectures), std::end(supported_architectures), name) !=
      std::end(supported_architectures))
    return {};
  return make_error("model config: architecture '" + name +
                    "' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM)");
}

result<void> read_rope_scaling(const json& j, rope_scaling_config& out) {
  auto it = j.find("rope_scaling");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_object()) return make_error("model config: rope_scaling must be an object or null, got " + it->dump());
  // HF writes the type as "rope_type" (older configs: "type").
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    auto t = it->find(key);
    if (t == it->end()) continue;
    if (!t->is_string()) return make_error(std::string("model config: rope_scaling.") + key + " must be a string, got " + t->dump());
    type = t->get<std::string>();
    break;
  }
  if (type == "default") return {};
  if (type != "llama3") {
    return make_error("model config: rope_scaling type '" + type +
                      "' is not supported (supported: llama3); rope_scaling = " + it->dump());
  }
  out.llama3 = true;
  auto number = [&](const char* key, double& v) -> result<void> {
    auto k = it->find(key);
    if (k == it->end() || !k->is_number()) {
      return make_error(std::string("model config: rope_scaling.") + key + " must be a number for rope_type llama3" +
                        (k == it->end() ? std::string(" (missing)") : ", got " + k->dump()));
    }
    v = k->get<double>();
    return {};
  };
  if (auto r = number("factor", out.factor); !r) return r;
  if (auto r = number("low_freq_factor", out.low_freq_factor); !r) return r;
  if (auto r = number("high_freq_factor", out.high_freq_factor); !r) return r;
  double original = 0;
  if (auto r = number("original_max_position_embeddings", original); !r) return r;
  if (original != std::floor(original) || !(original > 0) || original > 1e12) {
    return make_error("model config: rope_scaling.original_max_position_embeddings must be a positive integer, got " +
                      it->at("original_max_position_embeddings").dump());
  }
  out.original_max_position_embeddings = static_cast<std::int64_t>(original);
  return {};
}

} // namespace

std::vector<std::int64_t> model_config::eos_ids() const {
  std::vector<std::int64_t> ids;
  if (eos_id >= 0) ids.push_back(eos_id);
  for (auto id : extra_eos_ids)
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  return ids;
}

bool model_config::is_eos(std::int64_t id) const {
  return id >= 0 && (id == eos_id || std::find(extra_eos_ids.begin(), extra_eos_ids.end(), id) != extra_eos_ids.end());
}

std::vector<double> rope_inv_freq(const model_config& cfg) {
  const auto dh = cfg.dim_per_head();
  std::vector<double> inv(static_cast<std::size_t>(dh / 2));
  for (std::size_t i = 0; i < inv.size(); ++i)
    inv[i] = 1.0 / std::pow(cfg.rope_theta, static_cast<double>(2 * i) / static_cast<double>(dh));
  const auto& rs = cfg.rope_scaling;
  if (!rs.llama3) return inv;
  const double pi = 3.14159265358979323846;
  const double old_len = static_cast<double>(rs.original_max_position_embeddings);
  const double low_freq_wavelen = old_len / rs.low_freq_factor;    // longer waves: divided by factor
  const double high_freq_wavelen = old_len / rs.high_freq_factor;  // shorter waves: unchanged
  for (auto& f : inv) {
    const double wavelen = 2 * pi / f;
    if (wavelen < high_freq_wavelen) continue;
    if (wavelen > low_freq_wavelen) {
      f /= rs.factor;
      continue;
    }
    const double smooth = (old_len / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
    f = (1 - smooth) * f / rs.factor + smooth * f;
  }
  return inv;
}

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
  for (auto v : c.extra_eos_ids) {
    if (v < 0 || v >= c.vocab_size) {
      return make_error(field_error("eos_token_id", v, ("must be below vocab_size = " + std::to_string(c.vocab_size)).c_str()));
    }
  }
  if (c.rope_scaling.llama3) {
    const auto& rs = c.rope_scaling;
    if (!(rs.factor > 0)) return make_error("model config: rope_scaling.factor = " + std::to_string(rs.factor) + ": must be positive");
    if (!(rs.low_freq_factor > 0) || !(rs.high_freq_factor > rs.low_freq_factor)) {
      return make_error("model config: rope_scaling.low_freq_factor = " + std::to_string(rs.low_freq_factor) +
                        ", high_freq_factor = " + std::to_string(rs.high_freq_factor) +
                        ": need 0 < low_freq_factor < high_freq_factor");
    }
    if (rs.original_max_position_embeddings <= 0) {
      return make_error(field_error("rope_scaling.original_max_position_embeddings", rs.original_max_position_embeddings,
                                    "must be positive"));
    }
  }
  if (!c.architecture.empty()) return check_architecture(c.architecture);
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
  std::string architecture;
  if (auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->empty() || !std::all_of(it->begin(), it->end(), [](const json& a) { return a.is_string(); })) {
      return make_error("model config: architectures must be a non-empty list of strings, got " + it->dump());
    }
    for (const auto& a : *it)
      if (auto r = check_architecture(a.get<std::string>()); !r) return r.err();
    architecture = it->front().get<std::string>();
  }
  if (auto it = j.find("hidden_act"); it != j.end() && *it != "silu") {
    return make_error("model config: hidden_act " + it->dump() + " is not supported (only \"silu\")");
  }
  if (auto it = j.find("mlp_bias"); it != j.end() && !it->is_null() && *it != false) {
    return make_error("model config: mlp_bias " + it->dump() + " is not supported (only false)");
  }
  // A sliding window changes attention only for a query more than `window` positions after a
  // key; with window >= max_position_embeddings no sequence this decoder can run (positions are
  // below max_position_embeddings) reaches that, so the window is accepted and ignored (Mistral
  // v0.2+ has null, Qwen2 sets use_sliding_window = false). Anything shorter is refused.
  if (auto it = j.find("sliding_window"); it != j.end() && !it->is_null()) {
    auto use = j.find("use_sliding_window");
    const bool off = use != j.end() && use->is_boolean() && !use->get<bool>();
    if (!off) {
      if (!it->is_number_integer()) return make_error("model config: sliding_window must be an integer or null, got " + it->dump());
      std::int64_t max_pos = 2048;
      if (auto r = read_int(j, "max_position_embeddings", max_pos, false); !r) return r.err();
      if (it->get<std::int64_t>() < max_pos) {
        return make_error("model config: sliding_window " + it->dump() +
                          " is not supported (a window shorter than max_position_embeddings = " +
                          std::to_string(max_pos) + " changes attention; this decoder attends to every earlier position)");
      }
    }
  } else if (auto use = j.find("use_sliding_window"); use != j.end() && use->is_boolean() && use->get<bool>()) {
    return make_error("model config: use_sliding_window true is not supported");
  }

  model_config c;
  c.architecture = architecture;
  c.qkv_bias = model_type == "qwen2" || architecture == "Qwen2ForCausalLM";
  // HF's LlamaConfig, Qwen2Config and MistralConfig default tie_word_embeddings to false; leap's
  // own configs (written by model_config_to_json) always carry the key.
  if (!architecture.empty() || !model_type.empty()) c.tie_embeddings = false;
  std::int64_t* ints[] = {&c.vocab_size, &c.d_model, &c.n_layers, &c.n_heads, &c.n_kv_heads, &c.head_dim,
                          &c.d_ff, &c.max_seq_len, &c.bos_id, &c.eos_id, &c.pad_id};
  const char* int_keys[] = {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                            "num_key_value_heads", "head_dim", "intermediate_size", "max_position_embeddings",
                            "bos_token_id", "eos_token_id", "pad_token_id"};
  const bool required[] = {true, true, true, true, false, false, true, false, false, false, false};
  for (std::size_t i = 0; i < std::size(ints); ++i) {
    if (auto r = read_int(j, int_keys[i], *ints[i], required[i]); !r) return r.err();
  }
  if (auto it = j.find("eos_token_id"); it != j.end() && it->is_array())
    for (std::size_t i = 1; i < it->size(); ++i) c.extra_eos_ids.push_back((*it)[i].get<std::int64_t>());
  if (auto r = read_rope_scaling(j, c.rope_scaling); !r) return r.err();
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
  std::string arch = c.architecture.empty() ? (qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM") : c.architecture;
  j["architectures"] = json::array({arch});
  j["model_type"] = arch == "Qwen2ForCausalLM" ? "qwen2" : arch == "MistralForCausalLM" ? "mistral" : "llama";
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
  if (arch != "Qwen2ForCausalLM") j["attention_bias"] = c.qkv_bias;
  if (c.rope_scaling.llama3) {
    const auto& rs = c.rope_scaling;
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", rs.factor}, {"low_freq_factor", rs.low_freq_factor},
                         {"high_freq_factor", rs.high_freq_factor},
                         {"original_max_position_embeddings", rs.original_max_position_embeddings}};
  }
  j["bos_token_id"] = c.bos_id >= 0 ? json(c.bos_id) : json(nullptr);
  const auto eos = c.eos_ids();
  j["eos_token_id"] = eos.size() > 1 ? json(eos) : c.eos_id >= 0 ? json(c.eos_id) : json(nullptr);
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

result<model_config> load_checkpoint_config(const std::string& dir) {
  auto cfg = load_model_config(dir + "/config.json");
  if (!cfg) return cfg;
  auto gen = load_generation_config(dir);
  if (!gen) return gen.err();
  auto tc = load_tokenizer_config(dir);
  if (!tc) return tc.err();
  auto check = [&](const char* file, const char* key, std::int64_t id) -> result<void> {
    if (id >= cfg->vocab_size) {
      return make_error(dir + "/" + file + ": key '" + key + "': id " + std::to_string(id) +
                        " is not below vocab_size = " + std::to_string(cfg->vocab_size) + " (config.json)");
    }
    return {};
  };
  auto add_eos = [&](std::int64_t id) {
    if (id < 0 || cfg->is_eos(id)) return;
    if (cfg->eos_id < 0)
      cfg->eos_id = id;
    else
      cfg->extra_eos_ids.push_back(id);
  };
  for (auto id : gen->eos_ids) {
    if (auto r = check("generation_config.json", "eos_token_id", id); !r) return r.err();
    add_eos(id);
  }
  if (auto r = check("generation_config.json", "bos_token_id", gen->bos_id); !r) return r.err();
  if (auto r = check("generation_config.json", "pad_token_id", gen->pad_id); !r) return r.err();
  const std::int64_t tc_eos = tc->id_of(tc->eos_token), tc_bos = tc->id_of(tc->bos_token),
                     tc_pad = tc->id_of(tc->pad_token);
  if (auto r = check("tokenizer_config.json", "eos_token", tc_eos); !r) return r.err();
  if (auto r = check("tokenizer_config.json", "bos_token", tc_bos); !r) return r.err();
  if (auto r = check("tokenizer_config.json", "pad_token", tc_pad); !r) return r.err();
  add_eos(tc_eos);
  if (cfg->bos_id < 0) cfg->bos_id = gen->bos_id >= 0 ? gen->bos_id : tc_bos;
  if (cfg->pad_id < 0) cfg->pad_id = gen->pad_id >= 0 ? gen->pad_id : tc_pad;
  return cfg;
}

result<void> save_model_config(const std::string& path, const model_config& cfg) {
  if (auto v = validate(cfg); !v) return v;
  return write_file_atomic(path, model_config_to_json(cfg));
}

} // namespace leap::policy
