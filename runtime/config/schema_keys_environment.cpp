// The keys of where tasks, caches and scratch files live, the compiler, the executor, the CPU
// emulation and CUDA.
#include "runtime/config/schema_keys.hpp"

namespace leap::config::keys {

void register_environment(registry& r) {
  auto s = r.section("environment", &leap_config::environment,
                     "Where tasks, caches and scratch files live, and which backend verifies "
                     "candidates.");
  s.key_enum("backend", &environment_section::backend,
             {{"auto", backend_kind::auto_select},
              {"cpu", backend_kind::cpu},
              {"cuda", backend_kind::cuda}},
             "Verification backend: `auto` = CUDA if a device is usable, else the CPU emulation; "
             "`cpu` = the CUDA-on-CPU emulation; `cuda` = the real device.");
  s.key("tasks_dir", &environment_section::tasks_dir,
        "Directory of task specs; empty = the bundled `tasks/` directory.");
  s.key("cache_dir", &environment_section::cache_dir,
        "Cache directory (compiled artifacts); empty = `$LEAP_CACHE_DIR`, else "
        "`$XDG_CACHE_HOME/leap`, else `~/.cache/leap`.");
  s.key("work_dir", &environment_section::work_dir,
        "Directory for temporary files; empty = a fresh directory under `$TMPDIR`.");
  s.key("cache_max_mb", &environment_section::cache_max_mb,
        "Size bound of the build cache (`<cache_dir>/builds`) in MiB: past it, the least recently "
        "used builds are evicted (never one used in the last 10 minutes); 0 = unbounded. "
        "`leap cache stats|prune|clear` inspects and trims it.")
      .at_least(0);
  s.key("generated_tasks", &environment_section::generated_tasks,
        "Generated train tasks (`gen_<family>_t<n>`: elementwise, reductions, broadcasts, softmax, "
        "scans, pooling, matmul epilogues; env/taskgen) added to the bundled suite, spread over the "
        "families; 0 = none. They count in the suite hash like bundled tasks.")
      .at_least(0)
      .at_most(20000);
  s.key("generated_eval_tasks", &environment_section::generated_eval_tasks,
        "Generated eval-split tasks of each held-out kind added to the suite: new instances of "
        "trained compositions (`gen_<family>_i<n>`) and held-out compositions (`gen_<family>_c<n>`); "
        "0 = none.")
      .at_least(0)
      .at_most(5000);
  s.key("generated_seed", &environment_section::generated_seed,
        "Seed of the generated tasks: the same seed and counts give the same tasks, byte for byte.");
}

void register_compiler(registry& r) {
  auto s = r.section("compiler", &leap_config::compiler,
                     "The compile pool: nvcc for the CUDA backend, a host C++ compiler for the CPU "
                     "emulation.");
  s.key("workers", &compiler_section::workers, "Compile jobs run concurrently.").at_least(1);
  s.key("nvcc", &compiler_section::nvcc,
        "Path of nvcc; empty = `$CUDA_HOME/bin/nvcc`, else `/usr/local/cuda/bin/nvcc`.");
  s.key("arch", &compiler_section::arch, "GPU architecture passed to nvcc (`-arch`).").non_empty();
  s.key("nvcc_flags", &compiler_section::nvcc_flags, "Extra nvcc flags.");
  s.key("host_cxx", &compiler_section::host_cxx, "C++ compiler for the CPU-emulation build.")
      .non_empty();
  s.key("emu_flags", &compiler_section::emu_flags, "Extra flags of the CPU-emulation build.");
  s.key("timeout_seconds", &compiler_section::timeout_seconds,
        "Time limit of one compile job; on expiry its whole process tree is killed.")
      .greater_than(0);
  s.key("max_diagnostic_lines", &compiler_section::max_diagnostic_lines,
        "Lines of compiler errors kept for the feedback text.")
      .at_least(1);
  s.key("retries", &compiler_section::retries,
        "More tries of a compile job that failed inside leap (a compiler stage killed by a "
        "signal, a tool that would not start, a worker that died); after the last, the attempt "
        "is dropped as an infrastructure fault, never judged or cached.")
      .at_least(0)
      .at_most(10);
}

void register_executor(registry& r) {
  auto s = r.section("executor", &leap_config::executor,
                     "The pool that runs compiled candidates against the reference.");
  s.key("workers", &executor_section::workers, "Candidate processes run concurrently.")
      .at_least(1);
  s.key("timeout_seconds", &executor_section::timeout_seconds,
        "Wall-clock limit of one candidate process.")
      .greater_than(0);
  s.key("memory_limit_mb", &executor_section::memory_limit_mb,
        "Address-space limit of a candidate process on the CPU backend, in MiB.")
      .at_least(64);
  s.key("trials", &executor_section::trials,
        "Correctness trials per size set, each with fresh random inputs.")
      .at_least(1);
  s.key("seed", &executor_section::seed,
        "Input seed: 0 = a fresh random seed per check; otherwise fixed, for reproducible "
        "checks.")
      .at_least(0);
  s.key("output_limit_kb", &executor_section::output_limit_kb,
        "KiB of stdout/stderr kept per candidate process.")
      .at_least(1);
  s.key("sandbox", &executor_section::sandbox,
        "Confine candidate processes with every protection this machine offers (Landlock, "
        "seccomp, network namespace, unprivileged uid; `leap doctor` lists them). Turn off only "
        "to debug the harness.");
  s.key("check_repeat", &executor_section::check_repeat,
        "Call the candidate a second time on identical inputs in the first trial and flag "
        "results that change across calls (a wrong_answer).");
  s.key("retries", &executor_section::retries,
        "More tries of a run that failed inside leap (the reference crashed, a temporary "
        "directory could not be made, a worker that died); after the last, the attempt is "
        "dropped as an infrastructure fault, never judged.")
      .at_least(0)
      .at_most(10);
}

void register_emulation(registry& r) {
  auto s = r.section("emulation", &leap_config::emulation,
                     "The fiber-based CUDA-on-CPU emulation (the `cpu` backend).");
  s.key("threads", &emulation_section::threads, "OS worker threads of the emulation.").at_least(1);
  s.key("fiber_stack_kb", &emulation_section::fiber_stack_kb,
        "Stack size of one emulated CUDA thread (fiber), in KiB.")
      .at_least(16)
      .at_most(65536);
}

void register_cuda(registry& r) {
  auto s = r.section("cuda", &leap_config::cuda, "Device selection and timing on a real GPU.");
  s.key("device", &cuda_section::device, "CUDA device ordinal.").at_least(0);
  s.key("warmup", &cuda_section::warmup, "Untimed runs before timing.").at_least(0);
  s.key("timing_runs", &cuda_section::timing_runs, "Timed runs per measurement.").at_least(1);
  s.key("l2_flush_mb", &cuda_section::l2_flush_mb,
        "MiB written between timed runs to flush the L2 cache; 0 disables the flush.")
      .at_least(0);
  s.key("max_plausible_speedup", &cuda_section::max_plausible_speedup,
        "A correct candidate faster than the reference by more than this factor is flagged "
        "`excessive_speedup` in its verdict, for review.")
      .greater_than(0);
}

} // namespace leap::config::keys
