// Kernel launch of the emulation: checks the configuration like CUDA, then runs the grid's
// blocks on LEAP_EMU_THREADS OS workers (the launching thread is one of them) and returns when
// all are done. A block runs either as a plain loop over its threads (the TU never syncs) or as
// fibers (run_block_fibers). Called from host code; one launch at a time per process.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "leap_emu/api.h"
#include "leap_emu/rt_internal.h"
#include "leap_emu/runtime_api.h"

namespace leap_emu::detail {

__thread uint3 tl_thread_idx;
__thread uint3 tl_block_idx;
__thread dim3 tl_block_dim;
__thread dim3 tl_grid_dim;
__thread exec_mode tl_mode = exec_mode::host;
__thread const launch_desc* tl_desc = nullptr;

namespace {

constexpr std::size_t k_dyn_smem_capacity = 256 * 1024;
std::atomic<long> g_launch_count{0};

struct aligned_free {
  void operator()(void* p) const { std::free(p); }
};
thread_local std::unique_ptr<unsigned char, aligned_free> tl_dyn_smem_owner;

// State of the launch in progress, shared by the workers.
struct grid_run {
  const launch_desc* desc = nullptr;
  std::uint64_t total_blocks = 0;
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<bool> aborted{false};
};

void run_blocks(grid_run& g) {
  const launch_desc& d = *g.desc;
  dynamic_smem();  // make sure this worker's buffer exists before kernel code asks for it
  install_fault_handler(nullptr, nullptr, 0, 0);
  tl_desc = &d;
  tl_block_dim = d.cfg.block;
  tl_grid_dim = d.cfg.grid;
  const std::uint64_t gx = d.cfg.grid.x, gxy = gx * d.cfg.grid.y;
  const bool fibers = d.wants_fibers;
  tl_mode = fibers ? exec_mode::fibers : exec_mode::loop;
  while (!g.aborted.load(std::memory_order_relaxed)) {
    std::uint64_t b = g.next_block.fetch_add(1, std::memory_order_relaxed);
    if (b >= g.total_blocks) break;
    tl_block_idx = uint3{static_cast<unsigned>(b % gx), static_cast<unsigned>((b % gxy) / gx),
                         static_cast<unsigned>(b / gxy)};
    if (fibers) {
      if (!run_block_fibers(d)) g.aborted.store(true);
    } else {
      try {
        d.run_block_loop(d.closure);
      } catch (const launch_abort&) {
        g.aborted.store(true);
      }
    }
  }
  tl_mode = exec_mode::host;
  tl_desc = nullptr;
}

class worker_pool {
 public:
  explicit worker_pool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int helpers() const { return static_cast<int>(threads_.size()); }

  // Runs g on the helpers and the calling thread; returns when every worker is done.
  void run(grid_run& g, int helpers_wanted) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_ = &g;
      wanted_ = helpers_wanted;
      busy_ = helpers_wanted;
      ++generation_;
    }
    wake_.notify_all();
    run_blocks(g);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    current_ = nullptr;
  }

 private:
  void loop() {
    std::uint64_t seen = 0;
    int index = -1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      index = next_index_++;
    }
    for (;;) {
      grid_run* g = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && index < wanted_); });
        if (stop_) return;
        seen = generation_;
        g = current_;
      }
      run_blocks(*g);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0) done_.notify_all();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  grid_run* current_ = nullptr;
  std::uint64_t generation_ = 0;
  int wanted_ = 0, busy_ = 0, next_index_ = 0;
  bool stop_ = false;
};

worker_pool& pool() {
  static worker_pool p(env_int("LEAP_EMU_THREADS", 2, 1, 256) - 1);
  return p;
}

// Returns an empty string when the configuration is valid, else the reason.
std::string check_config(const launch_config& c, cudaError_t& code) {
  const dim3 b = c.block, g = c.grid;
  code = cudaErrorInvalidConfiguration;
  if (b.x == 0 || b.y == 0 || b.z == 0) return "block " + dim_string(b) + " has a zero dimension";
  if (g.x == 0 || g.y == 0 || g.z == 0) return "grid " + dim_string(g) + " has a zero dimension";
  const std::uint64_t threads = std::uint64_t(b.x) * b.y * b.z;
  if (b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024)
    return "block " + dim_string(b) + " has " + std::to_string(threads) +
           " threads (max 1024 per block; 1024 x 1024 x 64 per dimension)";
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return "grid " + dim_string(g) + " exceeds the maximum (2147483647, 65535, 65535)";
  if (c.dynamic_smem > max_dynamic_smem()) {
    code = cudaErrorInvalidValue;
    return "dynamic shared memory of " + std::to_string(c.dynamic_smem) + " bytes exceeds the limit of " +
           std::to_string(max_dynamic_smem()) +
           " bytes (raise it with cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...); max 232448)";
  }
  return {};
}

}  // namespace

void* dynamic_smem() {
  if (!tl_dyn_smem_owner) {
    void* p = std::aligned_alloc(256, k_dyn_smem_capacity);
    if (!p) std::abort();
    std::memset(p, 0, k_dyn_smem_capacity);
    tl_dyn_smem_owner.reset(static_cast<unsigned char*>(p));
  }
  return tl_dyn_smem_owner.get();
}

void launch(const launch_desc& d) {
  g_launch_count.fetch_add(1);
  if (sticky_error() != cudaSuccess) return;
  if (tl_mode != exec_mode::host) {
    record_fatal(cudaErrorNotSupported,
                 std::string("emulation: launch of kernel ") + d.kernel_name +
                     ": kernel launch from device code (dynamic parallelism) is not supported",
                 true);
    throw launch_abort{};
  }
  cudaError_t code = cudaSuccess;
  std::string why = check_config(d.cfg, code);
  if (!why.empty()) {
    record_fatal(code, std::string("emulation: launch of kernel ") + d.kernel_name + ": " +
                           cudaGetErrorString(code) + ": " + why, false);
    return;
  }
  grid_run g;
  g.desc = &d;
  g.total_blocks = std::uint64_t(d.cfg.grid.x) * d.cfg.grid.y * d.cfg.grid.z;
  worker_pool& p = pool();
  std::uint64_t helpers = g.total_blocks - 1;
  if (helpers > static_cast<std::uint64_t>(p.helpers())) helpers = p.helpers();
  if (helpers == 0)
    run_blocks(g);
  else
    p.run(g, static_cast<int>(helpers));
}

}  // namespace leap_emu::detail

extern "C" long leap_emu_launch_count(void) { return leap_emu::detail::g_launch_count.load(); }
