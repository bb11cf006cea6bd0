// Tests of the fused decoding step (policy/model/decode_step.hpp): its logits equal forward_cached's
// after a left-padded prefill, for MHA / GQA / MQA, tied and untied heads, q/k/v and o biases,
// head sizes with and without the vectorised paths (Dh a multiple of 16 or not), row counts
// across the 8-row GEMM blocks, and a cache that must grow; a prompt prefix shared by the rows
// equals the prefix expanded to every row; the one-row prefill equals forward_cached_last;
// the decoder repacks after a weight update; multinomial_one draws what torch::multinomial draws
// from the same generator; and the packed GEMM equals matmul.
//
// The step runs the loops of selected_decode_path() (policy/model/decode_path.hpp): the best the CPU has
// here; ctest runs these tests again with LEAP_DECODE_PATH=avx512, avx2 and portable
// (tests/policy/model/CMakeLists.txt), and they skip, saying why, where the CPU lacks the path.
// PackedGemmEqualsMatmul and EveryPathEqualsForwardCached try every path the CPU has in one run.
#include "policy/model/decode_step.hpp"
#include "policy/model/decoder.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

using namespace leap::policy;

namespace {

struct shape {
  std::int64_t heads, kv_heads, d_model;
  bool tie, bias;
};

decoder make_model(const shape& s) {
  model_config c;
  c.vocab_size = 300;
  c.d_model = s.d_model;
  c.n_layers = 2;
  c.n_heads = s.heads;
  c.n_kv_heads = s.kv_heads;
  c.d_ff = 172;
  c.max_seq_len = 256;
  c.tie_embeddings = s.tie;
  c.qkv_bias = s.bias;
  c.o_bias = s.bias;
  torch::manual_seed(5);
  auto m = make_decoder(c);
  EXPECT_TRUE(m.ok()) << m.message();
  (*m)->init_weights(0.1);
  if (s.bias) {  // init_weights zeroes biases: give them values so that they matter
    torch::NoGradGuard no_grad;
    for (auto& p : (*m)->named_parameters())
      if (p.key().size() > 5 && p.key().compare(p.key().size() - 5, 5, ".bias") == 0) p.value().normal_(0, 0.1);
  }
  return *m;
}

float max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<float>(); }

// Why decode_step::make returned null for a small float32 model: the selected path is libtorch or
// refused (the CPU lacks the forced one).
std::string no_fused() {
  const auto path = selected_decode_path();
  if (!path.ok()) return "no fused step: " + path.message();
  return std::string("no fused step on the ") + to_string(*path) + " path";
}

constexpr decode_path all_paths[] = {decode_path::portable, decode_path::avx2, decode_path::avx512};

// Restores the environment's choice when a test that called set_decode_path ends.
struct path_reset {
  ~path_reset() { (void)set_decode_path(std::nullopt); }
};

} // namespace

TEST(DecodeStep, EqualsForwardCached) {
  // Dh = 32, 16, 64 (MHA), 128 take the AVX-512 attention loops where the CPU has them; Dh = 24
  // the portable ones.
  for (const shape& s : {shape{4, 2, 128, true, false}, shape{4, 4, 64, false, false}, shape{4, 1, 96, true, true},
                         shape{2, 2, 128, false, true}, shape{6, 3, 192, true, false}, shape{2, 1, 256, true, false}}) {
    auto m = make_model(s);
    c10::InferenceMode guard;
    auto step = decode_step::make(*m);
    if (!step) GTEST_SKIP() << no_fused();
    for (std::int64_t rows : {1, 3, 8, 11}) {
      // Left-padded prefill of different lengths (pads among the cached keys), in a cache
      // too small for the steps (it grows on the way).
      const std::int64_t P = 21;
      auto ids = torch::randint(0, 300, {rows, P}, torch::kLong);
      auto mask = torch::ones({rows, P}, torch::kLong);
      for (std::int64_t r = 0; r < rows; ++r) mask[r].narrow(0, 0, (r * 7) % P).fill_(0);
      auto a = m->make_cache(rows, P + 2), b = m->make_cache(rows, P + 2);
      m->forward_cached(ids, a, mask);
      m->forward_cached(ids, b, mask);
      for (int t = 0; t < 5; ++t) {
        auto next = torch::randint(0, 300, {rows}, torch::kLong);
        auto want = m->forward_cached(next.view({rows, 1}), a).select(1, 0);  // [rows, V]
        auto got = (*step)(next, b);
        ASSERT_EQ(got.sizes(), want.sizes());
        EXPECT_LT(max_diff(got, want), 1e-4) << "heads " << s.heads << "/" << s.kv_heads << " d " << s.d_model
                                             << " rows " << rows << " step " << t;
      }
      EXPECT_EQ(b.length, a.length);
      EXPECT_TRUE(torch::equal(b.next_pos, a.next_pos));
      EXPECT_TRUE(torch::equal(b.key_valid, a.key_valid));
      EXPECT_LT(max_diff(b.k[1].narrow(2, 0, b.length), a.k[1].narrow(2, 0, a.length)), 1e-4);
    }
  }
}

TEST(DecodeStep, SharedPrefixEqualsExpandedCache) {
  for (const shape& s : {shape{4, 2, 128, true, false}, shape{4, 1, 96, true, true}}) {
    auto m = make_model(s);
    c10::InferenceMode guard;
    auto step = decode_step::make(*m);
    if (!step) GTEST_SKIP() << no_fused();
    for (bool padded : {false, true}) {
      for (std::int64_t rows : {1, 8, 10}) {
        const std::int64_t P = 37;
        auto ids = torch::randint(0, 300, {1, P}, torch::kLong);
        auto mask = torch::ones({1, P}, torch::kLong);
        if (padded) mask[0].narrow(0, 0, 5).fill_(0);
        auto expanded = m->make_cache(1, P + 8), prefix = m->make_cache(1, P);
        m->forward_cached(ids, expanded, mask);
        m->forward_cached(ids, prefix, mask);
        expanded.select_rows(torch::zeros({rows}, torch::kLong));
        auto own = m->make_cache(rows, 2);  // grows on the way
        own.next_pos = prefix.next_pos.expand({rows}).clone();
        for (int t = 0; t < 6; ++t) {
          auto next = torch::randint(0, 300, {rows}, torch::kLong);
          auto want = m->forward_cached(next.view({rows, 1}), expanded).select(1, 0);  // [rows, V]
          auto got = (*step)(next, own, &prefix);
          EXPECT_LT(max_diff(got, want), 1e-4) << "rows " << rows << " step " << t << (padded ? " padded" : "");
        }
        EXPECT_EQ(prefix.length, P);
        EXPECT_EQ(own.length, 6);
      }
    }
  }
}

TEST(DecodeStep, PrefillEqualsForwardCachedLast) {
  for (const shape& s : {shape{4, 2, 128, true, false}, shape{4, 1, 96, true, true}, shape{4, 4, 64, false, false}}) {
    auto m = make_model(s);
    c10::InferenceMode guard;
    auto step = decode_step::make(*m);
    if (!step) GTEST_SKIP() << no_fused();
    auto ids = torch::randint(0, 300, {1, 29}, torch::kLong);
    auto a = m->make_cache(1, 4), b = m->make_cache(1, 4);
    // A first chunk, then a second one over the cached keys; then one decode step.
    for (auto [from, n] : {std::pair<std::int64_t, std::int64_t>{0, 20}, {20, 9}}) {
      auto want = m->forward_cached_last(ids.narrow(1, from, n), a);  // [1, V]
      auto got = step->prefill(ids.narrow(1, from, n).view({n}), b);
      EXPECT_LT(max_diff(got, want), 1e-4) << "from " << from;
    }
    EXPECT_EQ(b.length, 29);
    EXPECT_TRUE(torch::equal(b.next_pos, a.next_pos));
    EXPECT_LT(max_diff(b.k[0].narrow(2, 0, 29), a.k[0].narrow(2, 0, 29)), 1e-4);
    EXPECT_LT(max_diff(b.v[1].narrow(2, 0, 29), a.v[1].narrow(2, 0, 29)), 1e-4);
    auto next = torch::tensor({7}, torch::kLong);
    EXPECT_LT(max_diff((*step)(next, b), m->forward_cached(next.view({1, 1}), a).select(1, 0)), 1e-4);
  }
}

TEST(DecodeStep, DecoderReusesItUntilAWeightChanges) {
  auto m = make_model({4, 2, 128, true, false});
  auto a = m->fused_step(), b = m->fused_step();
  if (!a) GTEST_SKIP() << no_fused();
  EXPECT_EQ(a, b) << "packed once";
  {
    torch::NoGradGuard no_grad;
    m->named_parameters()["model.layers.1.mlp.down_proj.weight"].mul_(1.5);  // as an optimizer step
  }
  auto c = m->fused_step();
  EXPECT_NE(c, a) << "repacked after the update";
  c10::InferenceMode guard;
  auto ids = torch::randint(0, 300, {1, 9}, torch::kLong);
  auto x = m->make_cache(1, 16), y = m->make_cache(1, 16);
  EXPECT_LT(max_diff(c->prefill(ids.view({9}), y), m->forward_cached_last(ids, x)), 1e-4);
}

TEST(DecodeStep, OutOfRangeTokenThrows) {
  auto m = make_model({4, 2, 128, true, false});
  c10::InferenceMode guard;
  auto step = decode_step::make(*m);
  if (!step) GTEST_SKIP() << no_fused();
  auto cache = m->make_cache(1, 4);
  m->forward_cached(torch::tensor({{1, 2}}, torch::kLong), cache);
  EXPECT_THROW((*step)(torch::tensor({300}, torch::kLong), cache), c10::Error);
}

TEST(DecodeStep, MultinomialOneDrawsAsTorch) {
  torch::manual_seed(9);
  for (std::uint64_t seed : {1, 2, 3}) {
    auto mine = at::detail::createCPUGenerator(seed), theirs = at::detail::createCPUGenerator(seed);
    for (double temperature : {0.05, 0.5, 1.0, 4.0}) {
      for (std::int64_t rows : {1, 8}) {
        auto logits = torch::randn({rows, 2048}) * 3;                       // [R, V]
        auto probs = torch::softmax(logits / temperature, -1);
        for (int rep = 0; rep < 20; ++rep) {
          auto a = multinomial_one(probs, mine);
          auto b = torch::multinomial(probs, 1, false, theirs);
          ASSERT_TRUE(torch::equal(a, b)) << "seed " << seed << " temperature " << temperature;
        }
        // Zeros (top-p truncation) and a single surviving entry.
        auto cut = probs.masked_fill(probs < probs.mean(-1, true), 0.0);
        auto one = torch::zeros({rows, 2048});
        one.select(1, 17).fill_(1.0);
        for (const auto& p : {cut, one}) {
          auto a = multinomial_one(p, mine);
          auto b = torch::multinomial(p, 1, false, theirs);
          ASSERT_TRUE(torch::equal(a, b));
        }
      }
    }
    EXPECT_EQ(at::check_generator<at::CPUGeneratorImpl>(mine)->random64(),
              at::check_generator<at::CPUGeneratorImpl>(theirs)->random64())
        << "both consumed the same number of draws";
  }
  auto gen = at::detail::createCPUGenerator(0);
  EXPECT_THROW(multinomial_one(torch::zeros({2, 5}), gen), c10::Error);
  EXPECT_THROW(multinomial_one(torch::full({1, 5}, -1.0), gen), c10::Error);
}

TEST(DecodeStep, PackedGemmEqualsMatmul) {
  torch::manual_seed(2);
  for (decode_path path : all_paths) {
    if (!cpu_supports(path)) continue;
    for (std::int64_t n : {1, 31, 32, 33, 100}) {
      for (std::int64_t m : {1, 2, 3, 4, 7, 8, 9, 20}) {
        auto w = torch::randn({n, 45});   // [N, K]
        auto x = torch::randn({m, 45});   // [M, K]
        auto y = torch::randn({m, n});    // [M, N]
        auto want = y + x.matmul(w.t());
        auto packed = pack_weight(w);
        packed_gemm(x.data_ptr<float>(), m, 45, packed, y.data_ptr<float>(), n, true, path);
        EXPECT_LT(max_diff(y, want), 1e-4) << to_string(path) << " " << n << " x " << m;
        packed_gemm(x.data_ptr<float>(), m, 45, packed, y.data_ptr<float>(), n, false, path);
        EXPECT_LT(max_diff(y, x.matmul(w.t())), 1e-4) << to_string(path) << " " << n << " x " << m;
      }
    }
  }
}

// The step's own softmax and SwiGLU loops (their vector exp) against torch::softmax and
// torch::silu on every path the CPU has: row lengths around the vector widths, masked entries
// (lowest(), which must give 0), a row masked but for one entry, and inputs far into exp's
// underflow and overflow (|x| up to 120).
TEST(DecodeStep, SoftmaxAndSwigluEqualTorch) {
  torch::manual_seed(5);
  const float lowest = std::numeric_limits<float>::lowest();
  for (decode_path path : all_paths) {
    if (!cpu_supports(path)) continue;
    for (std::int64_t n : {1, 7, 8, 9, 15, 16, 17, 300, 1001}) {
      auto x = torch::randn({6, n}) * 30;                                                   // [6, n]
      x[1].fill_(lowest);
      x[1][n - 1] = 3.0f;
      if (n > 2) x[2].narrow(0, 0, n / 2).fill_(lowest);
      x[3] = torch::linspace(-120, 120, n);
      x[4][n / 2] = std::numeric_limits<float>::quiet_NaN();  // poisons its row, as in torch
      auto want = torch::softmax(x, -1);
      auto got = decode_softmax(x, path);
      EXPECT_TRUE(got[4].isnan().all().item<bool>()) << to_string(path) << " n " << n;
      got[4].zero_();
      want[4].zero_();
      EXPECT_LT(max_diff(got, want), 1e-6) << to_string(path) << " n " << n;
      if (n > 2) {
        EXPECT_EQ(got[2].narrow(0, 0, n / 2).abs().max().item<float>(), 0.0f) << to_string(path) << " n " << n;
      }
      auto gu = torch::cat({torch::linspace(-120, 120, 6 * n).view({6, n}), torch::randn({6, n}) * 4}, 1);  // [6, 2n]
      auto act = torch::silu(gu.narrow(1, 0, n)) * gu.narrow(1, n, n);                     // [6, n]
      auto got_act = decode_swiglu(gu, path);
      EXPECT_LT(((got_act - act).abs() / (act.abs() + 1e-30)).max().item<float>(), 1e-5) << to_string(path) << " n " << n;
    }
  }
}

// Each path the CPU has, chosen in process (set_decode_path), against forward_cached over a shared
// prefix, for head sizes with vector attention loops (Dh 32, 16, 64, 128) and without (24).
TEST(DecodeStep, EveryPathEqualsForwardCached) {
  path_reset reset;
  for (decode_path path : all_paths) {
    if (!cpu_supports(path)) continue;
    ASSERT_TRUE(set_decode_path(path).ok());
    for (const shape& s : {shape{4, 2, 128, true, false}, shape{4, 4, 64, false, false}, shape{4, 1, 96, true, true},
                           shape{2, 2, 128, false, true}, shape{2, 1, 256, true, false}}) {
      auto m = make_model(s);
      c10::InferenceMode guard;
      auto step = decode_step::make(*m);
      ASSERT_TRUE(step) << to_string(path);
      EXPECT_EQ(step->path(), path);
      const std::int64_t rows = 8, P = 40;
      auto ids = torch::randint(0, 300, {1, P}, torch::kLong);
      auto expanded = m->make_cache(1, P + 4), prefix = m->make_cache(1, P);
      m->forward_cached(ids, expanded, torch::Tensor());
      step->prefill(ids.view({P}), prefix);
      expanded.select_rows(torch::zeros({rows}, torch::kLong));
      auto own = m->make_cache(rows, 4);
      own.next_pos = prefix.next_pos.expand({rows}).clone();
      for (int t = 0; t < 3; ++t) {
        auto next = torch::randint(0, 300, {rows}, torch::kLong);
        auto want = m->forward_cached(next.view({rows, 1}), expanded).select(1, 0);  // [rows, V]
        EXPECT_LT(max_diff((*step)(next, own, &prefix), want), 1e-4)
            << to_string(path) << " heads " << s.heads << "/" << s.kv_heads << " d " << s.d_model << " step " << t;
      }
    }
  }
}

// The path a ctest variant forces is the one its steps run (and the decoder's cached step
// follows set_decode_path); an unknown name is not a path.
TEST(DecodeStep, RunsTheSelectedPath) {
  EXPECT_FALSE(parse_decode_path("avx3").has_value());
  EXPECT_EQ(parse_decode_path("avx2"), decode_path::avx2);
  const auto path = selected_decode_path();
  if (!path.ok()) GTEST_SKIP() << path.message();
  if (const char* forced = std::getenv("LEAP_DECODE_PATH")) {
    EXPECT_EQ(to_string(*path), std::string(forced));
  }
  EXPECT_TRUE(cpu_supports(*path));
  auto m = make_model({4, 2, 128, true, false});
  auto step = m->fused_step();
  if (*path == decode_path::libtorch) {
    EXPECT_FALSE(step);
    return;
  }
  ASSERT_TRUE(step);
  EXPECT_EQ(step->path(), *path);
  path_reset reset;
  ASSERT_TRUE(set_decode_path(decode_path::portable).ok());
  auto portable = m->fused_step();
  ASSERT_TRUE(portable);
  EXPECT_EQ(portable->path(), decode_path::portable);
  ASSERT_TRUE(set_decode_path(decode_path::libtorch).ok());
  EXPECT_FALSE(m->fused_step());
  for (decode_path p : all_paths) {
    if (!cpu_supports(p)) {
      EXPECT_FALSE(set_decode_path(p).ok()) << to_string(p) << " refused on this CPU";
    }
  }
}
