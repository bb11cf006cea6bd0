#include "env/toolchain.hpp"

#include "common/fs.hpp"
#include "common/sha256.hpp"
#include "common/strings.hpp"
#include "env/process.hpp"

#include "leap/build_info.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace leap::env {

bool probe_cuda_device(std::string& why) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "no CUDA driver (libcuda.so.1 not loadable)";
    return false;
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  using get_fn = int (*)(int*, int);
  using name_fn = int (*)(char*, int, int);
  auto cu_init = reinterpret_cast<init_fn>(::dlsym(lib, "cuInit"));
  auto cu_count = reinterpret_cast<count_fn>(::dlsym(lib, "cuDeviceGetCount"));
  auto cu_get = reinterpret_cast<get_fn>(::dlsym(lib, "cuDeviceGet"));
  auto cu_name = reinterpret_cast<name_fn>(::dlsym(lib, "cuDeviceGetName"));
  bool ok = false;
  if (!cu_init || !cu_count) {
    why = "CUDA driver lacks cuInit/cuDeviceGetCount";
  } else if (int rc = cu_init(0); rc != 0) {
    why = "cuInit failed with CUDA driver error " + std::to_string(rc);
  } else {
    int n = 0;
    if (cu_count(&n) != 0 || n <= 0) {
      why = "the CUDA driver reports no device";
    } else {
      ok = true;
      why = std::to_string(n) + " device(s)";
      int dev = 0;
      char name[256] = {0};
      if (cu_get && cu_name && cu_get(&dev, 0) == 0 && cu_name(name, sizeof name, dev) == 0)
        why = name;
    }
  }
  // The driver stays loaded: unloading libcuda after cuInit is not supported.
  return ok;
}

namespace {

std::string first_line(const std::string& s) {
  auto lines = split_lines(s);
  for (auto& l : lines)
    if (!trim(l).empty())
      return std::string(trim(l));
  return {};
}

process_spec version_query(const std::string& tool) {
  process_spec s;
  s.argv = {tool, "--version"};
  s.timeout_seconds = 30;
  return s;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

} // namespace

result<toolchain> discover_toolchain(const toolchain_options& opts) {
  toolchain tc;
  tc.cuda_home = env_or("CUDA_HOME", build_info::cuda_home);
  tc.source_dir = env_or("LEAP_HOME", build_info::source_dir);
  tc.binary_dir = env_or("LEAP_BUILD_DIR", build_info::binary_dir);
  tc.nvcc = opts.nvcc.empty() ? tc.cuda_home + "/bin/nvcc" : opts.nvcc;
  tc.host_cxx = opts.host_cxx.empty() ? "g++" : opts.host_cxx;
  std::error_code ec;
  if (!fs::exists(tc.nvcc, ec))
    return make_error("nvcc not found at " + tc.nvcc
                      + ": install the CUDA toolkit there, set CUDA_HOME, or set compiler.nvcc");
  auto v = run_blocking(version_query(tc.nvcc));
  if (!v.success())
    return make_error(tc.nvcc + " --version failed: " + v.describe() + "\n" + v.err);
  for (auto& line : split_lines(v.out))
    if (line.find("release") != std::string::npos)
      tc.nvcc_version = std::string(trim(line.substr(line.find("release"))));
  if (tc.nvcc_version.empty())
    tc.nvcc_version = first_line(v.out);
  auto g = run_blocking(version_query(tc.host_cxx));
  if (!g.success())
    return make_error(tc.host_cxx + " --version failed: " + g.describe()
                      + " (set compiler.host_cxx to a working g++)");
  tc.host_cxx_version = first_line(g.out);
  tc.emu_include_dir = tc.source_dir + "/env/cpu_emu/include";
  tc.emu_runtime_lib = tc.binary_dir + "/env/cpu_emu/libleap_emu_rt.a";
  tc.harness_cpu_lib = tc.binary_dir + "/env/harness/libleap_harness_cpu.a";
  auto cuda_lib = tc.binary_dir + "/env/harness/libleap_harness_cuda.a";
  tc.harness_cuda_lib = fs::exists(cuda_lib, ec) ? cuda_lib : "";
  // gold links a candidate worker in about half the time of ld.bfd (0.07 s against 0.13 s for
  // vector_add); both are in Debian's binutils, but a custom host compiler may not find gold.
  for (const char* gold : {"/usr/bin/ld.gold", "/bin/ld.gold"})
    if (fs::exists(gold, ec)) {
      tc.link_flags = {"-fuse-ld=gold"};
      break;
    }
  // Optional: the precompiled shim headers (env/cpu_emu/CMakeLists.txt) and the flags they fit.
  auto pch = tc.binary_dir + "/env/cpu_emu/pch";
  if (auto flags = read_file(pch + "/emu_flags.txt");
      flags && fs::exists(pch + "/cuda_runtime.h.gch/sync0.gch", ec)
      && fs::exists(pch + "/cuda_runtime.h.gch/sync1.gch", ec)) {
    tc.emu_pch_dir = pch;
    tc.emu_pch_flags = std::string(trim(*flags));
  }
  for (auto* p : {&tc.emu_runtime_lib, &tc.harness_cpu_lib})
    if (!fs::exists(*p, ec))
      return make_error(*p + " is missing: build leap first (make build), or set LEAP_BUILD_DIR "
                             "to the build directory");
  if (!fs::is_directory(tc.emu_include_dir, ec))
    return make_error(tc.emu_include_dir + " is missing: set LEAP_HOME to leap's source tree");
  // Everything a compiled candidate depends on besides its own source goes into cache keys.
  sha256 h;
  std::vector<std::string> files{tc.emu_runtime_lib, tc.harness_cpu_lib};
  if (!tc.harness_cuda_lib.empty())
    files.push_back(tc.harness_cuda_lib);
  std::vector<fs::path> headers;
  for (auto& e : fs::recursive_directory_iterator(tc.emu_include_dir, ec))
    if (e.is_regular_file())
      headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (auto& p : headers)
    files.push_back(p.string());
  for (auto& f : files) {
    auto content = read_file(f);
    if (!content)
      return content.err();
    h.field(f.substr(f.rfind('/') + 1)).field(*content);
  }
  tc.resources_digest = h.hex_digest();
  tc.cuda_device = probe_cuda_device(tc.cuda_device_name);
  return tc;
}

} // namespace leap::env
