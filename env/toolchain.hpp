// Where leap's tools and resources are: nvcc and its version, the host C++ compiler for the
// CPU-emulation build, the emulation's headers and runtime library, the prebuilt harness
// libraries, the bundled tasks, and whether a CUDA device is usable. Discovered once at start
// (blocking: runs `nvcc --version`), then an immutable value shared by the pools.
#pragma once

#include "common/result.hpp"

#include <string>
#include <vector>

namespace leap::env {

struct toolchain {
  std::string cuda_home;        // e.g. /usr/local/cuda
  std::string nvcc;             // absolute path
  std::string nvcc_version;     // "release 13.0, V13.0.88"
  std::string host_cxx;         // g++ used for the emulation build and the glue
  std::string host_cxx_version; // first line of `g++ --version`
  std::string source_dir;       // leap's tree (LEAP_HOME overrides)
  std::string binary_dir;       // leap's build tree (LEAP_BUILD_DIR overrides)
  std::string emu_include_dir;  // shim headers (cuda_runtime.h ...)
  std::string emu_runtime_lib;  // libleap_emu_rt.a
  std::string harness_cpu_lib;  // libleap_harness_cpu.a
  std::string harness_cuda_lib; // libleap_harness_cuda.a (empty if not built)
  std::vector<std::string> link_flags; // CPU-emulation link: -fuse-ld=gold when gold exists
  std::string emu_pch_dir;      // precompiled shim headers (empty if not built), valid with
  std::string emu_pch_flags;    //   these compiler.emu_flags (space-separated)
  std::string resources_digest; // hash of the runtime libs + headers: part of every cache key
  bool cuda_device = false;     // a CUDA device is usable (driver loads, count > 0)
  std::string cuda_device_name; // or why none is usable

  std::string tasks_dir() const { return source_dir + "/tasks"; }
};

struct toolchain_options {
  std::string nvcc;     // empty = <cuda_home>/bin/nvcc
  std::string host_cxx; // default g++
};

// Finds everything; an error names what is missing and how to fix it (e.g. "run make").
result<toolchain> discover_toolchain(const toolchain_options& opts);

// Asks the CUDA driver (dlopen libcuda.so.1, cuInit, cuDeviceGetCount) whether a device is
// usable. Never throws; `why` says what failed.
bool probe_cuda_device(std::string& name_or_why);

} // namespace leap::env
