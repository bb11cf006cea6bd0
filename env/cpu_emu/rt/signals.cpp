// Crash diagnostics of the emulation: a SIGSEGV/SIGBUS handler (on an alternate stack per
// worker thread) that prints which kernel, block and thread faulted, and whether it hit a fiber
// stack guard page or was a misaligned vector access (worded as a GPU does: "misaligned
// address"), then lets the default action kill the process. Installed by workers.
#include <signal.h>
#include <ucontext.h>
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

// Whether the x86-64 instruction at `ip` is an aligned SSE/AVX move (movaps/movapd/movdqa,
// their VEX/EVEX forms, the non-temporal stores): the instructions g++ emits for 16-byte
// vector types such as float4, which fault (general protection, si_code SI_KERNEL) on an
// address that is not a multiple of their size.
bool aligned_vector_move(const unsigned char* p) {
  bool p66 = false;
  for (int k = 0; k < 6; ++k) {
    const unsigned char b = *p;
    if (b == 0x66) p66 = true;
    else if (!(b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x3E || b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65 || b == 0x67)) break;
    ++p;
  }
  if ((*p & 0xF0) == 0x40) ++p;  // REX
  int pp = p66 ? 1 : 0;
  unsigned char op = 0;
  if (p[0] == 0x0F) {
    op = p[1];
  } else if (p[0] == 0xC5) {  // two-byte VEX, map 0F
    pp = p[1] & 3;
    op = p[2];
  } else if (p[0] == 0xC4 || p[0] == 0x62) {  // three-byte VEX, EVEX
    if ((p[1] & 3) != 1) return false;  // map 0F only
    pp = p[2] & 3;
    op = p[0] == 0xC4 ? p[3] : p[4];
  } else {
    return false;
  }
  if (op == 0x28 || op == 0x29 || op == 0x2B) return pp == 0 || pp == 1;  // movaps/movapd, movntps/pd
  if (op == 0x6F || op == 0x7F || op == 0xE7) return pp == 1;             // movdqa, movntdq
  return false;
}

void on_fault(int sig, siginfo_t* info, void* context) {
  char msg[512];
  const char* addr = static_cast<const char*>(info->si_addr);
  const bool in_kernel = tl_mode != exec_mode::host && tl_desc;
  int len = 0;
  if (in_kernel) {
    const bool guard = tl_guard_lo && addr >= tl_guard_lo && addr < tl_guard_hi &&
                       static_cast<std::size_t>(addr - tl_guard_lo) % tl_guard_slot < tl_guard_page;
    const auto* uc = static_cast<const ucontext_t*>(context);
    const bool misaligned = !guard && sig == SIGSEGV && info->si_code == SI_KERNEL && uc &&
                            aligned_vector_move(reinterpret_cast<const unsigned char*>(uc->uc_mcontext.gregs[REG_RIP]));
    len = std::snprintf(msg, sizeof msg,
                        "emulation: %s in kernel %s, block (%u,%u,%u), thread (%u,%u,%u)%s\n",
                        guard        ? "fiber stack overflow"
                        : misaligned ? "misaligned address"
                        : sig == SIGBUS ? "bus error" : "invalid memory access",
                        tl_desc->kernel_name, tl_block_idx.x, tl_block_idx.y, tl_block_idx.z, tl_thread_idx.x,
                        tl_thread_idx.y, tl_thread_idx.z,
                        guard        ? " (large local arrays? raise LEAP_EMU_STACK_KB)"
                        : misaligned ? " (a vector access such as float4 or int4 at an address that is not a multiple of its size)"
                                     : "");
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
