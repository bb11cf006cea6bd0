#include "policy/generation_engine.hpp"

#include "policy/model/sampler.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace leap::policy {

struct generation_engine::impl {
  struct queued {
    std::uint64_t id;
    generation_job job;
    done_fn done;
  };
  mutable std::mutex mtx;
  std::condition_variable cv;
  std::deque<queued> queue;
  bool stopping = false;
  std::uint64_t next_id = 1;
  std::int64_t version = 0;
  std::shared_ptr<const std::string> image; // latest published weights (null = initial)
  std::vector<std::thread> threads;
  remote_fn remote;      // set: sampling happens elsewhere (create_remote)
  int remote_workers = 0;

  void run(unsigned worker, policy_model model) {
    std::int64_t mine = 0;
    {
      std::lock_guard<std::mutex> lk(mtx);
      mine = version;
    }
    for (;;) {
      // One job, plus (when it is a batch of single samples) every compatible single-sample job
      // already queued, up to max_batch_prompts prompts: decoding several rows per forward costs
      // little more than one (bench_sampling), and later-turn prompts arrive one attempt at a
      // time as verdicts come in.
      std::vector<queued> batch;
      std::shared_ptr<const std::string> img;
      std::int64_t v = 0;
      {
        std::unique_lock<std::mutex> lk(mtx);
        cv.wait(lk, [&] { return stopping || !queue.empty(); });
        if (stopping)
          return;
        batch.push_back(std::move(queue.front()));
        queue.pop_front();
        std::size_t prompts = batch.front().job.prompts.size();
        if (batch.front().job.samples_per_prompt == 1)
          for (auto it = queue.begin(); it != queue.end() && prompts < max_batch_prompts;) {
            if (it->job.samples_per_prompt == 1 && compatible(it->job.sampling, batch.front().job.sampling)
                && prompts + it->job.prompts.size() <= max_batch_prompts) {
              prompts += it->job.prompts.size();
              batch.push_back(std::move(*it));
              it = queue.erase(it);
            } else {
              ++it;
            }
          }
        img = image;
        v = version;
      }
      if (v != mine && img) {
        auto r = model.import_weights(*img);
        if (!r) {
          for (auto& q : batch)
            q.done(make_error("generator " + std::to_string(worker) + ": " + r.message()));
          continue;
        }
        mine = v;
      }
      auto t0 = std::chrono::steady_clock::now();
      auto& first = batch.front().job;
      auto sp = first.sampling;
      sp.group_size = first.samples_per_prompt;
      result<void> status;
      std::vector<sampled> samples;
      if (first.samples_per_prompt == 1 && (batch.size() > 1 || first.prompts.size() > 1)) {
        std::vector<std::vector<int>> prompts;
        sp.row_seeds.clear();
        for (auto& q : batch) {
          prompts.insert(prompts.end(), q.job.prompts.begin(), q.job.prompts.end());
          for (std::size_t i = 0; i < q.job.prompts.size(); ++i)
            sp.row_seeds.push_back(sequence_seed(q.job.sampling.seed + i, 0));
        }
        auto r = model.sample_each(prompts, sp);
        if (r)
          samples = std::move(*r);
        else
          status = r.err();
      } else {
        for (std::size_t i = 0; i < first.prompts.size() && status.ok(); ++i) {
          sp.seed = first.sampling.seed + i;
          sp.row_seeds.clear();
          for (int j = 0; j < first.samples_per_prompt; ++j)
            sp.row_seeds.push_back(sequence_seed(sp.seed, static_cast<std::uint64_t>(j)));
          auto r = model.sample(first.prompts[i], sp);
          if (!r) {
            status = r.err();
            break;
          }
          for (auto& s : *r)
            samples.push_back(std::move(s));
        }
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::size_t at = 0;
      for (auto& q : batch) {
        if (!status) {
          q.done(make_error("generator " + std::to_string(worker) + ": " + status.message()));
          continue;
        }
        generation_output out;
        out.worker = worker;
        out.policy_version = mine;
        out.seconds = seconds;
        out.batched_jobs = static_cast<int>(batch.size());
        const auto n = q.job.prompts.size() * static_cast<std::size_t>(q.job.samples_per_prompt);
        for (std::size_t k = 0; k < n && at < samples.size(); ++k)
          out.samples.push_back(std::move(samples[at++]));
        q.done(std::move(out));
      }
    }
  }

  // Jobs whose prompts may share one sample_each call.
  static bool compatible(const group_sampling& a, const group_sampling& b) {
    return a.temperature == b.temperature && a.top_p == b.top_p && a.max_new_tokens == b.max_new_tokens
           && a.stop_ids == b.stop_ids;
  }
};

generation_engine::generation_engine(passkey<generation_engine>) {}

result<std::unique_ptr<generation_engine>> generation_engine::create(const std::string& dir,
                                                                     int workers,
                                                                     std::int64_t version) {
  auto e = std::make_unique<generation_engine>(passkey<generation_engine>());
  e->impl_ = std::make_unique<impl>();
  e->impl_->version = version;
  std::vector<policy_model> replicas;
  for (int i = 0; i < std::max(1, workers); ++i) {
    auto m = policy_model::load(dir);
    if (!m)
      return make_error("generator replica " + std::to_string(i) + ": " + m.message());
    replicas.push_back(std::move(*m));
  }
  for (unsigned i = 0; i < replicas.size(); ++i)
    e->impl_->threads.emplace_back([p = e->impl_.get(), i, m = std::move(replicas[i])]() mutable {
      p->run(i, std::move(m));
    });
  return e;
}

std::unique_ptr<generation_engine> generation_engine::create_remote(int workers, remote_fn remote) {
  auto e = std::make_unique<generation_engine>(passkey<generation_engine>());
  e->impl_ = std::make_unique<impl>();
  e->impl_->remote = std::move(remote);
  e->impl_->remote_workers = std::max(1, workers);
  return e;
}

generation_engine::~generation_engine() {
  std::deque<impl::queued> left;
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    impl_->stopping = true;
    left.swap(impl_->queue);
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->threads)
    t.join();
  for (auto& q : left)
    q.done(make_error("the generators stopped"));
}

std::uint64_t generation_engine::submit(generation_job job, done_fn done) {
  if (impl_->remote) {
    std::uint64_t rid;
    {
      std::lock_guard<std::mutex> lk(impl_->mtx);
      rid = impl_->next_id++;
    }
    auto t0 = std::chrono::steady_clock::now();
    impl_->remote(job, [done = std::move(done), t0](result<std::vector<sampled>> r) {
      if (!r)
        return done(r.err());
      generation_output out;
      out.samples = std::move(*r);
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      done(std::move(out));
    });
    return rid;
  }
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    id = impl_->next_id++;
    impl_->queue.push_back({id, std::move(job), std::move(done)});
  }
  impl_->cv.notify_one();
  return id;
}

void generation_engine::cancel(std::uint64_t id) {
  done_fn done;
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    for (auto it = impl_->queue.begin(); it != impl_->queue.end(); ++it)
      if (it->id == id) {
        done = std::move(it->done);
        impl_->queue.erase(it);
        break;
      }
  }
  if (done)
    done(make_error("cancelled before it started"));
}

void generation_engine::publish(std::int64_t version, std::string image) {
  auto img = std::make_shared<const std::string>(std::move(image));
  std::lock_guard<std::mutex> lk(impl_->mtx);
  if (version > impl_->version) {
    impl_->version = version;
    impl_->image = std::move(img);
  }
}

std::int64_t generation_engine::latest_version() const {
  std::lock_guard<std::mutex> lk(impl_->mtx);
  return impl_->version;
}

int generation_engine::workers() const {
  return impl_->remote ? impl_->remote_workers : static_cast<int>(impl_->threads.size());
}

} // namespace leap::policy
