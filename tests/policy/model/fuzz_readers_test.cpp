// Bounded fuzz loops over the checkpoint readers that parse bytes from disk, like
// tests/env/fuzz_test.cpp does for task and config files: safetensors images (the binary
// framing and the JSON header) and tokenizer.json texts, mutated from real ones with fixed
// seeds. Each must load or give an error naming its source, never crash, hang or allocate
// without bound; what loads must be usable (every tensor's bytes readable, encode/decode run).
#include "common/fs.hpp"
#include "policy/text/bpe_trainer.hpp"
#include "policy/model/safetensors.hpp"
#include "policy/model/tensor_file.hpp"
#include "policy/text/tokenizer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace leap;
using namespace leap::policy;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> json_fragments = {
  "\"", "{", "}", "[", "]", ",", ":", "null", "true", "-1", "0", "1e400", "2147483648",
  "99999999999999999999", "18446744073709551615", "\"F32\"", "\"I64\"", "\"BF16\"", "\"X9\"",
  "\"shape\":[", "\"data_offsets\":[0,", "\"__metadata__\":{", "\\u0000", "\\ud800", "\xff",
  "\"vocab\":{", "\"merges\":[", "\"type\":\"BPE\"", "\"id\":", "\"content\":\"\"", "\"Regex\":",
  "\"type\":\"Split\"", "\"type\":\"Sequence\"", "\"byte_fallback\":true", " ", "\n"};

std::string mutate(std::string s, std::mt19937_64& g) {
  int ops = 1 + static_cast<int>(g() % 4);
  for (int k = 0; k < ops; ++k) {
    std::size_t pos = s.empty() ? 0 : g() % (s.size() + 1);
    switch (g() % 6) {
      case 0:
        if (!s.empty())
          s.erase(std::min(pos, s.size() - 1), 1 + g() % 24);
        break;
      case 1:
        s.insert(pos, json_fragments[g() % json_fragments.size()]);
        break;
      case 2:
        s.insert(pos, 1, static_cast<char>(g() % 256));
        break;
      case 3: // a number made bigger, negative or fractional
        s.insert(pos, std::to_string(static_cast<long long>(g() % 3 == 0 ? -1 : 1)
                                     * static_cast<long long>(g() >> (g() % 63))));
        break;
      case 4:
        s.resize(pos);
        break;
      case 5:
        if (!s.empty())
          s[std::min(pos, s.size() - 1)] ^= static_cast<char>(1 << (g() % 8));
        break;
    }
  }
  return s;
}

// Structure-aware: keeps the text valid JSON and replaces, removes or adds values at random
// places (ids, shapes, offsets, types), so the mutations reach the checks behind the parser.
void mutate_value(nlohmann::json& j, std::mt19937_64& g, int depth = 0) {
  static const std::vector<nlohmann::json> values = {
    nullptr, -1, 0, 1, 2147483647, 4294967296ull, 18446744073709551615ull, 1.5, 1e300, "", "F32",
    "BF16", "Q8", "BPE", "ByteLevel", "Split", "\xff", nlohmann::json::array(),
    nlohmann::json::array({0, 1}), nlohmann::json::array({1, 0}), nlohmann::json::object(), true};
  if ((j.is_object() || j.is_array()) && !j.empty() && depth < 8 && g() % 4 != 0) {
    auto n = j.size();
    auto k = g() % n;
    if (j.is_array()) {
      if (g() % 6 == 0)
        j.erase(k);
      else
        mutate_value(j[k], g, depth + 1);
    } else {
      auto it = j.begin();
      std::advance(it, static_cast<long>(k));
      if (g() % 6 == 0)
        j.erase(it.key());
      else if (g() % 9 == 0)
        j[it.key() + "_"] = values[g() % values.size()];
      else
        mutate_value(it.value(), g, depth + 1);
    }
    return;
  }
  j = values[g() % values.size()];
}

std::string mutate_json(const std::string& text, std::mt19937_64& g) {
  auto j = nlohmann::json::parse(text);
  int ops = 1 + static_cast<int>(g() % 3);
  for (int k = 0; k < ops; ++k)
    mutate_value(j, g);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string u64_le(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// A real safetensors image: float, half, bfloat16 and integer tensors, and metadata.
std::string sample_image() {
  std::vector<float> a(24);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(i) * 0.5f - 3;
  std::vector<std::uint16_t> h(6), b(6);
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = f32_to_f16(static_cast<float>(i));
    b[i] = f32_to_bf16(-static_cast<float>(i));
  }
  std::vector<std::int64_t> n{7, -1};
  std::vector<st_tensor_view> ts = {
    {"model.layers.0.weight", st_dtype::f32, {4, 6}, a.data(), a.size() * 4},
    {"half", st_dtype::f16, {2, 3}, h.data(), h.size() * 2},
    {"brain", st_dtype::bf16, {6}, b.data(), b.size() * 2},
    {"w.step", st_dtype::i64, {2}, n.data(), n.size() * 8},
    {"empty", st_dtype::f32, {0, 3}, nullptr, 0}};
  auto img = serialize_safetensors(ts, {{"format", "pt"}});
  EXPECT_TRUE(img) << img.message();
  return *img;
}

} // namespace

TEST(FuzzReaders, MutatedSafetensorsLoadOrGiveAnErrorNamingTheFile) {
  const auto base = sample_image();
  ASSERT_TRUE(st_file::parse(base, "x.safetensors"));
  const std::uint64_t header_len = [&] {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
      n = (n << 8) | static_cast<unsigned char>(base[i]);
    return n;
  }();
  const std::string header = base.substr(8, header_len), data = base.substr(8 + header_len);
  std::mt19937_64 g(20261201);
  int loaded = 0, rejected = 0;
  double worst = 0;
  for (int it = 0; it < 3000; ++it) {
    std::string img;
    switch (it % 4) {
      case 0: // the header's JSON mutated, the length prefix kept right
        {
          auto h = mutate(header, g);
          img = u64_le(h.size()) + h + data;
        }
        break;
      case 3: // the header's values changed, still valid JSON
        {
          auto h = mutate_json(header, g);
          img = u64_le(h.size()) + h + data;
        }
        break;
      case 1: // the header mutated, the old length prefix kept (a torn rewrite)
        img = base.substr(0, 8) + mutate(header, g) + data;
        break;
      default: // raw bytes: flips, cuts, insertions anywhere (prefix and data included)
        img = mutate(base, g);
        break;
    }
    auto t0 = std::chrono::steady_clock::now();
    auto f = st_file::parse(img, "fuzz.safetensors");
    if (f) {
      ++loaded;
      for (const auto& [name, e] : f->entries()) {
        EXPECT_LE(e.end, img.size());
        EXPECT_EQ(f->bytes(e).size(), e.end - e.begin);
        if (e.dtype == st_dtype::f32 || e.dtype == st_dtype::f16 || e.dtype == st_dtype::bf16) {
          auto v = f->to_f32(name);
          ASSERT_TRUE(v) << v.message();
          EXPECT_EQ(static_cast<std::int64_t>(v->size()), e.numel());
        }
      }
      auto ts = tensors_from_file(*f);
      EXPECT_TRUE(ts) << "iteration " << it << ": " << ts.message();
    } else {
      ++rejected;
      EXPECT_EQ(f.message().rfind("fuzz.safetensors: ", 0), 0u) << "iteration " << it << ": " << f.message();
    }
    worst = std::max(worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("[ fuzz ] safetensors: %d rejected naming the file, %d still valid; slowest %.4f s\n",
              rejected, loaded, worst);
  EXPECT_GT(rejected, 1000);
  // Through the file path too: the error names the path.
  auto dir = *make_temp_dir(temp_root(), "leap-fuzz-st-");
  std::ofstream(dir + "/model.safetensors", std::ios::binary) << base.substr(0, base.size() - 5);
  auto r = load_tensors(dir + "/model.safetensors");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind(dir + "/model.safetensors: ", 0), 0u) << r.message();
  fs::remove_all(dir);
}

TEST(FuzzReaders, MutatedTokenizerJsonLoadsOrGivesAnErrorNamingTheFile) {
  // A trained byte-level BPE (both merge spellings are produced by to_json / hand-written files).
  std::vector<std::string> texts;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LEAP_SOURCE_DIR) / "tasks"))
    if (e.is_regular_file() && e.path().extension() == ".cu")
      texts.push_back(*read_file(e.path().string()));
  bpe_trainer_options o;
  o.vocab_size = 400;
  auto tok = bpe_trainer(o).train(texts);
  ASSERT_TRUE(tok) << tok.message();
  const std::string base = tok->to_json();
  ASSERT_TRUE(tokenizer::from_json(base));
  std::mt19937_64 g(4242);
  int loaded = 0, rejected = 0;
  double worst = 0;
  const std::string probe = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; } \xff\xfe";
  for (int it = 0; it < 600; ++it) {
    auto text = it % 2 ? mutate(base, g) : mutate_json(base, g);
    auto t0 = std::chrono::steady_clock::now();
    auto t = tokenizer::from_json(text);
    if (t) {
      ++loaded;
      auto ids = t->encode(probe);
      for (int id : ids)
        EXPECT_TRUE(id >= 0 && id < t->vocab_size()) << "iteration " << it;
      (void)t->decode(ids);
    } else {
      ++rejected;
      EXPECT_EQ(t.message().rfind("tokenizer.json: ", 0), 0u) << "iteration " << it << ": " << t.message();
    }
    worst = std::max(worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("[ fuzz ] tokenizer.json: %d rejected with a reason, %d still valid; slowest %.3f s\n",
              rejected, loaded, worst);
  EXPECT_GT(rejected, 200);
  EXPECT_GT(loaded, 20);
  // Hostile ids: huge, negative, sparse; must not allocate for them.
  for (const char* id : {"2147483647", "-5", "4294967296", "100000000", "1.5"}) {
    auto text = base;
    auto pos = text.find("\"added_tokens\": [");
    ASSERT_NE(pos, std::string::npos);
    auto after = text.find_first_not_of(" \n", pos + 17);
    text.insert(pos + 17, std::string("{\"id\": ") + id + ", \"content\": \"<|x|>\", \"special\": true}"
                              + (text[after] == ']' ? "" : ","));
    auto t = tokenizer::from_json(text);
    EXPECT_FALSE(t) << id;
    if (!t)
      std::printf("[ fuzz ] added token id %s: %s\n", id, t.message().c_str());
  }
  // Through the file path: a cut file names the path.
  auto dir = *make_temp_dir(temp_root(), "leap-fuzz-tok-");
  std::ofstream(dir + "/tokenizer.json", std::ios::binary) << base.substr(0, base.size() / 2);
  auto r = tokenizer::load(dir + "/tokenizer.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind(dir + "/tokenizer.json: ", 0), 0u) << r.message();
  fs::remove_all(dir);
}
