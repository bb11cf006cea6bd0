// main() of every candidate and reference process (one harness, two builds: LEAP_HARNESS_CUDA
// links the CUDA runtime, otherwise the CUDA-on-CPU emulation). It runs inside the worker
// process leap spawns, never inside leap: reads job.txt from its working directory, generates
// the inputs deterministically, poisons outputs, guards every buffer with canaries, calls the
// task's entry point through the generated glue (leap_invoke), and writes the raw outputs and a
// line-based status file. It compares nothing: leap compares outputs in its own process.
#include "env/harness/protocol.hpp"

#include <cuda_runtime.h>
#ifndef LEAP_HARNESS_CUDA
#include <leap_emu/api.h>
#endif

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" void leap_invoke(void* const* ptrs, const long long* ints);

namespace {

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

// Allocates a buffer with canaries and uploads `host` (n 32-bit values) into its data part.
device_buffer upload(const std::vector<std::uint32_t>& host, int s, int t, const std::string& name) {
  device_buffer b;
  b.n = static_cast<long long>(host.size());
  std::vector<unsigned char> staging(canary_front + b.bytes() + canary_back, canary_byte);
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
    bad_front += staging[i] != canary_byte;
  for (std::size_t i = 0; i < canary_back; ++i)
    if (staging[canary_front + b.bytes() + i] != canary_byte) {
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
    c.bufs[ai] = upload(c.host[ai], s, t, j.args[ai].name);
    c.ptrs[ai] = c.bufs[ai].data();
  }
  return c;
}

// Second call on the same inputs (fresh buffers, outputs poisoned again): leap compares its
// outputs with the first call's, so results that change across identical calls are caught.
void repeat_call(const job& j, int s, int t, std::FILE* repeat_out) {
  auto c = prepare_call(j, s, t);
  leap_invoke(c.ptrs.data(), c.ints.data());
  check_after_call(s, t);
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
  leap_invoke(c.ptrs.data(), c.ints.data());
  check_after_call(s, t);
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

#ifdef LEAP_HARNESS_CUDA
void time_size_set(const job& j, int s) {
  auto c = prepare_call(j, s, -1);
  auto& bufs = c.bufs;
  auto& ptrs = c.ptrs;
  auto& ints = c.ints;
  void* flush = nullptr;
  std::size_t flush_bytes = static_cast<std::size_t>(j.l2_flush_mb) << 20;
  if (flush_bytes > 0 && cudaMalloc(&flush, flush_bytes) != cudaSuccess)
    fail(s, -1, "harness", "cannot allocate the L2 flush buffer");
  for (int w = 0; w < j.warmup; ++w) {
    leap_invoke(ptrs.data(), ints.data());
    check_after_call(s, -1);
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int r = 0; r < j.timing_runs; ++r) {
    if (flush)
      cudaMemset(flush, r & 0xff, flush_bytes);
    cudaDeviceSynchronize();
    cudaEventRecord(start);
    leap_invoke(ptrs.data(), ints.data());
    // A device-wide sync before the end event, so work on other streams is counted.
    cudaDeviceSynchronize();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    check_after_call(s, -1);
    float m = 0;
    cudaEventElapsedTime(&m, start, stop);
    ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  status("time %d %.6f %.6f %d", s, ms[ms.size() / 2], ms.front(), static_cast<int>(ms.size()));
  if (flush)
    cudaFree(flush);
  for (auto& b : bufs)
    if (b.base)
      cudaFree(b.base);
}
#endif

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
  if (j.mode == "time") {
#ifdef LEAP_HARNESS_CUDA
    time_size_set(j, 0);
#else
    status("time_unsupported CPU emulation measures correctness only");
#endif
  }
  emulation_notes();
  status("done");
  std::fclose(status_out);
  return 0;
}
