// Tests of the safetensors reader/writer: every dtype round trips, torch conversion, and
// corrupted headers, offsets and sizes give clear errors.
#include "policy/model/safetensors.hpp"
#include "policy/model/tensor_file.hpp"

#include "common/fs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace leap::policy;

namespace {

std::string with_header(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

} // namespace

TEST(Safetensors, RoundTripsAllDtypes) {
  std::vector<float> f32 = {1.5f, -2.25f, 0.0f, 3e-3f, 65504.0f, -1e-7f};
  std::vector<std::uint16_t> f16, bf16;
  for (float v : f32) {
    f16.push_back(f32_to_f16(v));
    bf16.push_back(f32_to_bf16(v));
  }
  std::vector<std::int64_t> i64 = {-1, 0, 1LL << 40, 7};
  std::vector<std::int32_t> i32 = {-5, 6, 7, 8, 9, 10};
  std::vector<st_tensor_view> views = {
      {"a.f32", st_dtype::f32, {2, 3}, f32.data(), f32.size() * 4},
      {"b.f16", st_dtype::f16, {6}, f16.data(), f16.size() * 2},
      {"c.bf16", st_dtype::bf16, {3, 2}, bf16.data(), bf16.size() * 2},
      {"d.i64", st_dtype::i64, {4}, i64.data(), i64.size() * 8},
      {"e.i32", st_dtype::i32, {2, 1, 3}, i32.data(), i32.size() * 4},
      {"f.empty", st_dtype::f32, {0, 4}, nullptr, 0},
      {"g.scalar", st_dtype::i64, {}, i64.data(), 8},
  };
  auto bytes = serialize_safetensors(views, {{"format", "pt"}, {"note", "hi"}});
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  std::uint64_t hlen;
  std::memcpy(&hlen, bytes->data(), 8);
  EXPECT_EQ((8 + hlen) % 8, 0u) << "data section is 8-byte aligned";

  auto f = st_file::parse(*bytes);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->entries().size(), views.size());
  EXPECT_EQ(f->metadata().at("note"), "hi");
  for (const auto& v : views) {
    const st_entry* e = f->find(v.name);
    ASSERT_NE(e, nullptr) << v.name;
    EXPECT_EQ(e->dtype, v.dtype);
    EXPECT_EQ(e->shape, v.shape);
    auto raw = f->bytes(*e);
    ASSERT_EQ(raw.size(), v.nbytes);
    if (v.nbytes) {
      EXPECT_EQ(std::memcmp(raw.data(), v.data, v.nbytes), 0) << v.name;
    }
  }
  auto as_f32 = f->to_f32("b.f16");
  ASSERT_TRUE(as_f32.ok());
  for (std::size_t i = 0; i < f32.size(); ++i) EXPECT_NEAR((*as_f32)[i], f32[i], std::abs(f32[i]) * 1e-3 + 1e-7);
  auto as_bf = f->to_f32("c.bf16");
  ASSERT_TRUE(as_bf.ok());
  for (std::size_t i = 0; i < f32.size(); ++i) EXPECT_NEAR((*as_bf)[i], f32[i], std::abs(f32[i]) * 1e-2 + 1e-9);

  // Through torch: F16/BF16 become float32, integers keep their dtype.
  auto t = tensors_from_file(*f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->at("b.f16").scalar_type(), torch::kFloat);
  EXPECT_EQ(t->at("c.bf16").scalar_type(), torch::kFloat);
  EXPECT_EQ(t->at("d.i64").scalar_type(), torch::kLong);
  EXPECT_EQ(t->at("e.i32").scalar_type(), torch::kInt);
  EXPECT_EQ(t->at("d.i64")[2].item<std::int64_t>(), 1LL << 40);
  EXPECT_EQ(t->at("g.scalar").dim(), 0);
  EXPECT_TRUE(torch::equal(t->at("a.f32"), torch::tensor(f32).view({2, 3})));
}

TEST(Safetensors, HalfConversionsAreExact) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);                       // overflow -> inf
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));      // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
  // Every finite half survives half -> float -> half.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(f32_to_f16(f16_to_f32(static_cast<std::uint16_t>(h))), h) << h;
  }
  // Same as LibTorch's conversion on random values.
  auto x = torch::randn({1000}) * 100;
  auto h = x.to(torch::kHalf).to(torch::kFloat), b = x.to(torch::kBFloat16).to(torch::kFloat);
  for (int i = 0; i < 1000; ++i) {
    float v = x[i].item<float>();
    ASSERT_EQ(f16_to_f32(f32_to_f16(v)), h[i].item<float>()) << v;
    ASSERT_EQ(bf16_to_f32(f32_to_bf16(v)), b[i].item<float>()) << v;
  }
}

TEST(Safetensors, SaveLoadTensorsThroughFile) {
  auto dir = leap::make_temp_dir(leap::temp_root(), "leap-st-");
  ASSERT_TRUE(dir.ok());
  named_tensors in{{"w", torch::randn({3, 4})},
                   {"h", torch::randn({5}).to(torch::kHalf)},
                   {"b", torch::randn({2, 2}).to(torch::kBFloat16)},
                   {"i", torch::arange(6, torch::kInt)}};
  const std::string path = *dir + "/t.safetensors";
  ASSERT_TRUE(save_tensors(path, in, {{"k", "v"}}).ok());
  std::map<std::string, std::string> meta;
  auto out = load_tensors(path, &meta);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(meta.at("k"), "v");
  EXPECT_TRUE(torch::equal(out->at("w"), in.at("w")));
  EXPECT_TRUE(torch::equal(out->at("h"), in.at("h").to(torch::kFloat)));
  EXPECT_TRUE(torch::equal(out->at("b"), in.at("b").to(torch::kFloat)));
  EXPECT_TRUE(torch::equal(out->at("i"), in.at("i")));
  named_tensors bad{{"d", torch::zeros({2}, torch::kDouble)}};
  auto err = save_tensors(path, bad);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.message().find("'d'"), std::string::npos) << err.message();
  std::filesystem::remove_all(*dir);
}

TEST(Safetensors, CorruptFilesGiveClearErrors) {
  auto expect_error = [](const std::string& bytes, const std::string& needle) {
    auto f = st_file::parse(bytes, "x.safetensors");
    ASSERT_FALSE(f.ok()) << "expected an error containing '" << needle << "'";
    EXPECT_NE(f.message().find(needle), std::string::npos) << f.message();
    EXPECT_NE(f.message().find("x.safetensors"), std::string::npos) << f.message();
  };
  const std::string data(16, '\0');
  expect_error("abc", "too short");
  {
    std::string b(8, '\0');
    const std::uint64_t n = 1000;
    std::memcpy(b.data(), &n, 8);
    expect_error(b + "{}", "runs past the end");
  }
  expect_error(with_header("{\"a\": ", data), "not valid JSON");
  expect_error(with_header("[1]", ""), "not a JSON object");
  expect_error(with_header(R"({"a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}})", data),
               "unsupported dtype 'F64'");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 32]}})", data),
               "run past the data section");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", data),
               "needs 12 bytes");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", data),
               "begin > end");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", data),
               "non-negative");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                               "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", data),
               "overlaps");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", data),
               "hole");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", data),
               "trailing bytes");
  expect_error(with_header(R"({"a": {"dtype": "F32", "shape": [4]}})", data), "data_offsets");
  expect_error(with_header(R"({"__metadata__": {"k": 1}})", ""), "__metadata__");
  // A well-formed file still parses.
  EXPECT_TRUE(st_file::parse(with_header(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", data))
                  .ok());
  // Writer-side checks.
  float x = 1;
  auto w = serialize_safetensors({{"a", st_dtype::f32, {2}, &x, 4}});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.message().find("needs 8 bytes"), std::string::npos) << w.message();
  auto dup = serialize_safetensors({{"a", st_dtype::f32, {1}, &x, 4}, {"a", st_dtype::f32, {1}, &x, 4}});
  EXPECT_FALSE(dup.ok());
  EXPECT_FALSE(st_file::read("/nonexistent/file.safetensors").ok());
}
