// `leap doctor`: the tools, the backend, the cache and the candidate sandbox this machine gives.
#include "leap/build_info.hpp"
#include "common/allocator.hpp"
#include "env/oracles/task_oracles.hpp"
#include "runtime/commands/table.hpp"
#include "runtime/pipeline/services.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace leap::runtime {

namespace {

int run_doctor(const command_context& ctx) {
  auto& svc = *ctx.svc;
  auto& t = svc.tools;
  std::printf("leap %s\n", build_info::version);
  std::printf("nvcc:            %s (%s)\n", t.nvcc.c_str(), t.nvcc_version.c_str());
  std::printf("host compiler:   %s\n", t.host_cxx_version.c_str());
  std::printf("CUDA device:     %s\n", t.cuda_device ? t.cuda_device_name.c_str()
                                                       : ("none: " + t.cuda_device_name).c_str());
  std::printf("backend:         %s (%s)\n", env::to_string(svc.backend), svc.backend_reason.c_str());
  std::printf("CUDA harness:    %s\n", t.harness_cuda_lib.empty() ? "not built" : t.harness_cuda_lib.c_str());
  std::printf("emulation:       %s, %s\n", t.emu_runtime_lib.c_str(), t.emu_include_dir.c_str());
  std::printf("cache:           %s\n", svc.cache_dir.c_str());
  if (auto u = svc.compiler->cache().scan(true); u) {
    auto max = svc.compiler->options().cache_max_bytes;
    std::printf("build cache:     %zu builds, %.1f MiB of %s, %zu damaged%s, %zu unfinished\n",
                u->entries, static_cast<double>(u->bytes) / (1 << 20),
                max ? (std::to_string(max >> 20) + " MiB").c_str() : "no bound", u->damaged,
                u->damaged ? " (rebuilt when next used; 'leap cache prune' removes them)" : "",
                u->leftovers);
  } else {
    std::printf("build cache:     unreadable: %s\n", u.message().c_str());
  }
  std::printf("tasks:           %s\n", svc.tasks_dir.c_str());
  std::printf("oracles:         %zu LibTorch task oracles\n", oracles::oracle_names().size());
  // Read by libgomp and OpenBLAS when LibTorch loaded (common/thread_pools_env.hpp: the front
  // end sets leap's preferences unless the user set a variable).
  const char* omp = std::getenv("OMP_WAIT_POLICY");
  std::printf("OpenMP waiting:  OMP_WAIT_POLICY=%s\n", omp ? omp : "(unset: libgomp's default)");
  const char* blas = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  std::printf("OpenBLAS idle:   OPENBLAS_THREAD_TIMEOUT=%s\n",
              blas ? blas : "(unset: OpenBLAS's default, 28)");
  // The heap that serves training and sampling (common/allocator.hpp): leap-torch links tcmalloc.
  if (auto heap = heap_figures_now(); heap.ok()) {
    std::string note;
    if (heap->allocator == heap_allocator::tcmalloc) {
      const char* decommit = std::getenv("TCMALLOC_AGGRESSIVE_DECOMMIT");
      note = decommit ? std::string(", TCMALLOC_AGGRESSIVE_DECOMMIT=") + decommit
                      : ", freed spans kept (TCMALLOC_AGGRESSIVE_DECOMMIT unset)";
    }
    std::printf("heap:            %s, %.1f MiB in use, %.1f MiB resident%s\n",
                to_string(heap->allocator), heap->in_use_bytes / 1048576.0,
                heap->resident_bytes / 1048576.0, note.c_str());
  } else {
    std::printf("heap:            %s\n", heap.message().c_str());
  }
  std::printf("isolation:       %s\n", svc.cfg.executor.sandbox
                                          ? svc.sandbox.summary().c_str()
                                          : "DISABLED (executor.sandbox = false)");
  return exit_ok;
}

} // namespace

command doctor_command() {
  return {{"doctor"}, "", "report tools, backend and protections", command::needs::services,
          false, false, run_doctor};
}

} // namespace leap::runtime
