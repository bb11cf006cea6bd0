// The emulation's inline-PTX runtime (leap_emu/ptx.h): shared-window addresses and cp.async
// with its per-thread groups of pending copies. Runs on worker threads (kernel code); the
// encoding and the pending copies are per worker thread.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "leap_emu/ptx.h"
#include "leap_emu/rt_internal.h"
#include "leap_emu/state.h"
#include "leap_emu/sync.h"

namespace leap_emu::ptx {
namespace {

// Static __shared__ arrays are thread_local variables of the executable: they lie in the static
// TLS block, which also holds this anchor, within a few MB of it.
__thread char tl_anchor;
constexpr std::uint32_t k_dynamic_bit = 0x80000000u;
constexpr std::int64_t k_tls_reach = std::int64_t(1) << 30;

}  // namespace

std::uint32_t to_shared(const void* p) {
  const char* c = static_cast<const char*>(p);
  const char* dyn = static_cast<const char*>(detail::dynamic_smem());
  if (c >= dyn && c < dyn + detail::max_dynamic_smem()) return k_dynamic_bit | static_cast<std::uint32_t>(c - dyn);
  const std::int64_t off = reinterpret_cast<std::intptr_t>(c) - reinterpret_cast<std::intptr_t>(&tl_anchor);
  if (off < -k_tls_reach || off >= k_tls_reach)
    detail::device_trap("__cvta_generic_to_shared of an address that is not shared memory");
  return static_cast<std::uint32_t>(off) & ~k_dynamic_bit;
}

void* from_shared(std::uint64_t shared_address) {
  const auto a = static_cast<std::uint32_t>(shared_address);
  if (a & k_dynamic_bit) return static_cast<char*>(detail::dynamic_smem()) + (a & ~k_dynamic_bit);
  // Sign-extend the 31-bit offset.
  const std::int64_t off = static_cast<std::int64_t>(static_cast<std::int32_t>(a << 1) >> 1);
  return &tl_anchor + off;
}

namespace {

// One copy issued and not yet performed: the source bytes as read at issue.
struct pending_copy {
  char* dst;
  std::uint64_t group;  // 1-based commit number; committed + 1 while uncommitted
  unsigned bytes;       // cp-size (the zero-filled tail included)
  unsigned char data[16];
};

struct thread_copies {
  std::vector<pending_copy> q;  // in issue order, so groups never decrease
  std::size_t head = 0;         // q[head..] are still pending
  std::uint64_t committed = 0;  // groups committed so far
};

struct worker_copies {
  std::vector<thread_copies> threads;  // fiber path: by linear thread index in the block
  thread_copies loop;                  // plain-loop path: the thread running now
  uint3 loop_block{~0u, ~0u, ~0u}, loop_thread{~0u, ~0u, ~0u};
  const void* loop_desc = nullptr;
};

thread_local worker_copies tl_copies;

void clear(thread_copies& t) {
  t.q.clear();
  t.head = 0;
  t.committed = 0;
}

bool same(const uint3& a, const uint3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

thread_copies& mine() {
  worker_copies& w = tl_copies;
  if (detail::tl_mode == detail::exec_mode::fibers) {
    const dim3 b = detail::tl_block_dim;
    const uint3 t = detail::tl_thread_idx;
    const std::size_t i = t.x + std::size_t(b.x) * (t.y + std::size_t(b.y) * t.z);
    if (i >= w.threads.size()) w.threads.resize(i + 1);
    return w.threads[i];
  }
  // The plain-loop path runs each thread to its end before the next: a new thread (or block,
  // or launch) finds the copies its predecessor left pending dropped.
  if (!same(w.loop_thread, detail::tl_thread_idx) || !same(w.loop_block, detail::tl_block_idx) ||
      w.loop_desc != detail::tl_desc) {
    clear(w.loop);
    w.loop_thread = detail::tl_thread_idx;
    w.loop_block = detail::tl_block_idx;
    w.loop_desc = detail::tl_desc;
  }
  return w.loop;
}

void issue(char* dst, const char* src, unsigned cp_size, unsigned src_size) {
  thread_copies& t = mine();
  pending_copy c;
  c.dst = dst;
  c.group = t.committed + 1;
  c.bytes = cp_size;
  const unsigned n = src_size < cp_size ? src_size : cp_size;
  std::memcpy(c.data, src, n);
  std::memset(c.data + n, 0, sizeof c.data - n);
  t.q.push_back(c);
}

// Performs every pending copy of groups 1..last.
void complete_through(thread_copies& t, std::uint64_t last) {
  while (t.head < t.q.size() && t.q[t.head].group <= last) {
    const pending_copy& c = t.q[t.head++];
    std::memcpy(c.dst, c.data, c.bytes);
  }
  if (t.head == t.q.size()) {
    t.q.clear();
    t.head = 0;
  }
}

}  // namespace

void cp_async(std::uint64_t dst_shared, const char* src, unsigned cp_size, unsigned src_size, bool cache_global) {
  char* dst = static_cast<char*>(from_shared(dst_shared));
  if (cp_size != 4 && cp_size != 8 && cp_size != 16)
    detail::device_trap("cp.async with a copy size other than 4, 8 or 16 bytes");
  if (cache_global && cp_size != 16) detail::device_trap("cp.async.cg with a copy size other than 16 bytes");
  if (reinterpret_cast<std::uintptr_t>(dst) % cp_size != 0 || reinterpret_cast<std::uintptr_t>(src) % cp_size != 0) {
    char what[160];
    std::snprintf(what, sizeof what, "misaligned address: cp.async of %u bytes from %p to shared %p", cp_size,
                  static_cast<const void*>(src), static_cast<void*>(dst));
    detail::device_trap(what);
  }
  issue(dst, src, cp_size, src_size);
}

void cp_async_chunk(char* dst, const char* src, unsigned bytes) { issue(dst, src, bytes, bytes); }

void cp_async_commit() { ++mine().committed; }

void cp_async_wait_group(unsigned long long n) {
  thread_copies& t = mine();
  if (t.committed > n) complete_through(t, t.committed - n);
}

void cp_async_wait_all() {
  thread_copies& t = mine();
  ++t.committed;
  complete_through(t, t.committed);
}

void reset_async_copies(std::size_t threads) {
  worker_copies& w = tl_copies;
  if (w.threads.size() < threads) w.threads.resize(threads);
  for (std::size_t i = 0; i < threads; ++i)
    if (w.threads[i].committed || !w.threads[i].q.empty()) clear(w.threads[i]);
}

}  // namespace leap_emu::ptx
