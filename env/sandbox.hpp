// Isolation of candidate worker processes: what can be enforced on this machine (probed once),
// and the per-run plan applied in the forked child before exec, so the limits hold before any
// candidate code runs, static constructors included:
//   - Landlock: writes only inside the run's temporary directory; reads only there and in the
//     system directories (/usr, /lib, /etc, ...); TCP bind/connect denied; signals scoped.
//   - seccomp (libseccomp, compiled to BPF in the parent): no fork/vfork/clone of processes (so
//     no fork loops and no setsid escapees), no kill/tkill/tgkill, no sockets except AF_UNIX on
//     the CUDA backend, no ptrace, mount, namespaces, bpf, io_uring, modules, ...
//   - a new, empty network namespace (root only);
//   - an unprivileged uid/gid (65534) when leap runs as root, so RLIMIT_NPROC binds and no
//     candidate can signal leap.
// probe_sandbox() runs on the main thread at start; make_plan() on any thread;
// apply_in_child() only between fork and exec (async-signal-safe syscalls only).
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

namespace leap::env {

struct sandbox_capabilities {
  int landlock_abi = 0;      // 0 = unavailable
  bool seccomp = false;
  bool netns = false;        // unshare(CLONE_NEWNET) works
  bool drop_uid = false;     // running as root: can switch to an unprivileged uid
  std::vector<std::string> notes; // one line per missing protection and its fallback
  std::string summary() const;    // one line for the log and `leap doctor`
};

// Tries each mechanism (forks a short-lived child for the namespace and seccomp checks).
sandbox_capabilities probe_sandbox();

struct sandbox_plan {
  int landlock_abi = 0;
  std::vector<std::string> full_access_dirs; // the run directory
  std::vector<std::string> read_only_dirs;   // system directories: read + execute
  std::vector<std::string> device_files;     // read/write/ioctl (/dev/null, /dev/nvidia*, ...)
  std::shared_ptr<const std::vector<sock_filter>> seccomp_program; // null = no seccomp
  bool new_netns = false;
  int uid = -1, gid = -1;                    // >= 0: switch to them
  long long max_processes = 0;               // RLIMIT_NPROC after the uid switch (0 = unchanged)
};

// The plan for one worker running in `run_dir`. `cuda` adds the NVIDIA device files and allows
// AF_UNIX sockets (the driver may use them).
sandbox_plan make_plan(const sandbox_capabilities& caps, const std::string& run_dir, bool cuda);

// Applies the plan in the forked child. Returns nullptr, or a static description of the step
// that failed (the caller then writes it to stderr and exits without running the candidate).
const char* apply_in_child(const sandbox_plan& plan);

constexpr int sandbox_uid = 65534;
constexpr int sandbox_gid = 65534;
constexpr int sandbox_setup_failed_exit = 125;

} // namespace leap::env
