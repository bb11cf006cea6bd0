// main() of every candidate and reference process (one harness, two builds: LEAP_HARNESS_CUDA
// links the CUDA runtime, otherwise the CUDA-on-CPU emulation). It runs inside the worker
// process leap spawns, never inside leap: reads job.txt from its working directory, generates
// the inputs deterministically, poisons outputs, guards every buffer with canaries, calls the
// task's entry point through the generated glue (leap_invoke), and writes the raw outputs and a
// line-based status file. It compares nothing: leap compares outputs in its own process.
// In "time" mode it then runs the timing loop (both builds; on the emulation with the host
// clock, whose times leap never turns into speedups): every call gets inputs never seen before
// and freshly poisoned outputs, and the outputs of the timed calls are written for leap to check,
// so replaying an earlier result or caching by input fingerprint gains nothing.
#include "env/harness/protocol.hpp"

#include <cuda_runtime.h>
#ifndef LEAP_HARNESS_CUDA
#include <leap_emu/api.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" void leap_invoke(void* const* ptrs, const long long* ints);

namespace {

bool called_before = false; // the first call may start the runtime's own threads

using namespace leap::harness;

struct job_arg {
  std::string name;
  bool is_ptr = false;
  bool is_int = false;
  std::string role; // in | out | inout | size
  int init = init_zeros;
  double a = 0, b = 0;
};

struct job {
  std::string mode = "run";
  unsigned long long seed = 1;
  int trials = 1;
  bool dump_inputs = false;
  int warmup = 3;
  int timing_runs = 10;
  long long l2_flush_mb = 0;
  bool repeat = false; // call twice on identical inputs in the first trial
  std::vector<job_arg> args;
  std::vector<std::vector<long long>> sizes; // per size set: element count (ptr) or value (int)
};

FILE* status_out = nullptr;

void status(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void status(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(status_out, fmt, ap);
  va_end(ap);
  std::fputc('\n', status_out);
  std::fflush(status_out);
}

// What the emulation noticed that is no error (written before "fail" and "done"):
// "note implicit_warp_sync" and "note undefined_behaviour <message>".
void emulation_notes() {
#ifndef LEAP_HARNESS_CUDA
  static bool written = false;
  if (written)
    return;
  written = true;
  if (leap_emu_implicit_warp_sync())
    status("note implicit_warp_sync");
  if (const char* u = leap_emu_undefined_behaviour()) {
    std::string flat = u;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    status("note undefined_behaviour %s", flat.c_str());
  }
#endif
}

[[noreturn]] void fail(int s, int t, const char* kind, const std::string& msg) {
  emulation_notes();
  std::string flat = msg;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  status("fail %d %d %s %s", s, t, kind, flat.c_str());
  std::fflush(nullptr);
  std::_Exit(3);
}

bool read_job(job& j) {
  std::ifstream in(job_file);
  std::string word;
  if (!(in >> word) || word != "leap-job")
    return false;
  int version = 0;
  in >> version;
  while (in >> word) {
    if (word == "mode") in >> j.mode;
    else if (word == "seed") in >> j.seed;
    else if (word == "trials") in >> j.trials;
    else if (word == "dump_inputs") { int d; in >> d; j.dump_inputs = d != 0; }
    else if (word == "warmup") in >> j.warmup;
    else if (word == "timing_runs") in >> j.timing_runs;
    else if (word == "l2_flush_mb") in >> j.l2_flush_mb;
    else if (word == "repeat") { int r; in >> r; j.repeat = r != 0; }
    else if (word == "arg") {
      job_arg a;
      std::string kind, dtype;
      in >> a.name >> kind >> dtype >> a.role >> a.init >> a.a >> a.b;
      a.is_ptr = kind == "ptr";
      a.is_int = dtype == "i32";
      j.args.push_back(a);
    } else if (word == "size") {
      std::vector<long long> v(j.args.size());
      for (auto& x : v) in >> x;
      j.sizes.push_back(v);
    } else {
      return false;
    }
    if (!in) return false;
  }
  return !j.args.empty() && !j.sizes.empty();
}

struct device_buffer {
  unsigned char* base = nullptr; // device allocation incl. canaries
  long long n = 0;
  unsigned char canary = canary_byte; // the byte around its data
  std::size_t bytes() const { return static_cast<std::size_t>(n) * 4; }
  void* data() const { return base + canary_front; }
};

std::string cuda_error_text(cudaError_t e) {
  std::string s = cudaGetErrorName(e);
  s += ": ";
  s += cudaGetErrorString(e);
#ifndef LEAP_HARNESS_CUDA
  if (const char* f = leap_emu_fatal_error())
    s = f;
#endif
  return s;
}

void check_after_call(int s, int t) {
#ifndef LEAP_HARNESS_CUDA
  if (const char* f = leap_emu_fatal_error())
    fail(s, t, "emu_fatal", f);
#endif
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaGetLastError();
  if (e != cudaSuccess)
    fail(s, t, "cuda_error", cuda_error_text(e));
}

// Threads of this process now (field 20 of /proc/self/stat), or -1 when it cannot be read.
int thread_count() {
  std::FILE* f = std::fopen("/proc/self/stat", "r");
  if (!f)
    return -1;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // Fields after the command name, which is in parentheses and may hold spaces.
  const char* p = std::strrchr(buf, ')');
  if (!p)
    return -1;
  int field = 2, threads = -1;
  for (const char* q = p + 1; *q && threads < 0; ++q)
    if (*q == ' ' && ++field == 20)
      threads = std::atoi(q + 1);
  return threads;
}

// Work that outlives solution(): a call must return with no more threads than it found (the
// emulation's and the CUDA runtime's own threads exist before every call but the first, which
// is not checked). Detached threads, std::async and the like are refused statically too.
void check_no_work_left(int before, int s, int t) {
  if (before < 0)
    return;
  const int after = thread_count();
  if (after > before)
    fail(s, t, "background_work",
         "solution() returned with " + std::to_string(after - before) + " more thread(s) running "
         "than when it was called: all work must be finished when it returns (no detached "
         "threads or asynchronous host work)");
}

// Allocates a buffer with canaries (the byte `canary`) and uploads `host` (n 32-bit values) into
// its data part.
device_buffer upload(const std::vector<std::uint32_t>& host, unsigned char canary, int s, int t,
                     const std::string& name) {
  device_buffer b;
  b.n = static_cast<long long>(host.size());
  b.canary = canary;
  std::vector<unsigned char> staging(canary_front + b.bytes() + canary_back, canary);
  std::memcpy(staging.data() + canary_front, host.data(), b.bytes());
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, staging.size());
  if (e != cudaSuccess)
    fail(s, t, "harness", "cudaMalloc of " + std::to_string(staging.size()) + " bytes for '" + name
                            + "' failed: " + cuda_error_text(e));
  b.base = static_cast<unsigned char*>(p);
  e = cudaMemcpy(b.base, staging.data(), staging.size(), cudaMemcpyHostToDevice);
  if (e != cudaSuccess)
    fail(s, t, "harness", "upload of '" + name + "' failed: " + cuda_error_text(e));
  return b;
}

// Downloads the whole buffer, checks both canaries, returns the data part.
std::vector<std::uint32_t> download(const device_buffer& b, int s, int t, const std::string& name) {
  std::vector<unsigned char> staging(canary_front + b.bytes() + canary_back);
  cudaError_t e = cudaMemcpy(staging.data(), b.base, staging.size(), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess)
    fail(s, t, "cuda_error", "reading back '" + name + "' failed: " + cuda_error_text(e));
  std::size_t bad_front = 0, bad_back = 0, last_back = 0;
  for (std::size_t i = 0; i < canary_front; ++i)
    bad_front += staging[i] != b.canary;
  for (std::size_t i = 0; i < canary_back; ++i)
    if (staging[canary_front + b.bytes() + i] != b.canary) {
      ++bad_back;
      last_back = i + 1;
    }
  if (bad_front > 0)
    fail(s, t, "canary", "out-of-bounds write: " + std::to_string(bad_front)
                           + " byte(s) changed in the 256 bytes before '" + name + "'");
  if (bad_back > 0)
    fail(s, t, "canary", "out-of-bounds write: " + std::to_string(bad_back)
                           + " byte(s) changed past the end of '" + name + "' (up to byte "
                           + std::to_string(last_back) + " after its last element, index "
                           + std::to_string(b.n + (static_cast<long long>(last_back) - 1) / 4)
                           + " of " + std::to_string(b.n) + " elements)");
  std::vector<std::uint32_t> out(static_cast<std::size_t>(b.n));
  std::memcpy(out.data(), staging.data() + canary_front, b.bytes());
  return out;
}

std::vector<std::uint32_t> make_host(const job& j, std::size_t ai, int s, int t) {
  const auto& a = j.args[ai];
  std::vector<std::uint32_t> h(static_cast<std::size_t>(j.sizes[s][ai]));
  if (a.role == "out") {
    std::fill(h.begin(), h.end(), poison_bits);
  } else {
    rng g(j.seed, static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(t), ai);
    fill(h.data(), static_cast<long long>(h.size()), a.is_int, a.init, a.a, a.b, g);
  }
  return h;
}

void write_raw(std::FILE* f, const std::vector<std::uint32_t>& v) {
  if (!v.empty() && std::fwrite(v.data(), 4, v.size(), f) != v.size()) {
    status("fail -1 -1 harness cannot write output file");
    std::_Exit(4);
  }
}

// The arguments of one call for size set s, trial t: inputs generated, outputs poisoned, every
// buffer uploaded with its canaries.
struct call_args {
  std::vector<std::vector<std::uint32_t>> host; // what was uploaded, per pointer argument
  std::vector<device_buffer> bufs;
  std::vector<void*> ptrs;
  std::vector<long long> ints;
};

call_args prepare_call(const job& j, int s, int t) {
  call_args c;
  c.host.resize(j.args.size());
  c.bufs.resize(j.args.size());
  c.ptrs.assign(j.args.size(), nullptr);
  c.ints.assign(j.args.size(), 0);
  for (std::size_t ai = 0; ai < j.args.size(); ++ai) {
    if (!j.args[ai].is_ptr) {
      c.ints[ai] = j.sizes[s][ai];
      continue;
    }
    c.host[ai] = make_host(j, ai, s, t < 0 ? 0 : t);
    c.bufs[ai] = upload(c.host[ai], canary_of(ai), s, t, j.args[ai].name);
    c.ptrs[ai] = c.bufs[ai].data();
  }
  return c;
}

// One call of the entry point, then a device-wide synchronisation and the checks that follow
// every call (CUDA errors, the emulation's fatal errors, work left running).
void invoke(call_args& c, int s, int t) {
  const int before = called_before ? thread_count() : -1;
  leap_invoke(c.ptrs.data(), c.ints.data());
  called_before = true;
  check_after_call(s, t);
  check_no_work_left(before, s, t);
}

// Second call on the same inputs (fresh buffers, outputs poisoned again): leap compares its
// outputs with the first call's, so results that change across identical calls are caught.
void repeat_call(const job& j, int s, int t, std::FILE* repeat_out) {
  auto c = prepare_call(j, s, t);
  invoke(c, s, t);
  for (std::size_t ai = 0; ai < j.args.size(); ++ai) {
    if (!j.args[ai].is_ptr)
      continue;
    auto got = download(c.bufs[ai], s, t, j.args[ai].name);
    if (j.args[ai].role != "in")
      write_raw(repeat_out, got);
    cudaFree(c.bufs[ai].base);
  }
}

void run_trial(const job& j, int s, int t, std::FILE* outputs, std::FILE* inputs) {
  status("begin %d %d", s, t);
  auto c = prepare_call(j, s, t);
  invoke(c, s, t);
  for (std::size_t ai = 0; ai < j.args.size(); ++ai) {
    if (!j.args[ai].is_ptr)
      continue;
    auto got = download(c.bufs[ai], s, t, j.args[ai].name);
    if (j.args[ai].role == "in") {
      if (got != c.host[ai])
        fail(s, t, "input_modified", "the input '" + j.args[ai].name
                                       + "' was modified (inputs are read-only)");
      if (j.dump_inputs)
        write_raw(inputs, c.host[ai]);
    } else {
      if (j.args[ai].role == "inout" && j.dump_inputs)
        write_raw(inputs, c.host[ai]);
      write_raw(outputs, got);
    }
    cudaFree(c.bufs[ai].base);
  }
  status("ok %d %d", s, t);
}

// The timing loop on size set 0, in both builds: `warmup` untimed then `timing_runs` timed calls
// on the same buffers. Before each call, outside the timed region, the inputs are regenerated
// (trial ids trials, trials + 1, ...: never used by the correctness trials, the same in the
// reference's process) and the outputs poisoned again; after it the canaries are checked, the
// inputs must be unchanged, and a timed call's outputs go to `timed` for leap to compare with the
// reference's. CUDA: events around a device-wide synchronisation, with an L2 flush before each
// timed call; the emulation: the host clock (leap reports no speedup from it).
void timing_loop(const job& j, std::FILE* timed) {
  const int s = 0;
  auto c = prepare_call(j, s, j.trials);
  std::vector<std::vector<std::uint32_t>> poison(j.args.size());
  for (std::size_t ai = 0; ai < j.args.size(); ++ai)
    if (j.args[ai].is_ptr && j.args[ai].role == "out")
      poison[ai] = c.host[ai];
#ifdef LEAP_HARNESS_CUDA
  void* flush = nullptr;
  std::size_t flush_bytes = static_cast<std::size_t>(j.l2_flush_mb) << 20;
  if (flush_bytes > 0 && cudaMalloc(&flush, flush_bytes) != cudaSuccess)
    fail(s, -1, "harness", "cannot allocate the L2 flush buffer");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  // Use the event calls once before the loop, so that whatever the runtime starts on first use
  // is running before the thread count of the first call is taken.
  cudaEventRecord(start);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
#endif
  std::vector<double> ms;
  for (int call = 0; call < j.warmup + j.timing_runs; ++call) {
    const bool is_timed = call >= j.warmup;
    if (call > 0)
      for (std::size_t ai = 0; ai < j.args.size(); ++ai) {
        if (!j.args[ai].is_ptr)
          continue;
        if (j.args[ai].role != "out")
          c.host[ai] = make_host(j, ai, s, j.trials + call);
        const auto& fresh = j.args[ai].role == "out" ? poison[ai] : c.host[ai];
        if (cudaMemcpy(c.bufs[ai].data(), fresh.data(), c.bufs[ai].bytes(), cudaMemcpyHostToDevice)
            != cudaSuccess)
          fail(s, -1, "harness", "cannot refresh '" + j.args[ai].name + "' between timing runs");
      }
#ifdef LEAP_HARNESS_CUDA
    if (flush && is_timed)
      cudaMemset(flush, call & 0xff, flush_bytes);
    cudaDeviceSynchronize();
    const int before = thread_count();
    cudaEventRecord(start);
    leap_invoke(c.ptrs.data(), c.ints.data());
    // A device-wide sync before the end event, so work on other streams is counted.
    cudaDeviceSynchronize();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float m = 0;
    cudaEventElapsedTime(&m, start, stop);
#else
    const int before = thread_count();
    const auto t0 = std::chrono::steady_clock::now();
    leap_invoke(c.ptrs.data(), c.ints.data());
    cudaDeviceSynchronize();
    const double m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
#endif
    check_after_call(s, -1);
    check_no_work_left(before, s, -1);
    if (!is_timed)
      continue;
    ms.push_back(m);
    for (std::size_t ai = 0; ai < j.args.size(); ++ai) {
      if (!j.args[ai].is_ptr)
        continue;
      auto got = download(c.bufs[ai], s, -1, j.args[ai].name);
      if (j.args[ai].role == "in" && got != c.host[ai])
        fail(s, -1, "input_modified", "the input '" + j.args[ai].name
                                        + "' was modified during the timing runs (inputs are read-only)");
      if (j.args[ai].role != "in")
        write_raw(timed, got);
    }
  }
  std::sort(ms.begin(), ms.end());
  status("time %d %.6f %.6f %d", s, ms.empty() ? 0.0 : ms[ms.size() / 2], ms.empty() ? 0.0 : ms.front(),
         static_cast<int>(ms.size()));
#ifdef LEAP_HARNESS_CUDA
  if (flush)
    cudaFree(flush);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
#endif
  for (auto& b : c.bufs)
    if (b.base)
      cudaFree(b.base);
}

} // namespace

int main() {
  status_out = std::fopen(status_file, "w");
  if (!status_out)
    return 5;
  job j;
  if (!read_job(j)) {
    status("fail -1 -1 harness malformed %s", job_file);
    return 4;
  }
  std::FILE* outputs = std::fopen(outputs_file, "wb");
  std::FILE* inputs = j.dump_inputs ? std::fopen(inputs_file, "wb") : nullptr;
  if (!outputs || (j.dump_inputs && !inputs)) {
    status("fail -1 -1 harness cannot create output files");
    return 4;
  }
  for (int s = 0; s < static_cast<int>(j.sizes.size()); ++s)
    for (int t = 0; t < j.trials; ++t) {
      run_trial(j, s, t, outputs, inputs);
      if (j.repeat && s == 0 && t == 0) {
        std::FILE* rep = std::fopen(repeat_file, "wb");
        if (!rep) {
          status("fail -1 -1 harness cannot create %s", repeat_file);
          return 4;
        }
        repeat_call(j, s, t, rep);
        std::fclose(rep);
        status("repeated %d %d", s, t);
      }
    }
  std::fclose(outputs);
  if (inputs)
    std::fclose(inputs);
  if (j.mode == "time" && j.timing_runs > 0) {
    std::FILE* timed = std::fopen(timed_file, "wb");
    if (!timed) {
      status("fail -1 -1 harness cannot create %s", timed_file);
      return 4;
    }
    timing_loop(j, timed);
    std::fclose(timed);
  }
  emulation_notes();
  status("done");
  std::fclose(status_out);
  return 0;
}
