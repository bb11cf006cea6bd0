// Volatile pointers of the emulation. The rewriter turns `volatile T*` (T arithmetic) into
// ::leap_emu::vptr<T>, whose element accesses call lockstep_point first: the lanes of a warp
// then take turns access by access, so the classic pre-Volta reduction tail
// (`vs[tid] += vs[tid + 16]` on volatile shared memory, no __syncwarp) reads what the other
// lanes wrote one step earlier, as on a GPU. Used by kernel code (worker threads) and host
// code alike (no yield outside a kernel).
#pragma once

#include <cstddef>

#include "leap_emu/sync.h"

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

template <class T>
class vptr {
 public:
  vptr() = default;
  vptr(std::nullptr_t) {}
  vptr(volatile T* p) : p_(p) {}
  template <class U>
  explicit vptr(U* p) : p_((volatile T*)(p)) {}
  operator volatile T*() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  vref<T> operator*() const { return vref<T>(p_); }
  vref<T> operator[](std::ptrdiff_t i) const { return vref<T>(p_ + i); }
  vptr operator+(std::ptrdiff_t i) const { return vptr(p_ + i); }
  vptr operator-(std::ptrdiff_t i) const { return vptr(p_ - i); }
  std::ptrdiff_t operator-(const vptr& o) const { return p_ - o.p_; }
  vptr& operator+=(std::ptrdiff_t i) { p_ += i; return *this; }
  vptr& operator-=(std::ptrdiff_t i) { p_ -= i; return *this; }
  vptr& operator++() { ++p_; return *this; }
  vptr& operator--() { --p_; return *this; }
  vptr operator++(int) { vptr o = *this; ++p_; return o; }
  vptr operator--(int) { vptr o = *this; --p_; return o; }
  friend vptr operator+(std::ptrdiff_t i, const vptr& p) { return p + i; }
  friend bool operator==(const vptr& a, const vptr& b) { return a.p_ == b.p_; }
  friend bool operator!=(const vptr& a, const vptr& b) { return a.p_ != b.p_; }
  friend bool operator<(const vptr& a, const vptr& b) { return a.p_ < b.p_; }

 private:
  volatile T* p_ = nullptr;
};

}  // namespace leap_emu
