// Tests of group sampling: behaviour log-probs equal a recomputation, determinism by seed,
// tiny top-p is greedy, stop tokens / eos / stop strings end generation, parameter errors, the
// streaming callback, and that repeated calls hold no memory.
#include "policy/model/decoder.hpp"
#include "policy/model/sampler.hpp"

#include "common/allocator.hpp"

#include <gtest/gtest.h>

using namespace leap::policy;

namespace {

model_config tiny_config(std::int64_t eos = -1) {
  model_config c;
  c.vocab_size = 300;
  c.d_model = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 172;
  c.max_seq_len = 128;
  c.eos_id = eos;
  return c;
}

decoder tiny_model(std::int64_t eos = -1) {
  torch::manual_seed(3);
  auto m = make_decoder(tiny_config(eos));
  EXPECT_TRUE(m.ok()) << m.message();
  (*m)->init_weights(0.1);
  return *m;
}

// One character per token: enough to exercise stop strings.
std::string decode_chars(const std::vector<int>& ids) {
  std::string s;
  for (int t : ids) s.push_back(static_cast<char>('a' + t % 26));
  return s;
}

const std::vector<int> prompt = {5, 17, 42, 99, 123, 7, 250, 31};

} // namespace

TEST(Sampler, LogprobsEqualRecomputation) {
  auto m = tiny_model();
  for (auto [temperature, top_p] : {std::pair{1.0, 1.0}, {0.7, 0.9}}) {
    sampling_params p;
    p.group_size = 4;
    p.max_new_tokens = 24;
    p.temperature = temperature;
    p.top_p = top_p;
    p.seed = 11;
    auto out = sample_group(*m, prompt, p);
    ASSERT_TRUE(out.ok()) << out.message();
    ASSERT_EQ(out->size(), 4u);
    for (const auto& s : *out) {
      EXPECT_EQ(s.length, 24);
      EXPECT_EQ(s.finish, finish_reason::length);
      ASSERT_EQ(s.logprobs.size(), s.tokens.size());
      std::vector<int> all = prompt;
      all.insert(all.end(), s.tokens.begin(), s.tokens.end());
      auto re = token_logprobs(*m, all, temperature);
      ASSERT_TRUE(re.ok()) << re.message();
      for (std::size_t i = 0; i < s.tokens.size(); ++i) {
        EXPECT_NEAR(s.logprobs[i], (*re)[prompt.size() - 1 + i], 1e-4) << "T=" << temperature << " token " << i;
      }
    }
  }
}

TEST(Sampler, DeterministicBySeedAndGroupDiffers) {
  auto m = tiny_model();
  sampling_params p;
  p.group_size = 8;
  p.max_new_tokens = 16;
  p.seed = 5;
  auto a = sample_group(*m, prompt, p), b = sample_group(*m, prompt, p);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 8; ++i) EXPECT_EQ((*a)[i].tokens, (*b)[i].tokens);
  int distinct = 0;
  for (int i = 1; i < 8; ++i) distinct += (*a)[i].tokens != (*a)[0].tokens;
  EXPECT_GT(distinct, 0) << "samples of one group differ";
  p.seed = 6;
  auto c = sample_group(*m, prompt, p);
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*c)[0].tokens, (*a)[0].tokens);
}

TEST(Sampler, RowSeedsMakeEachRowIndependentOfItsBatch) {
  auto m = tiny_model();
  const std::vector<int> other = {9, 8, 7};  // shorter: padded, `prompt`'s row is not
  for (auto [temperature, top_p] : {std::pair{1.0, 1.0}, {0.8, 0.9}}) {
    sampling_params p;
    p.max_new_tokens = 20;
    p.temperature = temperature;
    p.top_p = top_p;
    p.row_seeds = {77};
    auto alone = sample_batch(*m, {prompt}, p);
    ASSERT_TRUE(alone.ok()) << alone.message();
    p.row_seeds = {5, 77, 6};
    auto shared = sample_batch(*m, {other, prompt, other}, p);
    ASSERT_TRUE(shared.ok()) << shared.message();
    EXPECT_EQ((*shared)[1].tokens, (*alone)[0].tokens);
    EXPECT_NE((*shared)[0].tokens, (*shared)[2].tokens);  // same prompt, other seeds
    // The same seed twice in one group: the same tokens.
    sampling_params g = p;
    g.group_size = 3;
    g.row_seeds = {77, 1, 77};
    auto group = sample_group(*m, prompt, g);
    ASSERT_TRUE(group.ok()) << group.message();
    EXPECT_EQ((*group)[0].tokens, (*group)[2].tokens);
    EXPECT_NE((*group)[0].tokens, (*group)[1].tokens);
    p.row_seeds = {1, 2};
    EXPECT_FALSE(sample_batch(*m, {prompt}, p).ok());  // one seed per row
  }
}

// Sampling keeps nothing once it returns: 300 calls with a seed per row (a generator each) leave
// the heap's live bytes where 20 calls left them. LibTorch 1.13 never frees a cloned generator,
// and the sampler cloned one per call and per row: 9 per call here, 13.6 MiB over these calls.
TEST(Sampler, RepeatedCallsHoldNoMemory) {
  auto m = tiny_model();
  sampling_params p;
  p.group_size = 8;
  p.max_new_tokens = 2;
  p.row_seeds = {1, 2, 3, 4, 5, 6, 7, 8};
  auto calls = [&](int n) {
    for (int i = 0; i < n; ++i) {
      p.seed = static_cast<std::uint64_t>(i);
      ASSERT_TRUE(sample_group(*m, prompt, p).ok());
      ASSERT_TRUE(sample_batch(*m, std::vector<std::vector<int>>(8, prompt), p).ok());
    }
  };
  calls(20); // warm-up: LibTorch's own first-use allocations
  auto before = leap::heap_figures_now();
  ASSERT_TRUE(before.ok()) << before.message();
  calls(300);
  auto after = leap::heap_figures_now();
  ASSERT_TRUE(after.ok()) << after.message();
  const double grew_mib = (static_cast<double>(after->in_use_bytes) - static_cast<double>(before->in_use_bytes)) / (1 << 20);
  EXPECT_LT(grew_mib, 1.0) << "the heap's live bytes grew by " << grew_mib << " MiB over 600 sampling calls";
}

// Streaming: on_token sees every token of every row, in order, with its log-prob, rows that
// finish early included (the eos token too), and the samples are the same as without it.
TEST(Sampler, OnTokenSeesEveryTokenOfEveryRowInOrder) {
  auto m = tiny_model(/*eos=*/3);
  sampling_params p;
  p.max_new_tokens = 24;
  p.row_seeds = {11, 12, 13};
  auto plain = sample_batch(*m, {prompt, {9, 8, 7}, prompt}, p);
  ASSERT_TRUE(plain.ok()) << plain.message();
  std::vector<std::vector<int>> tokens(3);
  std::vector<std::vector<float>> logprobs(3);
  p.on_token = [&](std::size_t row, int t, float lp, const std::vector<std::pair<int, float>>&) {
    ASSERT_LT(row, 3u);
    tokens[row].push_back(t);
    logprobs[row].push_back(lp);
  };
  auto streamed = sample_batch(*m, {prompt, {9, 8, 7}, prompt}, p);
  ASSERT_TRUE(streamed.ok()) << streamed.message();
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ((*streamed)[r].tokens, (*plain)[r].tokens) << r;
    EXPECT_EQ(tokens[r], (*streamed)[r].tokens) << r;
    EXPECT_EQ(logprobs[r], (*streamed)[r].logprobs) << r;
  }
}

// top_logprobs: the k most likely tokens of the distribution each token's log-prob is from,
// most likely first; under greedy decoding the first is the token itself.
TEST(Sampler, TopLogprobsAreTheMostLikelyTokens) {
  auto m = tiny_model();
  sampling_params p;
  p.max_new_tokens = 10;
  p.temperature = 0.0;
  p.top_logprobs = 4;
  auto g = sample_batch(*m, {prompt}, p);
  ASSERT_TRUE(g.ok()) << g.message();
  const auto& s = (*g)[0];
  ASSERT_EQ(s.top_logprobs.size(), s.tokens.size());
  for (std::size_t k = 0; k < s.tokens.size(); ++k) {
    const auto& top = s.top_logprobs[k];
    ASSERT_EQ(top.size(), 4u);
    EXPECT_EQ(top[0].first, s.tokens[k]);
    EXPECT_FLOAT_EQ(top[0].second, s.logprobs[k]);
    for (std::size_t j = 1; j < top.size(); ++j) EXPECT_GE(top[j - 1].second, top[j].second);
  }
  // Sampled at T = 0.7: the token's log-prob is at most the best, and equals its own entry.
  p.temperature = 0.7;
  p.seed = 5;
  auto t = sample_batch(*m, {prompt}, p);
  ASSERT_TRUE(t.ok()) << t.message();
  const auto& u = (*t)[0];
  for (std::size_t k = 0; k < u.tokens.size(); ++k) {
    EXPECT_LE(u.logprobs[k], u.top_logprobs[k][0].second + 1e-6f);
    for (auto& [id, lp] : u.top_logprobs[k]) {
      if (id == u.tokens[k]) {
        EXPECT_FLOAT_EQ(lp, u.logprobs[k]);
      }
    }
  }
  p.top_logprobs = 0;
  EXPECT_TRUE((*sample_batch(*m, {prompt}, p))[0].top_logprobs.empty());
}

TEST(Sampler, TinyTopPIsGreedy) {
  auto m = tiny_model();
  // Greedy reference by full forwards.
  std::vector<int> seq = prompt, greedy;
  {
    torch::NoGradGuard no_grad;
    for (int i = 0; i < 12; ++i) {
      auto ids = torch::tensor(std::vector<std::int64_t>(seq.begin(), seq.end())).unsqueeze(0);
      int next = static_cast<int>(m->forward(ids)[0][-1].argmax().item<std::int64_t>());
      greedy.push_back(next);
      seq.push_back(next);
    }
  }
  sampling_params p;
  p.group_size = 3;
  p.max_new_tokens = 12;
  p.top_p = 1e-6;
  p.seed = 99;
  auto out = sample_group(*m, prompt, p);
  ASSERT_TRUE(out.ok()) << out.message();
  for (const auto& s : *out) EXPECT_EQ(s.tokens, greedy);
  p.temperature = 0.0;  // explicit greedy
  auto g = sample_group(*m, prompt, p);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)[0].tokens, greedy);
}

TEST(Sampler, StopStringsCutGeneration) {
  auto m = tiny_model();
  sampling_params p;
  p.group_size = 2;
  p.max_new_tokens = 20;
  p.temperature = 0.0;
  p.decode = decode_chars;
  auto free = sample_group(*m, prompt, p);
  ASSERT_TRUE(free.ok());
  const auto& full = (*free)[0];
  EXPECT_EQ(full.text, decode_chars(full.tokens));
  const std::string stop = full.text.substr(6, 2);  // appears first at or before index 6
  const auto first = full.text.find(stop);
  p.stop_strings = {"this never appears", stop};
  auto cut = sample_group(*m, prompt, p);
  ASSERT_TRUE(cut.ok()) << cut.message();
  for (const auto& s : *cut) {
    EXPECT_EQ(s.finish, finish_reason::stop);
    EXPECT_EQ(s.length, static_cast<int>(first + stop.size()));
    EXPECT_EQ(s.text, full.text.substr(0, first + stop.size()));
    EXPECT_EQ(s.tokens, std::vector<int>(full.tokens.begin(), full.tokens.begin() + s.length));
    EXPECT_EQ(s.logprobs.size(), s.tokens.size());
  }
  p.decode = nullptr;
  EXPECT_FALSE(sample_group(*m, prompt, p).ok()) << "stop strings need decode";
}

TEST(Sampler, StopTokenAndEosFinish) {
  auto m = tiny_model();
  sampling_params p;
  p.group_size = 2;
  p.max_new_tokens = 10;
  p.temperature = 0.0;
  auto g = sample_group(*m, prompt, p);
  ASSERT_TRUE(g.ok());
  const int third = (*g)[0].tokens[2];
  p.stop_token_ids = {third};
  auto s = sample_group(*m, prompt, p);
  ASSERT_TRUE(s.ok());
  auto pos = std::find((*g)[0].tokens.begin(), (*g)[0].tokens.end(), third) - (*g)[0].tokens.begin();
  EXPECT_EQ((*s)[0].finish, finish_reason::stop);
  EXPECT_EQ((*s)[0].length, pos + 1) << "the stop token is kept";
  EXPECT_EQ((*s)[0].tokens.back(), third);

  // Same weights with eos_id set to that token.
  auto e = tiny_model(third);
  auto out = sample_group(*e, prompt, sampling_params{2, 0.0, 1.0, 10, {}, {}, nullptr, 0, {}, 0, nullptr});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[1].finish, finish_reason::eos);
  EXPECT_EQ((*out)[1].length, pos + 1);
  EXPECT_STREQ(finish_reason_name((*out)[1].finish), "eos");
}

TEST(Sampler, ParameterErrorsAndLengthLimit) {
  auto m = tiny_model();
  sampling_params p;
  EXPECT_FALSE(sample_group(*m, {}, p).ok());
  EXPECT_FALSE(sample_group(*m, {1, 300}, p).ok());
  p.top_p = 0.0;
  EXPECT_FALSE(sample_group(*m, prompt, p).ok());
  p.top_p = 1.0;
  p.group_size = 0;
  EXPECT_FALSE(sample_group(*m, prompt, p).ok());
  p.group_size = 2;
  EXPECT_FALSE(sample_group(*m, std::vector<int>(128, 1), p).ok()) << "prompt fills max_position_embeddings";
  // Generation stops at max_position_embeddings (128) with finish length.
  p.max_new_tokens = 500;
  auto out = sample_group(*m, std::vector<int>(120, 1), p);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].length, 8);
  EXPECT_EQ((*out)[0].finish, finish_reason::length);
  p.max_new_tokens = 0;
  auto none = sample_group(*m, prompt, p);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)[0].length, 0);
}
