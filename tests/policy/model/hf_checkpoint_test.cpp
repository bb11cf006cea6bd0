// Hugging Face checkpoints: a small random Llama model written by the test in the HF layout
// (config.json with rope_scaling llama3, generation_config.json with a list of eos ids,
// tokenizer_config.json, two safetensors shards, one bf16 and one fp16, and
// model.safetensors.index.json) loads and gives the logits of the same weights saved unsharded
// in float32; the llama3 rope frequencies equal hand-computed values; every refusal (unknown
// architecture, rope type, tensor, missing shard, a tensor in two shards, bad
// generation_config.json / tokenizer_config.json) names what it refuses.
#include "policy/model/checkpoint.hpp"

#include "common/fs.hpp"
#include "policy/text/hf_files.hpp"
#include "policy/model/tensor_file.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace leap::policy;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using leap::test::temp_dir;

void write(const std::string& path, const std::string& text) {
  auto r = leap::write_file_atomic(path, text);
  ASSERT_TRUE(r.ok()) << r.message();
}

// The model's config.json as a Hugging Face Llama 3.1 export writes it (other keys ignored).
json hf_config() {
  return json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": false,
    "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 60, "hidden_act": "silu",
    "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 48,
    "max_position_embeddings": 64, "mlp_bias": false, "num_attention_heads": 4,
    "num_hidden_layers": 2, "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 16, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "use_cache": true, "vocab_size": 64})");
}

const char* const shard1 = "model-00001-of-00002.safetensors";
const char* const shard2 = "model-00002-of-00002.safetensors";

// Shard 1 (bf16): the embedding and layer 0; shard 2 (fp16): layer 1, the final norm, lm_head.
std::string shard_of(const std::string& name) {
  return name.rfind("model.embed_tokens", 0) == 0 || name.rfind("model.layers.0.", 0) == 0 ? shard1 : shard2;
}

struct hf_model {
  decoder reference{nullptr};  // float32, weights rounded to their shard's dtype
  std::map<std::string, named_tensors> shards;
  json weight_map = json::object();
};

// A random model of hf_config() whose weights are rounded to bf16 (shard 1) or fp16 (shard 2),
// so that the up-cast sharded weights equal the float32 ones exactly.
hf_model make_model() {
  auto cfg = model_config_from_json(hf_config().dump());
  EXPECT_TRUE(cfg.ok()) << cfg.message();
  torch::manual_seed(7);
  hf_model m;
  m.reference = *make_decoder(*cfg);
  torch::NoGradGuard no_grad;
  for (auto& p : m.reference->named_parameters()) {
    // Norm weights away from 1, so a swapped or missing norm shows in the logits.
    if (p.key().find("norm") != std::string::npos) p.value().uniform_(0.5, 1.5);
    const auto file = shard_of(p.key());
    const auto dtype = file == shard1 ? torch::kBFloat16 : torch::kHalf;
    auto low = p.value().to(dtype);
    p.value().copy_(low.to(torch::kFloat));
    m.shards[file][p.key()] = low;
    m.weight_map[p.key()] = file;
  }
  return m;
}

void write_index(const std::string& dir, const json& weight_map) {
  json index = {{"metadata", {{"total_size", 12345}}}, {"weight_map", weight_map}};
  write(dir + "/model.safetensors.index.json", index.dump(2));
}

// The whole HF directory: config, generation and tokenizer configs, shards, index.
void write_hf_dir(const std::string& dir, const hf_model& m) {
  write(dir + "/config.json", hf_config().dump(2));
  write(dir + "/generation_config.json",
        R"({"_from_model_config": true, "bos_token_id": 1, "eos_token_id": [60, 61, 62], "do_sample": true,
            "temperature": 0.6, "top_p": 0.9, "transformers_version": "4.45.0"})");
  write(dir + "/tokenizer_config.json", R"({
    "added_tokens_decoder": {
      "1": {"content": "<|begin_of_text|>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true},
      "60": {"content": "<|end_of_text|>", "special": true},
      "63": {"content": "<|eot_id|>", "special": true}},
    "bos_token": "<|begin_of_text|>",
    "eos_token": {"content": "<|eot_id|>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false},
    "chat_template": "{{ '<|start_header_id|>' }}",
    "model_max_length": 64, "tokenizer_class": "PreTrainedTokenizerFast"})");
  for (const auto& [file, tensors] : m.shards) {
    auto r = save_tensors(dir + "/" + file, tensors, {{"format", "pt"}});
    ASSERT_TRUE(r.ok()) << r.message();
  }
  write_index(dir, m.weight_map);
}

torch::Tensor logits_of(decoder& d) {
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({{1, 5, 9, 33, 2, 17, 63, 40, 12, 7, 58, 3}}, torch::kLong);
  return d->forward(ids);
}

model_config config_with(const std::function<void(json&)>& edit) {
  auto j = hf_config();
  edit(j);
  auto c = model_config_from_json(j.dump());
  return c.ok() ? *c : model_config{};
}

std::string config_error(const std::function<void(json&)>& edit) {
  auto j = hf_config();
  edit(j);
  auto c = model_config_from_json(j.dump());
  return c.ok() ? std::string("(accepted)") : c.message();
}

} // namespace

// rope_scaling llama3 by hand. head_dim 8, rope_theta 10000: the plain inverse frequencies are
// 10000^(-2i/8) = 1, 0.1, 0.01, 0.001 (i = 0..3), wavelengths 2 pi / f = 6.28, 62.8, 628.3,
// 6283.2. With original_max_position_embeddings L = 1000, low_freq_factor 1, high_freq_factor 4,
// factor 8: the bands are w < L/4 = 250 (unchanged), w > L/1 = 1000 (divided by 8), between
// them interpolated. So
//   f0 = 1 and f1 = 0.1 (w = 6.28, 62.8 < 250: unchanged),
//   f3 = 0.001 / 8 = 0.000125 (w = 6283 > 1000),
//   f2: w = 628.3 is in the middle band: s = (L / w - 1) / (4 - 1) = (1000 * 0.01 / (2 pi) - 1) / 3
//       = (1.5915494309189535 - 1) / 3 = 0.19718314363965117, and
//       f2 = (1 - s) * 0.01 / 8 + s * 0.01 = 0.01 * (0.10035210704504360 + 0.19718314363965117)
//          = 0.0029753525068469477.
TEST(HfCheckpoint, Llama3RopeFrequenciesMatchHandComputedValues) {
  model_config c;
  c.vocab_size = 16; c.d_model = 16; c.n_layers = 1; c.n_heads = 2; c.d_ff = 16; c.max_seq_len = 8;
  c.rope_theta = 10000;
  ASSERT_EQ(c.dim_per_head(), 8);
  auto plain = rope_inv_freq(c);
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_DOUBLE_EQ(plain[0], 1.0);
  EXPECT_NEAR(plain[1], 0.1, 1e-15);
  EXPECT_NEAR(plain[2], 0.01, 1e-16);
  EXPECT_NEAR(plain[3], 0.001, 1e-17);

  c.rope_scaling.llama3 = true;
  c.rope_scaling.factor = 8;
  c.rope_scaling.low_freq_factor = 1;
  c.rope_scaling.high_freq_factor = 4;
  c.rope_scaling.original_max_position_embeddings = 1000;
  auto scaled = rope_inv_freq(c);
  ASSERT_EQ(scaled.size(), 4u);
  EXPECT_DOUBLE_EQ(scaled[0], 1.0);
  EXPECT_NEAR(scaled[1], 0.1, 1e-15);
  EXPECT_NEAR(scaled[2], 0.0029753525068469477, 1e-15);
  EXPECT_NEAR(scaled[3], 0.000125, 1e-17);

  // The decoder's table: row p holds cos/sin(p * f) for each frequency, twice (rotate_half).
  // cos(3 * f2) = 0.9999601630130704, sin(3 * f2) = 0.008925938991147122.
  auto d = make_decoder(c);
  ASSERT_TRUE(d.ok()) << d.message();
  auto cos = (*d)->model->rope_cos, sin = (*d)->model->rope_sin;
  EXPECT_NEAR(cos[3][2].item<float>(), 0.9999601630130704, 1e-7);
  EXPECT_NEAR(cos[3][6].item<float>(), 0.9999601630130704, 1e-7);
  EXPECT_NEAR(sin[3][2].item<float>(), 0.008925938991147122, 1e-7);
  EXPECT_NEAR(sin[5][3].item<float>(), std::sin(5 * 0.000125), 1e-7);
  EXPECT_NEAR(cos[5][1].item<float>(), std::cos(0.5), 1e-7);

  // Round trip through config.json keeps the scaling.
  auto back = model_config_from_json(model_config_to_json(c));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_TRUE(back->rope_scaling.llama3);
  EXPECT_EQ(back->rope_scaling.original_max_position_embeddings, 1000);
  EXPECT_EQ(rope_inv_freq(*back), scaled);
}

TEST(HfCheckpoint, ConfigRefusalsNameWhatIsRefused) {
  EXPECT_NE(config_error([](json& j) { j["architectures"] = {"GPT2LMHeadModel"}; }).find("architecture 'GPT2LMHeadModel'"),
            std::string::npos);
  EXPECT_NE(config_error([](json& j) { j["architectures"] = {"Qwen3ForCausalLM"}; }).find("'Qwen3ForCausalLM' is not supported"),
            std::string::npos);
  for (const char* type : {"linear", "dynamic", "yarn", "longrope"}) {
    auto e = config_error([&](json& j) { j["rope_scaling"] = {{"rope_type", type}, {"factor", 2.0}}; });
    EXPECT_NE(e.find(std::string("rope_scaling type '") + type + "' is not supported"), std::string::npos) << e;
  }
  // Older configs name the type "type".
  auto old = config_error([](json& j) { j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}}; });
  EXPECT_NE(old.find("'linear'"), std::string::npos) << old;
  auto missing = config_error([](json& j) { j["rope_scaling"].erase("low_freq_factor"); });
  EXPECT_NE(missing.find("rope_scaling.low_freq_factor"), std::string::npos) << missing;
  auto window = config_error([](json& j) {
    j["architectures"] = {"MistralForCausalLM"};
    j["model_type"] = "mistral";
    j["sliding_window"] = 16;
  });
  EXPECT_NE(window.find("sliding_window 16 is not supported"), std::string::npos) << window;
  auto mlp = config_error([](json& j) { j["mlp_bias"] = true; });
  EXPECT_NE(mlp.find("mlp_bias"), std::string::npos) << mlp;

  // Accepted: Mistral with no window or one no shorter than max_position_embeddings (then it
  // never masks anything), Qwen2 (q/k/v biases), a "default" rope type.
  auto mistral = config_with([](json& j) {
    j["architectures"] = {"MistralForCausalLM"};
    j["model_type"] = "mistral";
    j["sliding_window"] = 64;
  });
  EXPECT_EQ(mistral.architecture, "MistralForCausalLM");
  EXPECT_FALSE(mistral.qkv_bias);
  auto qwen = config_with([](json& j) {
    j["architectures"] = {"Qwen2ForCausalLM"};
    j["model_type"] = "qwen2";
    j.erase("attention_bias");
    j["sliding_window"] = 8;
    j["use_sliding_window"] = false;
  });
  EXPECT_TRUE(qwen.qkv_bias);
  EXPECT_FALSE(qwen.o_bias);
  auto plain = config_with([](json& j) { j["rope_scaling"] = {{"rope_type", "default"}}; });
  EXPECT_FALSE(plain.rope_scaling.llama3);
  EXPECT_EQ(plain.vocab_size, 64);
  // HF's default for tie_word_embeddings is false.
  auto untied = config_with([](json& j) { j.erase("tie_word_embeddings"); });
  EXPECT_FALSE(untied.tie_embeddings);
}

TEST(HfCheckpoint, ShardedBf16Fp16CheckpointGivesTheLogitsOfTheFloat32Weights) {
  temp_dir hf, plain;
  auto m = make_model();
  write_hf_dir(hf.path, m);
  ASSERT_FALSE(fs::exists(hf.path + "/model.safetensors"));
  ASSERT_TRUE(save_checkpoint(plain.path, *m.reference, {}).ok());

  auto cfg = load_checkpoint_config(hf.path);
  ASSERT_TRUE(cfg.ok()) << cfg.message();
  // config.json's 60, generation_config.json's 60, 61, 62 and tokenizer_config.json's eos_token
  // <|eot_id|> = 63: all of them end a generation.
  EXPECT_EQ(cfg->eos_id, 60);
  EXPECT_EQ(cfg->eos_ids(), (std::vector<std::int64_t>{60, 61, 62, 63}));
  for (int id : {60, 61, 62, 63}) EXPECT_TRUE(cfg->is_eos(id)) << id;
  EXPECT_FALSE(cfg->is_eos(59));
  EXPECT_EQ(cfg->bos_id, 1);
  EXPECT_TRUE(cfg->rope_scaling.llama3);
  EXPECT_EQ(cfg->architecture, "LlamaForCausalLM");

  auto sharded = load_model(hf.path);
  ASSERT_TRUE(sharded.ok()) << sharded.message();
  auto unsharded = load_model(plain.path);
  ASSERT_TRUE(unsharded.ok()) << unsharded.message();
  for (const auto& p : (*sharded)->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), torch::kFloat) << p.key();
    EXPECT_TRUE(torch::equal(p.value(), (*unsharded)->named_parameters()[p.key()])) << p.key();
  }
  auto a = logits_of(*sharded), b = logits_of(*unsharded);
  EXPECT_LT((a - b).abs().max().item<float>(), 1e-5);
  EXPECT_GT(a.abs().max().item<float>(), 1e-3);  // not a degenerate model
  // The leap checkpoint written from the HF one keeps every eos id and the rope scaling.
  temp_dir again;
  ASSERT_TRUE(save_checkpoint(again.path, **sharded, {}).ok());
  auto back = load_checkpoint_config(again.path);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->eos_ids(), cfg->eos_ids());
  EXPECT_TRUE(back->rope_scaling.llama3);
}

TEST(HfCheckpoint, ShardRefusalsNameTheTensorAndFile) {
  auto m = make_model();
  auto load_error = [&](const std::function<void(const std::string&)>& damage) {
    temp_dir dir;
    write_hf_dir(dir.path, m);
    damage(dir.path);
    auto r = load_model(dir.path);
    return r.ok() ? std::string("(loaded)") : r.message();
  };

  auto missing = load_error([](const std::string& d) { fs::remove(d + "/" + shard2); });
  EXPECT_NE(missing.find(std::string("shard '") + shard2 + "' is missing"), std::string::npos) << missing;
  EXPECT_NE(missing.find("model.safetensors.index.json"), std::string::npos) << missing;

  const std::string extra = "model.layers.0.self_attn.q_norm.weight";
  auto unknown = load_error([&](const std::string& d) {
    auto t = m.shards.at(shard1);
    t[extra] = torch::ones({8}, torch::kBFloat16);
    ASSERT_TRUE(save_tensors(d + "/" + shard1, t).ok());
    auto wm = m.weight_map;
    wm[extra] = shard1;
    write_index(d, wm);
  });
  EXPECT_NE(unknown.find("unexpected tensor '" + extra + "'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find(shard1), std::string::npos) << unknown;

  const std::string norm = "model.norm.weight";
  auto twice = load_error([&](const std::string& d) {
    auto t = m.shards.at(shard1);
    t[norm] = m.shards.at(shard2).at(norm);
    ASSERT_TRUE(save_tensors(d + "/" + shard1, t).ok());
  });
  EXPECT_NE(twice.find("tensor '" + norm + "' is in two shards"), std::string::npos) << twice;

  auto unlisted = load_error([&](const std::string& d) {
    auto wm = m.weight_map;
    wm.erase(norm);
    write_index(d, wm);
  });
  EXPECT_NE(unlisted.find("tensor '" + norm + "' in shard '" + shard2 + "' is not listed in the index"),
            std::string::npos) << unlisted;

  const std::string q = "model.layers.1.self_attn.q_proj.weight";
  auto absent = load_error([&](const std::string& d) {
    auto t = m.shards.at(shard2);
    t.erase(q);
    ASSERT_TRUE(save_tensors(d + "/" + shard2, t).ok());
  });
  EXPECT_NE(absent.find("tensor '" + q + "': the index lists it in shard '" + shard2 + "', which does not contain it"),
            std::string::npos) << absent;

  auto escape = load_error([&](const std::string& d) {
    auto wm = m.weight_map;
    wm[norm] = "../elsewhere.safetensors";
    write_index(d, wm);
  });
  EXPECT_NE(escape.find("is not a file name in the checkpoint directory"), std::string::npos) << escape;

  auto arch = load_error([&](const std::string& d) {
    auto j = hf_config();
    j["architectures"] = {"Gemma2ForCausalLM"};
    write(d + "/config.json", j.dump());
  });
  EXPECT_NE(arch.find("architecture 'Gemma2ForCausalLM' is not supported"), std::string::npos) << arch;
}

TEST(HfCheckpoint, BadGenerationAndTokenizerConfigsNameFileAndKey) {
  auto m = make_model();
  auto config_error_of = [&](const std::string& file, const std::string& text) {
    temp_dir dir;
    write_hf_dir(dir.path, m);
    write(dir.path + "/" + file, text);
    auto r = load_checkpoint_config(dir.path);
    return r.ok() ? std::string("(loaded)") : r.message();
  };
  auto e1 = config_error_of("generation_config.json", R"({"eos_token_id": "</s>"})");
  EXPECT_NE(e1.find("generation_config.json: key 'eos_token_id'"), std::string::npos) << e1;
  auto e2 = config_error_of("generation_config.json", R"({"eos_token_id": [60, -1]})");
  EXPECT_NE(e2.find("generation_config.json: key 'eos_token_id'"), std::string::npos) << e2;
  auto e3 = config_error_of("generation_config.json", R"({"eos_token_id": [60, 64]})");
  EXPECT_NE(e3.find("generation_config.json: key 'eos_token_id': id 64 is not below vocab_size = 64"),
            std::string::npos) << e3;
  auto e4 = config_error_of("tokenizer_config.json", R"({"eos_token": 5})");
  EXPECT_NE(e4.find("tokenizer_config.json: key 'eos_token'"), std::string::npos) << e4;
  auto e5 = config_error_of("tokenizer_config.json", R"({"added_tokens_decoder": {"x": {"content": "a"}}})");
  EXPECT_NE(e5.find("tokenizer_config.json: key 'added_tokens_decoder.x'"), std::string::npos) << e5;
  auto e6 = config_error_of("tokenizer_config.json", R"({"chat_template": 3})");
  EXPECT_NE(e6.find("tokenizer_config.json: key 'chat_template'"), std::string::npos) << e6;
  auto e7 = config_error_of("generation_config.json", "{not json");
  EXPECT_NE(e7.find("generation_config.json: not valid JSON"), std::string::npos) << e7;

  // A named chat template list: the "default" one is used.
  auto tc = parse_tokenizer_config(
      R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})", "t");
  ASSERT_TRUE(tc.ok()) << tc.message();
  EXPECT_EQ(tc->chat_template, "D");
  // A single eos id is a one-element list.
  auto g = parse_generation_config(R"({"eos_token_id": 7, "pad_token_id": null})", "g");
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g->eos_ids, std::vector<std::int64_t>{7});
  EXPECT_EQ(g->pad_id, -1);
}
