// Volatile pointers of the emulation. The rewriter turns `volatile T*` into ::leap_emu::vptr<T>,
// whose element accesses call lockstep_point first: the lanes of a warp then take turns access
// by access, so the classic pre-Volta reduction tail (`vs[tid] += vs[tid + 16]` on volatile
// shared memory, no __syncwarp) reads what the other lanes wrote one step earlier, as on a GPU.
// - T arithmetic: an element is a vref<T>, one lockstep point per read and per write.
// - T a class or union (user accumulators with volatile-qualified operators): an element is the
//   real `volatile T&`, so member access, the user's operators and `T(volatile T&)` copies work
//   as on a GPU; the lockstep point is taken when the element is reached (indexing, `*`, `->`),
//   so the reads of one statement happen in the pass after its last element was reached, before
//   any lane's write of the next element (lockstep_reach below says how writes are noticed).
// Used by kernel code (worker threads) and host code alike (no yield outside a kernel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "leap_emu/sync.h"
#include "leap_emu/state.h"

// Number of launches so far (leap_emu/api.h): tells a lane's records of one launch from the last.
extern "C" long leap_emu_launch_count(void);

namespace leap_emu {

template <class T>
class vref {
 public:
  explicit vref(volatile T* p) : p_(p) {}
  vref(const vref&) = default;
  operator T() const {
    detail::lockstep_point(false);
    return *p_;
  }
  vref& operator=(T v) {
    detail::lockstep_point(true);
    *p_ = v;
    return *this;
  }
  vref& operator=(const vref& o) { return *this = static_cast<T>(o); }
  volatile T* operator&() const { return p_; }
#define LEAP_EMU_VREF_OP(OP)            \
  vref& operator OP##=(T v) {           \
    T cur = static_cast<T>(*this);      \
    return *this = static_cast<T>(cur OP v); \
  }
  LEAP_EMU_VREF_OP(+)
  LEAP_EMU_VREF_OP(-)
  LEAP_EMU_VREF_OP(*)
  LEAP_EMU_VREF_OP(/)
#undef LEAP_EMU_VREF_OP
#define LEAP_EMU_VREF_IOP(OP)                                          \
  template <class U = T>                                               \
  vref& operator OP##=(U v) {                                          \
    T cur = static_cast<T>(*this);                                     \
    return *this = static_cast<T>(cur OP v);                           \
  }
  LEAP_EMU_VREF_IOP(%)
  LEAP_EMU_VREF_IOP(&)
  LEAP_EMU_VREF_IOP(|)
  LEAP_EMU_VREF_IOP(^)
  LEAP_EMU_VREF_IOP(<<)
  LEAP_EMU_VREF_IOP(>>)
#undef LEAP_EMU_VREF_IOP
  vref& operator++() { return *this += T(1); }
  vref& operator--() { return *this -= T(1); }
  T operator++(int) {
    T old = static_cast<T>(*this);
    *this = static_cast<T>(old + T(1));
    return old;
  }
  T operator--(int) {
    T old = static_cast<T>(*this);
    *this = static_cast<T>(old - T(1));
    return old;
  }

 private:
  volatile T* p_;
};

namespace detail {
// What an element access through vptr<T> yields: kind 0 (arithmetic) a vref, kind 1 (class or
// union) the volatile reference itself.
template <class T>
constexpr int vptr_kind = (std::is_class_v<T> || std::is_union_v<T>) ? 1 : 0;

// Per-lane record of the class elements a lane reached last through vptrs (which block, where,
// a hash of their bytes taken when the lane resumed there). Only this lane runs between that
// moment and its next lockstep point, so a changed hash then means the lane wrote the element.
// Kept per worker thread, indexed by the thread's rank in the block.
struct lane_reaches {
  static constexpr int depth = 4;  // a statement reaches its written element within the last few
  long launch = 0;
  uint3 block{};
  int count = 0;
  const volatile void* at[depth] = {};
  std::size_t size[depth] = {};
  std::uint64_t hash[depth] = {};
};

// A hash of n bytes at p, 8 at a time (the lane's own snapshot: no other fiber runs meanwhile).
inline std::uint64_t volatile_bytes_hash(const volatile void* p, std::size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(const_cast<const void*>(p));
  std::uint64_t h = 1469598103934665603ull ^ n;
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + k, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; k < n; ++k) h = (h ^ b[k]) * 1099511628211ull;
  return h;
}

// A lane reaches a class element through a vptr: one lockstep point. The rule of lockstep_point
// (a volatile read after a volatile write with no sync between marks implicit warp sync) is
// applied one reach late, since a reference does not tell reads from writes: a reach after the
// lane wrote one of its recently reached elements counts as the read (it flags when a reach
// since the lane's last sync came before that write), any other reach as a possible write.
inline void lockstep_reach(const volatile void* e, std::size_t n) {
  static thread_local lane_reaches lanes[1024];
  const dim3 bd = tl_block_dim;
  const uint3 t = tl_thread_idx, blk = tl_block_idx;
  lane_reaches& r = lanes[(t.x + t.y * bd.x + t.z * bd.x * bd.y) % 1024];
  const long launch = leap_emu_launch_count();
  if (r.launch != launch || r.block.x != blk.x || r.block.y != blk.y || r.block.z != blk.z) {
    r.launch = launch;
    r.block = blk;
    r.count = 0;
  }
  bool wrote = false;
  for (int k = 0; k < r.count && !wrote; ++k) wrote = volatile_bytes_hash(r.at[k], r.size[k]) != r.hash[k];
  lockstep_point(!wrote);
  // Resumed: other lanes may have written meanwhile, so every record is hashed anew.
  if (r.count == lane_reaches::depth) {
    for (int k = 1; k < r.count; ++k) {
      r.at[k - 1] = r.at[k];
      r.size[k - 1] = r.size[k];
    }
    --r.count;
  }
  r.at[r.count] = e;
  r.size[r.count] = n;
  ++r.count;
  for (int k = 0; k < r.count; ++k) r.hash[k] = volatile_bytes_hash(r.at[k], r.size[k]);
}
}  // namespace detail

template <class T, int Kind = detail::vptr_kind<T>>
class vptr;

// Pointer arithmetic, comparisons and conversions shared by every kind; D is the derived vptr.
template <class T, class D>
class vptr_base {
 public:
  vptr_base() = default;
  vptr_base(std::nullptr_t) {}
  vptr_base(volatile T* p) : p_(p) {}
  template <class U>
  explicit vptr_base(U* p) : p_((volatile T*)(p)) {}
  // vptr<T> to vptr<const T>, as `volatile T*` converts to `const volatile T*`
  template <class U, int K, class = std::enable_if_t<std::is_convertible_v<volatile U*, volatile T*>>>
  vptr_base(const vptr<U, K>& o) : p_(static_cast<volatile U*>(o)) {}
  operator volatile T*() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  D operator+(std::ptrdiff_t i) const { return D(p_ + i); }
  D operator-(std::ptrdiff_t i) const { return D(p_ - i); }
  std::ptrdiff_t operator-(const vptr_base& o) const { return p_ - o.p_; }
  D& operator+=(std::ptrdiff_t i) { p_ += i; return self(); }
  D& operator-=(std::ptrdiff_t i) { p_ -= i; return self(); }
  D& operator++() { ++p_; return self(); }
  D& operator--() { --p_; return self(); }
  D operator++(int) { D o(p_); ++p_; return o; }
  D operator--(int) { D o(p_); --p_; return o; }
  friend D operator+(std::ptrdiff_t i, const D& p) { return p + i; }
  friend bool operator==(const D& a, const D& b) { return a.p_ == b.p_; }
  friend bool operator!=(const D& a, const D& b) { return a.p_ != b.p_; }
  friend bool operator<(const D& a, const D& b) { return a.p_ < b.p_; }

 protected:
  volatile T* p_ = nullptr;

 private:
  D& self() { return static_cast<D&>(*this); }
};

template <class T>
class vptr<T, 0> : public vptr_base<T, vptr<T, 0>> {
  using base = vptr_base<T, vptr<T, 0>>;

 public:
  using base::base;
  vref<T> operator*() const { return vref<T>(this->p_); }
  vref<T> operator[](std::ptrdiff_t i) const { return vref<T>(this->p_ + i); }
};

template <class T>
class vptr<T, 1> : public vptr_base<T, vptr<T, 1>> {
  using base = vptr_base<T, vptr<T, 1>>;

 public:
  using base::base;
  volatile T& operator*() const { return reach(this->p_); }
  volatile T& operator[](std::ptrdiff_t i) const { return reach(this->p_ + i); }
  volatile T* operator->() const { return __builtin_addressof(reach(this->p_)); }

 private:
  static volatile T& reach(volatile T* e) {
    detail::lockstep_reach(static_cast<const volatile void*>(e), sizeof(T));
    return *e;
  }
};

}  // namespace leap_emu
