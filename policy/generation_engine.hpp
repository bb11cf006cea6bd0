// The generators' compute: N worker threads, each holding its own policy replica, sampling jobs
// from a shared queue. A job is a batch of prompts x samples per prompt; its result carries the
// policy version that produced it. publish() hands a new version (a safetensors image) to every
// replica: each worker swaps it in between jobs, never during one. No CAF or LibTorch here: the
// generator pool actor (actors/generator_pool.cpp) drives it. A worker that takes a job of single
// samples also takes every compatible single-sample job queued behind it (same temperature,
// top_p, max_new_tokens, stop ids; up to max_batch_prompts prompts) and decodes them in one
// batch; each job still gets its own reply. Every sequence draws from its own generator, seeded
// with sequence_seed(job seed + prompt index, sample index) (policy/model/sampler.hpp), so a job's
// samples do not depend on what it is batched with. Thread-safe: submit, cancel and publish from any
// thread; `done` runs on a worker thread.
#pragma once

#include "common/passkey.hpp"
#include "common/result.hpp"
#include "policy/policy_model.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leap::policy {

struct generation_job {
  std::vector<std::vector<int>> prompts;
  int samples_per_prompt = 1;
  group_sampling sampling;     // group_size is taken from samples_per_prompt
};

struct generation_output {
  std::vector<sampled> samples; // samples[i * samples_per_prompt + j] is of prompts[i]
  std::int64_t policy_version = 0;
  double seconds = 0;           // of the sampling call (shared by jobs batched together)
  unsigned worker = 0;
  int batched_jobs = 1;         // jobs sampled in the same call as this one
};

// Single-sample jobs queued together are decoded in one call, up to this many prompts.
inline constexpr std::size_t max_batch_prompts = 16;

class generation_engine {
public:
  // Loads `workers` replicas from a checkpoint directory, at `version`.
  static result<std::unique_ptr<generation_engine>> create(const std::string& checkpoint_dir,
                                                           int workers, std::int64_t version);
  // Samples elsewhere (an OpenAI-compatible server): submit() hands each job to `remote` at
  // once, which must not block and calls its callback once, from any thread, with
  // prompts.size() x samples_per_prompt samples. `workers`: the jobs the generator pool keeps
  // in flight per batch slot (the remote side's concurrency). publish() is ignored (a remote
  // server's weights are its own); cancel() cannot stop a job already sent.
  using remote_done = std::function<void(result<std::vector<sampled>>)>;
  using remote_fn = std::function<void(const generation_job&, remote_done)>;
  static std::unique_ptr<generation_engine> create_remote(int workers, remote_fn remote);
  ~generation_engine(); // stops the workers after their current job; queued jobs get an error
  generation_engine(const generation_engine&) = delete;
  generation_engine& operator=(const generation_engine&) = delete;

  using done_fn = std::function<void(result<generation_output>)>;
  // Queues a job; returns its id for cancel().
  std::uint64_t submit(generation_job job, done_fn done);
  // A queued job is dropped (its done gets an error); a running one finishes normally.
  void cancel(std::uint64_t id);
  void publish(std::int64_t version, std::string safetensors_image);
  std::int64_t latest_version() const;
  int workers() const;

  struct impl;
  explicit generation_engine(passkey<generation_engine>); // create() / create_remote() only

private:
  std::unique_ptr<impl> impl_;
};

} // namespace leap::policy
