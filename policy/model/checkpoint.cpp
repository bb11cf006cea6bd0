// Checkpoint directories: see checkpoint.hpp.
#include "policy/model/checkpoint.hpp"

#include "common/file_manifest.hpp"
#include "policy/model/checkpoint_verify.hpp"
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "policy/model/tensor_file.hpp"

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <type_traits>
#include <vector>

namespace leap::policy {
namespace {

namespace fs = std::filesystem;

// Tensors of a weights file that are no parameter and are skipped: "*.rotary_emb.inv_freq" (old
// HF exports) and "lm_head.weight" when the model ties it to the embedding.
bool tolerated_extra(const std::string& name, const model_config& cfg) {
  return ends_with(name, "rotary_emb.inv_freq") || (name == "lm_head.weight" && cfg.tie_embeddings);
}

// The error listing every mismatch of the weights at `path` against the model; ok when none.
result<void> mismatch_error(const std::string& path, const std::vector<std::string>& problems) {
  if (problems.empty()) return {};
  std::string msg = path + ": " + std::to_string(problems.size()) + " mismatch(es) against the model:";
  for (const auto& p : problems) msg += "\n  - " + p;
  return make_error(msg);
}
using json = nlohmann::json;

std::string shape_str(torch::IntArrayRef s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// The optimizer's state map key for a parameter: a string of the TensorImpl address in
// LibTorch 1.x, the address itself in 2.x.
template <class Map>
typename Map::key_type state_key(const Map&, const torch::Tensor& p) {
  using key = typename Map::key_type;
  if constexpr (std::is_same_v<key, std::string>) {
    std::ostringstream s;
    s << static_cast<const void*>(p.unsafeGetTensorImpl());
    return s.str();
  } else {
    return static_cast<key>(p.unsafeGetTensorImpl());
  }
}

result<void> write_optimizer(const std::string& path, const torch::optim::AdamW& opt, decoder_impl& model) {
  named_tensors out;
  const auto& state = opt.state();
  for (const auto& p : model.named_parameters()) {
    auto it = state.find(state_key(state, p.value()));
    if (it == state.end()) continue;  // no step taken for this parameter yet
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
    out[p.key() + ".exp_avg"] = s.exp_avg();
    out[p.key() + ".exp_avg_sq"] = s.exp_avg_sq();
    if (s.max_exp_avg_sq().defined()) out[p.key() + ".max_exp_avg_sq"] = s.max_exp_avg_sq();
    out[p.key() + ".step"] = torch::tensor(s.step(), torch::kLong).reshape({});
  }
  std::map<std::string, std::string> meta{{"format", "leap-adamw-v1"}};
  if (!opt.param_groups().empty()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(opt.param_groups().front().options());
    meta["lr"] = std::to_string(o.lr());
    meta["beta1"] = std::to_string(std::get<0>(o.betas()));
    meta["beta2"] = std::to_string(std::get<1>(o.betas()));
    meta["eps"] = std::to_string(o.eps());
    meta["weight_decay"] = std::to_string(o.weight_decay());
    meta["amsgrad"] = o.amsgrad() ? "true" : "false";
  }
  return save_tensors(path, out, meta);
}

json trainer_state_to_json(const trainer_state& s) {
  return json{{"step", s.step}, {"policy_version", s.policy_version}, {"extra", s.extra}};
}

} // namespace

result<void> save_checkpoint(const std::string& dir, decoder_impl& model, const checkpoint_save_options& opts) {
  std::error_code ec;
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) return make_error(parent.string() + ": cannot create directory: " + ec.message());
  auto tmp = make_temp_dir(parent.string(), "." + target.filename().string() + ".tmp.");
  if (!tmp) return tmp.err();
  auto fail = [&](const std::string& what) {
    std::error_code ignore;
    fs::remove_all(*tmp, ignore);
    return make_error("save checkpoint " + target.string() + ": " + what);
  };

  if (auto r = save_model_config(*tmp + "/config.json", model.config()); !r) return fail(r.message());
  named_tensors weights;
  for (const auto& p : model.named_parameters()) weights[p.key()] = p.value();
  if (auto r = save_tensors(*tmp + "/model.safetensors", weights, {{"format", "pt"}}); !r) return fail(r.message());
  if (!opts.tokenizer_json_path.empty()) {
    fs::copy_file(opts.tokenizer_json_path, *tmp + "/tokenizer.json", ec);
    if (ec) return fail("copy tokenizer " + opts.tokenizer_json_path + ": " + ec.message());
  } else if (!opts.tokenizer_json.empty()) {
    if (auto r = write_file_atomic(*tmp + "/tokenizer.json", opts.tokenizer_json); !r) return fail(r.message());
  }
  if (opts.optimizer != nullptr) {
    if (auto r = write_optimizer(*tmp + "/optimizer.safetensors", *opts.optimizer, model); !r) {
      return fail(r.message());
    }
  }
  if (auto r = write_file_atomic(*tmp + "/trainer_state.json", trainer_state_to_json(opts.state).dump(2) + "\n"); !r) {
    return fail(r.message());
  }
  // Last: the manifest of everything above, so a loader can tell a complete checkpoint.
  std::vector<std::string> files;
  for (const auto& f : checkpoint_files())
    if (fs::exists(*tmp + "/" + f, ec))
      files.push_back(f);
  if (auto r = write_manifest(*tmp, files); !r) return fail(r.message());
  if (auto r = promote_checkpoint(*tmp, target.string()); !r) return fail(r.message());
  return {};
}

result<void> load_weights(decoder_impl& model, const std::string& path) {
  auto tensors = load_tensors(path);
  if (!tensors) return tensors.err();
  std::vector<std::string> problems;
  auto params = model.named_parameters();
  for (const auto& p : params) {
    auto it = tensors->find(p.key());
    if (it == tensors->end()) {
      problems.push_back("missing tensor '" + p.key() + "' (model expects shape " + shape_str(p.value().sizes()) + ")");
    } else if (it->second.sizes() != p.value().sizes()) {
      problems.push_back("tensor '" + p.key() + "' has shape " + shape_str(it->second.sizes()) +
                         " in the file, the model expects " + shape_str(p.value().sizes()));
    } else if (!it->second.is_floating_point()) {
      problems.push_back("tensor '" + p.key() + "' has integer dtype " +
                         std::string(c10::toString(it->second.scalar_type())));
    }
  }
  for (const auto& [name, t] : *tensors) {
    if (params.contains(name) || tolerated_extra(name, model.config())) continue;
    problems.push_back("unexpected tensor '" + name + "' with shape " + shape_str(t.sizes()));
  }
  if (auto r = mismatch_error(path, problems); !r) return r;
  try {
    torch::NoGradGuard no_grad;
    for (auto& p : params) p.value().copy_(tensors->at(p.key()));
  } catch (const c10::Error& e) {
    return make_error(path + ": " + e.what_without_backtrace());
  }
  return {};
}

result<void> load_sharded_weights(decoder_impl& model, const std::string& index_path) {
  auto text = read_file(index_path);
  if (!text) return text.err();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(index_path + ": not a JSON object");
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object() || wm->empty())
    return make_error(index_path + ": key 'weight_map': expected a non-empty object {tensor name: shard file}");
  std::map<std::string, std::string> shard_of;                // tensor -> shard file (the index)
  std::map<std::string, std::vector<std::string>> listed_in;  // shard file -> its tensors
  for (const auto& [name, shard] : wm->items()) {
    if (!shard.is_string())
      return make_error(index_path + ": key 'weight_map." + name + "': expected a shard file name, got " + shard.dump());
    auto file = shard.get<std::string>();
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
        file.find('\\') != std::string::npos)
      return make_error(index_path + ": key 'weight_map." + name + "': shard '" + file +
                        "' is not a file name in the checkpoint directory");
    shard_of[name] = file;
    listed_in[file].push_back(name);
  }
  const fs::path dir = fs::path(index_path).parent_path();
  auto params = model.named_parameters();
  std::map<std::string, std::string> read_from;  // tensor -> the shard it was read from
  std::vector<std::string> problems;
  torch::NoGradGuard no_grad;
  for (const auto& [file, names] : listed_in) {
    const std::string path = (dir / file).string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      problems.push_back("shard '" + file + "' is missing (the index lists " + std::to_string(names.size()) +
                         " tensor(s) in it, e.g. '" + names.front() + "')");
      continue;
    }
    auto st = st_file::read(path);
    if (!st) return st.err();
    for (const auto& n : names)
      if (st->find(n) == nullptr)
        problems.push_back("tensor '" + n + "': the index lists it in shard '" + file + "', which does not contain it");
    for (const auto& [name, e] : st->entries()) {
      if (auto prev = read_from.find(name); prev != read_from.end()) {
        problems.push_back("tensor '" + name + "' is in two shards: '" + prev->second + "' and '" + file + "'");
        continue;
      }
      read_from[name] = file;
      auto mapped = shard_of.find(name);
      if (mapped == shard_of.end()) {
        problems.push_back("tensor '" + name + "' in shard '" + file + "' is not listed in the index");
        continue;
      }
      if (mapped->second != file) {
        problems.push_back("tensor '" + name + "' is in shard '" + file + "', the index maps it to '" + mapped->second + "'");
        continue;
      }
      if (tolerated_extra(name, model.config())) continue;
      auto* p = params.find(name);
      if (p == nullptr) {
        problems.push_back("unexpected tensor '" + name + "' with shape " + shape_str(e.shape) + " in shard '" + file +
                           "' (not a parameter of this decoder)");
        continue;
      }
      if (torch::IntArrayRef(e.shape) != p->sizes()) {
        problems.push_back("tensor '" + name + "' has shape " + shape_str(e.shape) + " in shard '" + file +
                           "', the model expects " + shape_str(p->sizes()));
        continue;
      }
      if (e.dtype == st_dtype::i64 || e.dtype == st_dtype::i32) {
        problems.push_back("tensor '" + name + "' in shard '" + file + "' has integer dtype " + st_dtype_name(e.dtype));
        continue;
      }
      auto t = tensor_from_entry(*st, e);
      if (!t) return make_error(path + ": tensor '" + name + "': " + t.message());
      try {
        p->copy_(*t);
      } catch (const c10::Error& err) {
        return make_error(path + ": tensor '" + name + "': " + err.what_without_backtrace());
      }
    }
  }
  for (const auto& p : params) {
    if (read_from.count(p.key())) continue;
    auto mapped = shard_of.find(p.key());
    if (mapped != shard_of.end()) continue;  // reported with its shard above
    problems.push_back("missing tensor '" + p.key() + "' (model expects shape " + shape_str(p.value().sizes()) +
                       "): not in the index");
  }
  return mismatch_error(index_path, problems);
}

result<decoder> load_model(const std::string& dir) {
  std::error_code ec;
  const bool sharded = !fs::exists(dir + "/model.safetensors", ec) && fs::exists(dir + "/model.safetensors.index.json", ec);
  const std::string weights = sharded ? "model.safetensors.index.json" : "model.safetensors";
  if (auto v = verify_checkpoint(dir, {"config.json", weights}); !v) return v.err();
  auto cfg = load_checkpoint_config(dir);
  if (!cfg) return cfg.err();
  auto model = make_decoder(*cfg);
  if (!model) return model.err();
  auto r = sharded ? load_sharded_weights(**model, dir + "/" + weights) : load_weights(**model, dir + "/" + weights);
  if (!r) return r.err();
  return model;
}

result<void> load_optimizer_state(torch::optim::AdamW& opt, decoder_impl& model, const std::string& dir) {
  const std::string path = dir + "/optimizer.safetensors";
  if (auto v = verify_checkpoint(dir, {"optimizer.safetensors"}); !v) return v.err();
  auto tensors = load_tensors(path);
  if (!tensors) return tensors.err();
  std::set<const void*> in_optimizer;
  for (const auto& g : opt.param_groups()) {
    for (const auto& p : g.params()) in_optimizer.insert(p.unsafeGetTensorImpl());
  }
  std::vector<std::string> problems;
  std::set<std::string> used;
  auto params = model.named_parameters();
  struct pending {
    torch::Tensor param;
    std::unique_ptr<torch::optim::AdamWParamState> state;
  };
  std::vector<pending> restored;
  try {
    for (const auto& p : params) {
      const std::string n = p.key();
      auto find = [&](const std::string& suffix) -> torch::Tensor {
        auto it = tensors->find(n + suffix);
        if (it == tensors->end()) return {};
        used.insert(it->first);
        return it->second;
      };
      auto m = find(".exp_avg"), v = find(".exp_avg_sq"), vmax = find(".max_exp_avg_sq"), step = find(".step");
      if (!m.defined() && !v.defined() && !step.defined()) continue;  // parameter had no state
      if (!m.defined() || !v.defined() || !step.defined()) {
        problems.push_back("parameter '" + n + "': incomplete state (needs .exp_avg, .exp_avg_sq and .step)");
        continue;
      }
      if (!in_optimizer.count(p.value().unsafeGetTensorImpl())) {
        problems.push_back("parameter '" + n + "' has saved state but is not in the optimizer");
        continue;
      }
      bool bad = false;
      for (auto [suffix, t] : {std::pair{".exp_avg", m}, {".exp_avg_sq", v}, {".max_exp_avg_sq", vmax}}) {
        if (t.defined() && t.sizes() != p.value().sizes()) {
          problems.push_back("tensor '" + n + suffix + "' has shape " + shape_str(t.sizes()) +
                             ", the parameter has " + shape_str(p.value().sizes()));
          bad = true;
        }
      }
      if (step.numel() != 1 || step.is_floating_point()) {
        problems.push_back("tensor '" + n + ".step' must be one integer");
        bad = true;
      }
      if (bad) continue;
      auto st = std::make_unique<torch::optim::AdamWParamState>();
      auto opts = p.value().options().requires_grad(false);
      st->step(step.item<std::int64_t>());
      st->exp_avg(m.to(opts).clone());
      st->exp_avg_sq(v.to(opts).clone());
      if (vmax.defined()) st->max_exp_avg_sq(vmax.to(opts).clone());
      restored.push_back({p.value(), std::move(st)});
    }
  } catch (const c10::Error& e) {
    return make_error(path + ": " + e.what_without_backtrace());
  }
  for (const auto& [name, t] : *tensors) {
    if (!used.count(name)) problems.push_back("unexpected tensor '" + name + "' (no such model parameter)");
  }
  if (auto r = mismatch_error(path, problems); !r) return r;
  auto& state = opt.state();
  for (auto& r : restored) state[state_key(state, r.param)] = std::move(r.state);
  return {};
}

result<trainer_state> load_trainer_state(const std::string& dir) {
  const std::string path = dir + "/trainer_state.json";
  if (auto v = verify_checkpoint(dir, {"trainer_state.json"}); !v) return v.err();
  auto text = read_file(path);
  if (!text) return text.err();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(path + ": not a JSON object");
  trainer_state s;
  auto get_int = [&](const char* key, std::int64_t& out) -> result<void> {
    auto it = j.find(key);
    if (it == j.end()) return {};
    if (!it->is_number_integer()) return make_error(path + ": '" + key + "' must be an integer");
    out = it->get<std::int64_t>();
    return {};
  };
  if (auto r = get_int("step", s.step); !r) return r.err();
  if (auto r = get_int("policy_version", s.policy_version); !r) return r.err();
  if (auto it = j.find("extra"); it != j.end()) s.extra = *it;
  return s;
}

} // namespace leap::policy
