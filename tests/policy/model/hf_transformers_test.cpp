// Hugging Face checkpoints against transformers' own logits: tests/python/reference/hf_models.py
// writes tiny random LlamaForCausalLM (llama3 rope_scaling), Qwen2ForCausalLM (q/k/v biases, tied
// embeddings) and MistralForCausalLM (head_dim != hidden/heads) models with save_pretrained, each as
// float32 in one file, float32 in >= 2 shards, bf16 and fp16, and transformers' float32 logits of
// the saved weights on fixed input ids; each checkpoint loads with leap's loader (load_model) and
// gives logits within 1e-4 of transformers' (max |difference| printed per case). Needs the
// test-only Python environment (.venv, scripts/install-test-deps.sh); skipped, saying why, without it.
#include "policy/model/checkpoint.hpp"

#include "common/fs.hpp"
#include "tests/policy/python_reference.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

using namespace leap;
using namespace leap::policy;
namespace fs = std::filesystem;

namespace {

constexpr double tolerance = 1e-4;

// The little-endian float32 file the reference writes, as a tensor of `shape`.
torch::Tensor read_logits(const std::string& path, const std::vector<std::int64_t>& shape) {
  auto bytes = read_file(path);
  EXPECT_TRUE(bytes.ok()) << bytes.message();
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  if (!bytes || static_cast<std::int64_t>(bytes->size()) != n * 4) {
    ADD_FAILURE() << path << ": " << (bytes ? bytes->size() : 0) << " bytes, want " << n * 4;
    return {};
  }
  auto t = torch::empty(shape, torch::kFloat);
  std::memcpy(t.data_ptr<float>(), bytes->data(), bytes->size());  // the test hosts are little-endian
  return t;
}

} // namespace

TEST(HfTransformers, CheckpointsGiveTransformersLogits) {
  if (auto why = test::missing_python(); !why.empty()) GTEST_SKIP() << why;
  test::temp_dir dir("leap-hf-ref-");
  ASSERT_FALSE(dir.path.empty());
  const auto out = dir.path + "/models";
  ASSERT_TRUE(test::run_reference("hf_models.py", test::quoted(out), "", dir.path + "/stdout.txt",
                                  dir.path + "/stderr.txt"));
  auto index_text = read_file(out + "/reference.json");
  ASSERT_TRUE(index_text.ok()) << index_text.message();
  const auto index = nlohmann::json::parse(*index_text);
  const auto ids_json = index.at("input_ids");
  const auto batch = static_cast<std::int64_t>(ids_json.size());
  const auto seq = static_cast<std::int64_t>(ids_json.at(0).size());
  const auto vocab = index.at("vocab_size").get<std::int64_t>();
  auto ids = torch::empty({batch, seq}, torch::kLong);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t t = 0; t < seq; ++t) ids[b][t] = ids_json.at(b).at(t).get<std::int64_t>();

  const auto& cases = index.at("cases");
  ASSERT_EQ(cases.size(), 12u) << "3 architectures x 4 variants";
  torch::NoGradGuard no_grad;
  for (const auto& c : cases) {
    const auto name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    if (name.find("-sharded") != std::string::npos) {
      EXPECT_GE(c.at("shards").get<int>(), 2);
      EXPECT_TRUE(fs::exists(out + "/" + c.at("dir").get<std::string>() + "/model.safetensors.index.json"));
    }
    auto model = load_model(out + "/" + c.at("dir").get<std::string>());
    ASSERT_TRUE(model.ok()) << model.message();
    (*model)->eval();
    auto ours = (*model)->forward(ids);
    ASSERT_EQ(ours.sizes(), (std::vector<std::int64_t>{batch, seq, vocab}));
    auto theirs = read_logits(out + "/" + c.at("logits").get<std::string>(), {batch, seq, vocab});
    ASSERT_TRUE(theirs.defined());
    const double max_diff = (ours.to(torch::kFloat) - theirs).abs().max().item<double>();
    const double max_logit = theirs.abs().max().item<double>();
    std::printf("[ hf ref   ] %-16s max |leap - transformers| = %.3g (max |logit| %.3g)\n", name.c_str(), max_diff,
                max_logit);
    EXPECT_LE(max_diff, tolerance) << name;
    EXPECT_GT(max_logit, 0.5) << name << ": logits this small would hide differences";
  }
}
