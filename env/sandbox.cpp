#include "env/sandbox.hpp"

#include <seccomp.h>

#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <mutex>

namespace leap::env {

namespace {

// Landlock UAPI, defined here so the build does not depend on the kernel headers' age.
struct ll_ruleset_attr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct __attribute__((packed)) ll_path_beneath_attr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
constexpr int ll_rule_path_beneath = 1;
constexpr std::uint64_t fs_execute = 1ull << 0, fs_write_file = 1ull << 1,
                        fs_read_file = 1ull << 2, fs_read_dir = 1ull << 3,
                        fs_truncate = 1ull << 14, fs_ioctl_dev = 1ull << 15;
constexpr std::uint64_t net_bind_tcp = 1ull << 0, net_connect_tcp = 1ull << 1;
constexpr std::uint64_t scope_abstract_unix = 1ull << 0, scope_signal = 1ull << 1;

std::uint64_t fs_rights_for_abi(int abi) {
  std::uint64_t all = (1ull << 13) - 1; // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2)
    all |= 1ull << 13; // REFER
  if (abi >= 3)
    all |= fs_truncate;
  if (abi >= 5)
    all |= fs_ioctl_dev;
  return all;
}

int ll_create(const ll_ruleset_attr* attr, std::size_t size, std::uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, attr, size, flags));
}
int ll_add_rule(int fd, const ll_path_beneath_attr* attr) {
  return static_cast<int>(::syscall(SYS_landlock_add_rule, fd, ll_rule_path_beneath, attr, 0));
}
int ll_restrict(int fd) { return static_cast<int>(::syscall(SYS_landlock_restrict_self, fd, 0)); }

std::shared_ptr<const std::vector<sock_filter>> build_seccomp(bool allow_unix_sockets) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx)
    return nullptr;
  bool ok = true;
  auto deny = [&](int nr, int err) { ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0) == 0; };
  // No new processes: fork loops and setsid escapees are impossible. Threads stay allowed.
  deny(SCMP_SYS(fork), EPERM);
  deny(SCMP_SYS(vfork), EPERM);
  ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)) == 0;
  deny(SCMP_SYS(clone3), ENOSYS); // glibc then falls back to clone(), filtered above
  // No signals to anyone (leap, its workers, other candidates).
  deny(SCMP_SYS(kill), EPERM);
  deny(SCMP_SYS(tkill), EPERM);
  deny(SCMP_SYS(tgkill), EPERM);
  deny(SCMP_SYS(rt_sigqueueinfo), EPERM);
  deny(SCMP_SYS(rt_tgsigqueueinfo), EPERM);
  deny(SCMP_SYS(pidfd_send_signal), EPERM);
  // No network: no sockets (AF_UNIX only on the CUDA backend).
  if (allow_unix_sockets)
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_NE, AF_UNIX)) == 0;
  else
    deny(SCMP_SYS(socket), EPERM);
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                 SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
                 SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(bpf), SCMP_SYS(perf_event_open),
                 SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
                 SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
                 SCMP_SYS(io_uring_register), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load),
                 SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
                 SCMP_SYS(reboot), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct),
                 SCMP_SYS(syslog), SCMP_SYS(personality), SCMP_SYS(pidfd_open),
                 SCMP_SYS(pidfd_getfd), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at),
                 SCMP_SYS(fanotify_init), SCMP_SYS(setpriority), SCMP_SYS(sched_setaffinity)})
    deny(nr, EPERM);
  std::shared_ptr<std::vector<sock_filter>> prog;
  if (ok) {
    int fd = ::memfd_create("leap-seccomp", MFD_CLOEXEC);
    if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
      off_t size = ::lseek(fd, 0, SEEK_END);
      if (size > 0 && size % static_cast<off_t>(sizeof(sock_filter)) == 0) {
        auto p = std::make_shared<std::vector<sock_filter>>(static_cast<std::size_t>(size) / sizeof(sock_filter));
        if (::pread(fd, p->data(), static_cast<std::size_t>(size), 0) == size)
          prog = p;
      }
    }
    if (fd >= 0)
      ::close(fd);
  }
  seccomp_release(ctx);
  return prog;
}

std::shared_ptr<const std::vector<sock_filter>> seccomp_program(bool cuda) {
  static std::once_flag once;
  static std::shared_ptr<const std::vector<sock_filter>> cpu_prog, cuda_prog;
  std::call_once(once, [] {
    cpu_prog = build_seccomp(false);
    cuda_prog = build_seccomp(true);
  });
  return cuda ? cuda_prog : cpu_prog;
}

} // namespace

std::string sandbox_capabilities::summary() const {
  std::string s = "candidate sandbox: own session, rlimits (CPU, address space, file size, open "
                  "files, no core dumps), clean environment, empty temp dir";
  if (landlock_abi > 0)
    s += "; Landlock ABI " + std::to_string(landlock_abi)
         + " (writes only in the temp dir, reads only there and in system dirs"
         + (landlock_abi >= 4 ? ", no TCP" : "") + (landlock_abi >= 6 ? ", scoped signals" : "") + ")";
  if (seccomp)
    s += "; seccomp (no processes, signals, sockets, ptrace, mounts)";
  if (netns)
    s += "; empty network namespace";
  if (drop_uid)
    s += "; uid/gid " + std::to_string(sandbox_uid) + " with RLIMIT_NPROC";
  for (auto& n : notes)
    s += "; " + n;
  return s;
}

sandbox_capabilities probe_sandbox() {
  sandbox_capabilities c;
  int abi = ll_create(nullptr, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
  c.landlock_abi = abi > 0 ? abi : 0;
  if (c.landlock_abi == 0)
    c.notes.push_back("NO Landlock (kernel < 5.13 or disabled): file writes are confined only by "
                      "the unprivileged uid (when root) and RLIMIT_FSIZE");
  c.drop_uid = ::geteuid() == 0;
  if (!c.drop_uid)
    c.notes.push_back("not root: candidates keep leap's uid (RLIMIT_NPROC still applies)");
  auto prog = seccomp_program(false);
  // Try the network namespace and the seccomp filter in a throwaway child.
  pid_t pid = ::fork();
  if (pid == 0) {
    int bits = 0;
    if (::unshare(CLONE_NEWNET) == 0)
      bits |= 1;
    if (prog && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
      sock_fprog fp{static_cast<unsigned short>(prog->size()), const_cast<sock_filter*>(prog->data())};
      if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0 && ::fork() < 0 && errno == EPERM)
        bits |= 2;
    }
    ::_exit(bits);
  }
  int st = 0;
  if (pid > 0 && ::waitpid(pid, &st, 0) == pid && WIFEXITED(st)) {
    c.netns = (WEXITSTATUS(st) & 1) != 0;
    c.seccomp = (WEXITSTATUS(st) & 2) != 0;
  }
  if (!c.seccomp)
    c.notes.push_back("NO seccomp: fork loops are bounded only by RLIMIT_NPROC (when root: the "
                      "unprivileged uid), sockets only by the network namespace");
  if (!c.netns)
    c.notes.push_back("NO network namespace (unprivileged container?): network access is denied "
                      "by seccomp and Landlock only");
  return c;
}

sandbox_plan make_plan(const sandbox_capabilities& caps, const std::string& run_dir, bool cuda) {
  sandbox_plan p;
  p.landlock_abi = caps.landlock_abi;
  p.full_access_dirs = {run_dir};
  for (const char* d : {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc",
                        "/sys", "/opt"})
    if (std::filesystem::exists(d))
      p.read_only_dirs.emplace_back(d);
  p.device_files = {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"};
  if (cuda) {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0)
        p.device_files.push_back(e.path().string());
    if (std::filesystem::is_directory("/dev/nvidia-caps"))
      p.read_only_dirs.emplace_back("/dev/nvidia-caps");
    if (std::filesystem::exists("/dev/shm"))
      p.full_access_dirs.emplace_back("/dev/shm"); // the CUDA runtime's IPC; tmpfs
  }
  if (caps.seccomp)
    p.seccomp_program = seccomp_program(cuda);
  p.new_netns = caps.netns && !cuda;
  if (caps.drop_uid) {
    p.uid = sandbox_uid;
    p.gid = sandbox_gid;
    p.max_processes = 512;
  }
  return p;
}

const char* apply_in_child(const sandbox_plan& p) {
  if (p.new_netns && ::unshare(CLONE_NEWNET) != 0)
    return "unshare(CLONE_NEWNET) failed";
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return "prctl(PR_SET_NO_NEW_PRIVS) failed";
  if (p.landlock_abi > 0) {
    std::uint64_t fs_all = fs_rights_for_abi(p.landlock_abi);
    ll_ruleset_attr attr{fs_all, 0, 0};
    std::size_t size = sizeof(std::uint64_t);
    if (p.landlock_abi >= 4) {
      attr.handled_access_net = net_bind_tcp | net_connect_tcp;
      size = 2 * sizeof(std::uint64_t);
    }
    if (p.landlock_abi >= 6) {
      attr.scoped = scope_abstract_unix | scope_signal;
      size = sizeof(ll_ruleset_attr);
    }
    int rs = ll_create(&attr, size, 0);
    if (rs < 0)
      return "landlock_create_ruleset failed";
    auto add = [&](const std::string& path, std::uint64_t rights, bool must_exist) {
      int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0)
        return !must_exist;
      ll_path_beneath_attr pb{rights & fs_all, fd};
      int r = ll_add_rule(rs, &pb);
      ::close(fd);
      return r == 0 || !must_exist;
    };
    for (auto& d : p.full_access_dirs)
      if (!add(d, fs_all, true)) {
        ::close(rs);
        return "landlock_add_rule for the run directory failed";
      }
    for (auto& d : p.read_only_dirs)
      add(d, fs_execute | fs_read_file | fs_read_dir, false);
    for (auto& f : p.device_files)
      add(f, fs_read_file | fs_write_file | fs_truncate | fs_ioctl_dev, false);
    if (ll_restrict(rs) != 0) {
      ::close(rs);
      return "landlock_restrict_self failed";
    }
    ::close(rs);
  }
  if (p.uid >= 0) {
    if (p.max_processes > 0) {
      rlimit rl{static_cast<rlim_t>(p.max_processes), static_cast<rlim_t>(p.max_processes)};
      ::setrlimit(RLIMIT_NPROC, &rl);
    }
    if (::setgroups(0, nullptr) != 0 || ::setgid(static_cast<gid_t>(p.gid)) != 0
        || ::setuid(static_cast<uid_t>(p.uid)) != 0)
      return "switching to the unprivileged uid failed";
  }
  if (p.seccomp_program && !p.seccomp_program->empty()) {
    sock_fprog fp{static_cast<unsigned short>(p.seccomp_program->size()),
                  const_cast<sock_filter*>(p.seccomp_program->data())};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) != 0)
      return "installing the seccomp filter failed";
  }
  return nullptr;
}

} // namespace leap::env
