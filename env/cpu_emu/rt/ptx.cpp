// The emulation's inline-PTX runtime (leap_emu/ptx.h): shared-window addresses and cp.async.
// Runs on worker threads (kernel code); the encoding is per worker thread.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "leap_emu/ptx.h"
#include "leap_emu/rt_internal.h"
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

void cp_async(std::uint64_t dst_shared, const char* src, unsigned cp_size, unsigned src_size) {
  char* dst = static_cast<char*>(from_shared(dst_shared));
  if (cp_size != 4 && cp_size != 8 && cp_size != 16)
    detail::device_trap("cp.async with a copy size other than 4, 8 or 16 bytes");
  if (reinterpret_cast<std::uintptr_t>(dst) % cp_size != 0 || reinterpret_cast<std::uintptr_t>(src) % cp_size != 0) {
    char what[160];
    std::snprintf(what, sizeof what, "misaligned address: cp.async of %u bytes from %p to shared %p", cp_size,
                  static_cast<const void*>(src), static_cast<void*>(dst));
    detail::device_trap(what);
  }
  const unsigned n = src_size < cp_size ? src_size : cp_size;
  std::memcpy(dst, src, n);
  if (n < cp_size) std::memset(dst + n, 0, cp_size - n);
}

}  // namespace leap_emu::ptx
