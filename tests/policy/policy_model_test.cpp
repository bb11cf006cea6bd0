// The torch-free policy facade: SFT lowers the loss on completion tokens only, checkpoints round
// trip through save/load, and group sampling returns G samples with one log-prob per token.
#include "common/fs.hpp"
#include "policy/generation_engine.hpp"
#include "policy/policy_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <filesystem>
#include <fstream>

using namespace leap;
using namespace leap::policy;

namespace {
model_config tiny() {
  model_config c;
  c.vocab_size = 40;
  c.d_model = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 64;
  c.max_seq_len = 64;
  c.bos_id = 1;
  c.eos_id = 2;
  c.pad_id = 0;
  return c;
}
} // namespace

TEST(PolicyModel, OneSftScheduleSpansTwoCalls) {
  // lr 1e-2, 2 warm-up steps, then cosine to 0.1 * lr over a 6-step schedule:
  // lr(s) = 1e-2 * (s + 1) / 2 for s < 2, else 1e-2 * (0.1 + 0.9 * 0.5 * (1 + cos(pi * s / 6))).
  const std::vector<double> expected{5e-3, 1e-2, 7.75e-3, 5.5e-3, 3.25e-3, 1.6029e-3};
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 7);
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<sft_example> ex{{{1, 5, 6, 7}, {10, 11, 12, 13, 2}, 1.0}};
  sft_options o;
  o.lr = 1e-2;
  o.warmup_steps = 2;
  o.min_lr_ratio = 0.1;
  o.batch_sequences = 1;
  o.max_steps = 4;        // steps 0..3 of the schedule
  o.schedule_steps = 6;
  std::vector<double> lrs;
  std::vector<int> steps;
  auto record = [&](const sft_progress& p) {
    lrs.push_back(p.lr);
    steps.push_back(p.step);
  };
  auto a = m->sft(ex, o, record);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->steps, 4);
  o.first_step = 4;       // steps 4..5, the same AdamW
  o.max_steps = 2;
  auto b = m->sft(ex, o, record);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->steps, 2);
  EXPECT_EQ(steps, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(lrs.size(), expected.size());
  for (std::size_t i = 0; i < lrs.size(); ++i)
    EXPECT_NEAR(lrs[i], expected[i], 1e-7) << "step " << i;
}

TEST(PolicyModel, SftLearnsCompletionsAndCheckpointsRoundTrip) {
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 7);
  ASSERT_TRUE(m.ok()) << m.message();
  // Two prompts, each with its own fixed completion ending in eos.
  std::vector<sft_example> ex{{{1, 5, 6, 7}, {10, 11, 12, 13, 2}, 1.0},
                              {{1, 8, 9}, {20, 21, 22, 2}, 1.0},
                              {std::vector<int>(70, 3), {4, 2}, 1.0}}; // too long: skipped
  sft_options o;
  o.max_steps = 150;
  o.minutes = 5;
  o.batch_sequences = 4;
  o.lr = 1e-2;
  o.warmup_steps = 5;
  int calls = 0;
  auto r = m->sft(ex, o, [&](const sft_progress& p) {
    ++calls;
    EXPECT_EQ(p.step, calls);
  });
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->steps, 150);
  EXPECT_EQ(calls, 150);
  EXPECT_EQ(r->skipped_examples, 1);
  EXPECT_LT(r->final_loss, 0.1 * r->first_loss) << r->first_loss << " -> " << r->final_loss;
  // Greedy decoding now reproduces the trained completion.
  group_sampling g;
  g.group_size = 3;
  g.temperature = 0;
  g.max_new_tokens = 8;
  auto s = m->sample({1, 5, 6, 7}, g);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].tokens, (std::vector<int>{10, 11, 12, 13, 2}));
  EXPECT_EQ((*s)[0].finish, "eos");
  for (auto& x : *s)
    EXPECT_EQ(x.logprobs.size(), x.tokens.size());
  // Save and load: the loaded policy decodes the same.
  auto dir = *make_temp_dir(temp_root(), "leap-policy-") + "/ck";
  ASSERT_TRUE(m->save(dir, "", r->steps).ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/optimizer.safetensors")) << "a warm start has no moments";
  auto back = policy_model::load(dir);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->parameter_count(), m->parameter_count());
  auto s2 = back->sample({1, 5, 6, 7}, g);
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ((*s2)[0].tokens, (*s)[0].tokens);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(PolicyModel, BatchOfDifferentPromptsEqualsOneByOne) {
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 3);
  ASSERT_TRUE(m.ok());
  group_sampling g;
  g.temperature = 0; // greedy: deterministic, comparable across batch shapes
  g.max_new_tokens = 10;
  std::vector<std::vector<int>> prompts{{1, 5, 6, 7, 8, 9}, {1, 3}, {1, 9, 9, 4}};
  auto together = m->sample_each(prompts, g);
  ASSERT_TRUE(together.ok()) << together.message();
  ASSERT_EQ(together->size(), 3u);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    g.group_size = 1;
    auto alone = m->sample(prompts[i], g);
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ((*together)[i].tokens, (*alone)[0].tokens) << "prompt " << i;
    ASSERT_EQ((*together)[i].logprobs.size(), (*alone)[0].logprobs.size());
    for (std::size_t k = 0; k < (*alone)[0].logprobs.size(); ++k)
      EXPECT_NEAR((*together)[i].logprobs[k], (*alone)[0].logprobs[k], 1e-4);
  }
}

// Regression: a batch used to be one weighted draw plus its length neighbours, so with
// few examples every sequence was in every batch whatever its weight (sft.repair_weight and
// sft.alt_solution_weight had almost no effect). Now every member of a batch is a weighted draw.
TEST(PolicyModel, SftDrawsEveryBatchSequenceByWeight) {
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 3);
  ASSERT_TRUE(m.ok()) << m.message();
  // One prompt, two completions; the second is drawn about once in 50.
  std::vector<sft_example> ex{{{1, 5, 6}, {10, 11, 2}, 1.0}, {{1, 5, 6}, {20, 21, 2}, 0.02}};
  sft_options o;
  o.max_steps = 80;
  o.minutes = 5;
  o.batch_sequences = 4;
  o.lr = 1e-2;
  o.warmup_steps = 5;
  auto r = m->sft(ex, o, {});
  ASSERT_TRUE(r.ok()) << r.message();
  group_sampling g;
  g.group_size = 64;
  g.temperature = 1.0;
  g.max_new_tokens = 1;
  g.seed = 11;
  auto s = m->sample({1, 5, 6}, g);
  ASSERT_TRUE(s.ok()) << s.message();
  int first = 0;
  for (auto& x : *s)
    first += !x.tokens.empty() && x.tokens[0] == 10;
  EXPECT_GT(first, 48) << "the heavy completion should dominate (about 63 of 64), not split 50/50";
}

TEST(PolicyModel, ErrorsAreValues) {
  auto bad = tiny();
  bad.n_heads = 3; // does not divide d_model
  EXPECT_FALSE(policy_model::create(bad, 1).ok());
  EXPECT_FALSE(policy_model::load("/nonexistent/checkpoint").ok());
  auto m = policy_model::create(tiny(), 1);
  ASSERT_TRUE(m.ok());
  auto r = m->sft({{{1, 2}, {}, 1.0}}, sft_options{}, {});
  EXPECT_FALSE(r.ok());
}

namespace {
// Samples of `m` (temperature 1) for three prompts of different lengths, as learner sequences
// carrying their own behaviour log-probs and the given advantages.
std::vector<rl_sequence> on_policy_batch(policy_model& m, const std::vector<double>& adv) {
  std::vector<std::vector<int>> prompts{{1, 5, 6, 7, 8, 9, 10, 11}, {1, 3}, {1, 9, 9, 4, 4}};
  std::vector<rl_sequence> out;
  for (std::size_t i = 0; i < adv.size(); ++i) {
    group_sampling g;
    g.group_size = 1;
    g.max_new_tokens = 6 + static_cast<int>(i) * 3;
    g.seed = 11 + i;
    auto s = m.sample(prompts[i % prompts.size()], g);
    EXPECT_TRUE(s.ok()) << s.message();
    out.push_back({prompts[i % prompts.size()], (*s)[0].tokens, (*s)[0].logprobs, adv[i]});
  }
  return out;
}
} // namespace

// On-policy (behaviour log-probs from sampling), every ratio is 1: nothing is clipped and the
// token-mean loss is -sum(adv_i * n_i) / sum(n_i). This also checks that the learner's
// log-probs (completion positions only projected) equal the sampler's.
TEST(PolicyModel, GrpoStepOnPolicyLossIsMinusTokenMeanAdvantage) {
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 5);
  ASSERT_TRUE(m.ok());
  auto batch = on_policy_batch(*m, {1.0, -0.5, 0.25, 2.0});
  double num = 0, den = 0;
  for (auto& s : batch) {
    num += s.advantage * static_cast<double>(s.completion.size());
    den += static_cast<double>(s.completion.size());
  }
  rl_options o;
  o.lr = 1e-3;
  o.micro_batch = 3;
  auto r = m->grpo_step(batch, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NEAR(r->ratio_mean, 1.0, 1e-4);
  EXPECT_EQ(r->clip_fraction, 0.0);
  EXPECT_NEAR(r->loss, -num / den, 1e-4);
  EXPECT_EQ(r->tokens, static_cast<long long>(den));
  EXPECT_EQ(r->sequences, 4);
  EXPECT_GT(r->grad_norm, 0.0);
}

// The learner sorts sequences by length into micro batches; the step must not depend on the order
// it got them in or on the micro-batch size: two equal models, one fed the batch reversed in
// micro batches of 1, end with the same weights (probed by a second identical step's loss).
TEST(PolicyModel, GrpoStepIgnoresOrderAndMicroBatchSize) {
  set_torch_threads(1);
  auto a = policy_model::create(tiny(), 9);
  auto b = policy_model::create(tiny(), 9);
  ASSERT_TRUE(a.ok() && b.ok());
  auto batch = on_policy_batch(*a, {0.7, -1.2, 0.4, -0.3, 1.5});
  auto reversed = batch;
  std::reverse(reversed.begin(), reversed.end());
  rl_options o;
  o.lr = 5e-2; // large enough that the weights visibly move
  o.micro_batch = 8;
  auto ra = a->grpo_step(batch, o);
  o.micro_batch = 1;
  auto rb = b->grpo_step(reversed, o);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_NEAR(ra->loss, rb->loss, 1e-5);
  EXPECT_NEAR(ra->grad_norm, rb->grad_norm, 1e-4);
  auto pa = a->grpo_step(batch, o), pb = b->grpo_step(batch, o);
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_NEAR(pa->loss, pb->loss, 1e-4);
  EXPECT_GT(std::abs(pa->ratio_mean - 1.0), 1e-3) << "the first step should have moved the policy";
}

// Mini batches and epochs are successive optimizer steps: a step with mini_batches = 2 and
// epochs = 2 ends with the same weights as four one-mini-batch steps on the round-robin halves
// (even, odd, even, odd), probed by a further identical step's loss. Its later updates are off
// the behaviour policy, so their ratios move away from 1.
TEST(PolicyModel, GrpoMiniBatchesAndEpochsAreSuccessiveOptimizerSteps) {
  set_torch_threads(1);
  auto a = policy_model::create(tiny(), 13);
  auto b = policy_model::create(tiny(), 13);
  ASSERT_TRUE(a.ok() && b.ok());
  auto batch = on_policy_batch(*a, {0.9, -1.1, 0.5, -0.6, 1.3});
  std::vector<rl_sequence> even, odd;
  for (std::size_t i = 0; i < batch.size(); ++i)
    (i % 2 == 0 ? even : odd).push_back(batch[i]);
  rl_options o;
  o.lr = 5e-2;
  o.mini_batches = 2;
  o.epochs = 2;
  auto ra = a->grpo_step(batch, o);
  ASSERT_TRUE(ra.ok()) << ra.message();
  EXPECT_EQ(ra->sequences, 5);
  EXPECT_GT(std::abs(ra->ratio_mean - 1.0), 1e-4) << "later updates should be off-policy";
  rl_options one = o;
  one.mini_batches = 1;
  one.epochs = 1;
  for (const auto* part : {&even, &odd, &even, &odd})
    ASSERT_TRUE(b->grpo_step(*part, one).ok());
  auto pa = a->grpo_step(batch, one), pb = b->grpo_step(batch, one);
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_NEAR(pa->loss, pb->loss, 1e-5);
  EXPECT_NEAR(pa->ratio_mean, pb->ratio_mean, 1e-5);
  // More mini batches than sequences: one step per sequence, no empty steps.
  auto c = policy_model::create(tiny(), 13);
  ASSERT_TRUE(c.ok());
  rl_options many = one;
  many.mini_batches = 50;
  auto rc = c->grpo_step(batch, many);
  ASSERT_TRUE(rc.ok()) << rc.message();
  EXPECT_EQ(rc->sequences, 5);
}

// The learner moves the policy the way the advantages point: a bandit over the first completion
// token (reward 1 when it is below 20 of the 40 ids, 0 otherwise), sampled on-policy, with
// group-mean-centred advantages as GRPO gives them. From a random model (about half the mass
// below 20), 25 steps of 16 samples must put most of the mass there; the opposite reward must
// take it away. Fixed seeds: the outcome is deterministic.
TEST(PolicyModel, GrpoStepsRaiseTheRewardedTokensMass) {
  set_torch_threads(1);
  const std::vector<int> prompt{1, 5, 6};
  auto low_share = [&](policy_model& m, std::uint64_t seed) {
    group_sampling g;
    g.group_size = 200;
    g.max_new_tokens = 1;
    g.seed = seed;
    auto s = m.sample(prompt, g);
    EXPECT_TRUE(s.ok()) << s.message();
    double low = 0;
    for (auto& x : *s)
      low += x.tokens[0] < 20 ? 1 : 0;
    return low / static_cast<double>(s->size());
  };
  for (bool reward_low : {true, false}) {
    auto m = policy_model::create(tiny(), 21);
    ASSERT_TRUE(m.ok());
    const double before = low_share(*m, 1000);
    rl_options o;
    o.lr = 1e-2;
    for (int step = 0; step < 25; ++step) {
      group_sampling g;
      g.group_size = 16;
      g.max_new_tokens = 3;
      g.seed = 31 + static_cast<std::uint64_t>(step);
      auto s = m->sample(prompt, g);
      ASSERT_TRUE(s.ok()) << s.message();
      std::vector<double> r;
      for (auto& x : *s)
        r.push_back((x.tokens[0] < 20) == reward_low ? 1.0 : 0.0);
      double mean = 0;
      for (double x : r)
        mean += x / static_cast<double>(r.size());
      std::vector<rl_sequence> batch;
      for (std::size_t i = 0; i < s->size(); ++i)
        batch.push_back({prompt, (*s)[i].tokens, (*s)[i].logprobs, r[i] - mean});
      ASSERT_TRUE(m->grpo_step(batch, o).ok());
    }
    const double after = low_share(*m, 1000);
    EXPECT_GT(before, 0.25);
    EXPECT_LT(before, 0.75);
    if (reward_low)
      EXPECT_GT(after, 0.9) << "before " << before;
    else
      EXPECT_LT(after, 0.1) << "before " << before;
  }
}

// The generation engine batches single-sample jobs that queue up behind a running job, and
// every job still gets its own samples: greedy decoding makes the batched answers comparable with
// one-by-one sampling. The running job's `done` holds the worker until all are queued, so the
// batching is deterministic.
TEST(GenerationEngine, QueuedSingleSampleJobsAreDecodedTogetherAndSplitBack) {
  set_torch_threads(1);
  auto m = policy_model::create(tiny(), 21);
  ASSERT_TRUE(m.ok());
  auto dir = *make_temp_dir(temp_root(), "leap-engine-") + "/ck";
  ASSERT_TRUE(m->save(dir, "", 0).ok());
  auto engine = generation_engine::create(dir, 1, 0);
  ASSERT_TRUE(engine.ok()) << engine.message();
  std::mutex mtx;
  std::condition_variable cv;
  bool release = false;
  std::vector<result<generation_output>> outs(7, make_error("not run"));
  int finished = 0;
  auto record = [&](int i) {
    return [&, i](result<generation_output> r) {
      std::lock_guard<std::mutex> lk(mtx);
      outs[static_cast<std::size_t>(i)] = std::move(r);
      ++finished;
      cv.notify_all();
    };
  };
  generation_job group;
  group.prompts = {{1, 5, 6}};
  group.samples_per_prompt = 4;
  group.sampling.max_new_tokens = 5;
  (*engine)->submit(group, [&](result<generation_output> r) {
    std::unique_lock<std::mutex> lk(mtx);
    cv.wait(lk, [&] { return release; });
    outs[0] = std::move(r);
    ++finished;
    cv.notify_all();
  });
  const std::vector<std::vector<int>> prompts{{1, 5, 6, 7}, {1, 3}, {1, 9, 9, 4, 4, 8}, {1, 7}, {1, 2, 3}};
  group_sampling greedy;
  greedy.temperature = 0;
  greedy.max_new_tokens = 6;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    generation_job j;
    j.prompts = {prompts[i]};
    j.sampling = greedy;
    (*engine)->submit(j, record(static_cast<int>(i) + 1));
  }
  generation_job other; // another temperature: never in the same call
  other.prompts = {{1, 4}};
  other.sampling = greedy;
  other.sampling.temperature = 0.5;
  (*engine)->submit(other, record(6));
  {
    std::unique_lock<std::mutex> lk(mtx);
    release = true;
    cv.notify_all();
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(60), [&] { return finished == 7; }));
  }
  ASSERT_TRUE(outs[0].ok()) << outs[0].message();
  EXPECT_EQ(outs[0]->samples.size(), 4u);
  EXPECT_EQ(outs[0]->batched_jobs, 1);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    auto& o = outs[i + 1];
    ASSERT_TRUE(o.ok()) << o.message();
    EXPECT_EQ(o->batched_jobs, 5) << "job " << i;
    ASSERT_EQ(o->samples.size(), 1u);
    auto alone = m->sample(prompts[i], greedy);
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(o->samples[0].tokens, (*alone)[0].tokens) << "job " << i;
  }
  ASSERT_TRUE(outs[6].ok());
  EXPECT_EQ(outs[6]->batched_jobs, 1);
  EXPECT_EQ(outs[6]->samples.size(), 1u);
  engine->reset();
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}
