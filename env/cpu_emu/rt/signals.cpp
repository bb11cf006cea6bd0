// Crash diagnostics of the emulation: a SIGSEGV/SIGBUS handler (on an alternate stack per
// worker thread) that prints which kernel, block and thread faulted, and whether it hit a fiber
// stack guard page, then lets the default action kill the process. Installed by workers.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "leap_emu/rt_internal.h"

namespace leap_emu::detail {
namespace {

__thread const char* tl_guard_lo = nullptr;  // fiber stack region of this worker
__thread const char* tl_guard_hi = nullptr;
__thread std::size_t tl_guard_slot = 0, tl_guard_page = 0;
thread_local std::unique_ptr<char[]> tl_alt_stack;

void on_fault(int sig, siginfo_t* info, void*) {
  char msg[512];
  const char* addr = static_cast<const char*>(info->si_addr);
  const bool in_kernel = tl_mode != exec_mode::host && tl_desc;
  int len = 0;
  if (in_kernel) {
    const bool guard = tl_guard_lo && addr >= tl_guard_lo && addr < tl_guard_hi &&
                       static_cast<std::size_t>(addr - tl_guard_lo) % tl_guard_slot < tl_guard_page;
    len = std::snprintf(msg, sizeof msg,
                        "emulation: %s in kernel %s, block (%u,%u,%u), thread (%u,%u,%u)%s\n",
                        guard ? "fiber stack overflow" : (sig == SIGBUS ? "bus error" : "invalid memory access"),
                        tl_desc->kernel_name, tl_block_idx.x, tl_block_idx.y, tl_block_idx.z, tl_thread_idx.x,
                        tl_thread_idx.y, tl_thread_idx.z,
                        guard ? " (large local arrays? raise LEAP_EMU_STACK_KB)" : "");
  }
  if (len > 0) {
    ssize_t ignored = write(2, msg, static_cast<std::size_t>(len < static_cast<int>(sizeof msg) ? len : sizeof msg - 1));
    (void)ignored;
  }
  signal(sig, SIG_DFL);  // returning re-executes the faulting access and dies with the signal
}

}  // namespace

void install_fault_handler(const void* stacks_lo, const void* stacks_hi, std::size_t slot, std::size_t page) {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
  });
  if (!tl_alt_stack) {
    constexpr std::size_t size = 64 * 1024;
    tl_alt_stack = std::make_unique<char[]>(size);
    stack_t ss;
    std::memset(&ss, 0, sizeof ss);
    ss.ss_sp = tl_alt_stack.get();
    ss.ss_size = size;
    sigaltstack(&ss, nullptr);
  }
  if (!stacks_lo) return;
  tl_guard_lo = static_cast<const char*>(stacks_lo);
  tl_guard_hi = static_cast<const char*>(stacks_hi);
  tl_guard_slot = slot;
  tl_guard_page = page;
}

}  // namespace leap_emu::detail
