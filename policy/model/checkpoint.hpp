// checkpoint: a training checkpoint is a directory
//   config.json            model_config (HF keys)
//   (loading also reads a Hugging Face model directory: model.safetensors or a sharded
//   model.safetensors.index.json, generation_config.json, tokenizer_config.json; see load_model)
//   model.safetensors      weights under HF Llama names (lm_head.weight omitted when tied)
//   tokenizer.json         copied from a path or written from a string (someone else's format)
//   optimizer.safetensors  AdamW moments: "<param>.exp_avg", "<param>.exp_avg_sq",
//                          ["<param>.max_exp_avg_sq"], "<param>.step" (I64 scalar)
//   trainer_state.json     {"step", "policy_version", "extra": {...}}
//   manifest.json          size and SHA-256 of every file above (common/file_manifest), last
// Saving writes a sibling temp directory and renames it into place, so a reader never sees a
// half-written checkpoint. Every loader first checks the files it reads against the manifest
// (a truncated or bit-flipped file is an error naming it, never a wrong load; a checkpoint
// without a manifest, written before leap made them or by hand, loads with a warning on stderr,
// once per directory), then validates names and shapes against the model and lists every
// mismatch. Called by the learner (save) and by the commands that start from a checkpoint
// (load); do not save from one thread while another updates the same model or optimizer.
#pragma once

#include "common/result.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "policy/model/decoder.hpp"
#include "policy/model/model_config.hpp"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace leap::policy {

struct trainer_state {
  std::int64_t step = 0;
  std::int64_t policy_version = 0;
  nlohmann::json extra = nlohmann::json::object();  // free-form (RNG seeds, config hash, ...)
};

struct checkpoint_save_options {
  const torch::optim::AdamW* optimizer = nullptr;  // null: no optimizer.safetensors
  trainer_state state;
  std::string tokenizer_json_path;  // copied when non-empty
  std::string tokenizer_json;       // written when non-empty and no path is given
};

result<void> save_checkpoint(const std::string& dir, decoder_impl& model, const checkpoint_save_options& opts);

// load_checkpoint_config (model_config.hpp): config.json + generation_config.json + tokenizer_config.json.
// config.json + the weights -> a new CPU float32 decoder. The weights are model.safetensors, or
// when a directory has none, the shards a Hugging Face model.safetensors.index.json lists
// (load_sharded_weights). F16/BF16 tensors are up-cast to float32.
result<decoder> load_model(const std::string& dir);
// The weights of a sharded checkpoint: `index_path` is model.safetensors.index.json, whose
// "weight_map" maps each tensor name to a shard file in the same directory; each shard is read
// with the safetensors reader and copied into the model shard by shard (one shard in memory at
// a time). Strict like load_weights; besides its mismatches, the error lists every missing
// shard, tensor the index lists in a shard that lacks it, tensor found in two shards, and tensor
// of a shard the index does not map there, each naming the tensor and the file. On error the
// model's weights are partly overwritten (load_model then discards the model).
result<void> load_sharded_weights(decoder_impl& model, const std::string& index_path);
// Copies a safetensors file's tensors into the model's parameters (any dtype/device), strictly:
// the error lists every missing, unexpected or wrongly shaped tensor. Tolerated and ignored:
// "lm_head.weight" when the model ties embeddings, "*.rotary_emb.inv_freq" (old HF exports).
result<void> load_weights(decoder_impl& model, const std::string& safetensors_path);
// Restores AdamW moments and step counts for the model's parameters (which must be the ones the
// optimizer was built on). Hyperparameters (lr, betas, ...) stay those the optimizer was built
// with; the saved ones are only recorded in the file's metadata.
result<void> load_optimizer_state(torch::optim::AdamW& optimizer, decoder_impl& model, const std::string& dir);
result<trainer_state> load_trainer_state(const std::string& dir);

} // namespace leap::policy
