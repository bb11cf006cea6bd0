// CUDA built-in vector types (char1..double4, dim3, uint3) and their make_* helpers for the
// CPU emulation. Included by the shim <cuda_runtime.h>; candidates and the harness may use the
// types from any thread. Alignments match CUDA so reinterpret_cast<float4*> loads behave alike.
#pragma once

#define LEAP_EMU_VEC1(T, N, A)                                                                  \
  struct __attribute__((aligned(A))) N##1 { T x; };                                            \
  static inline constexpr N##1 make_##N##1(T x) { return N##1{x}; }
#define LEAP_EMU_VEC2(T, N, A)                                                                  \
  struct __attribute__((aligned(A))) N##2 { T x, y; };                                         \
  static inline constexpr N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define LEAP_EMU_VEC3(T, N)                                                                     \
  struct N##3 { T x, y, z; };                                                                  \
  static inline constexpr N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define LEAP_EMU_VEC4(T, N, A)                                                                  \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                                   \
  static inline constexpr N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }

// type, name, align of 1, of 2, of 4 (CUDA's vector_types.h values)
#define LEAP_EMU_VEC_ALL(T, N, A1, A2, A4) \
  LEAP_EMU_VEC1(T, N, A1) LEAP_EMU_VEC2(T, N, A2) LEAP_EMU_VEC3(T, N) LEAP_EMU_VEC4(T, N, A4)

LEAP_EMU_VEC_ALL(signed char, char, 1, 2, 4)
LEAP_EMU_VEC_ALL(unsigned char, uchar, 1, 2, 4)
LEAP_EMU_VEC_ALL(short, short, 2, 4, 8)
LEAP_EMU_VEC_ALL(unsigned short, ushort, 2, 4, 8)
LEAP_EMU_VEC_ALL(int, int, 4, 8, 16)
LEAP_EMU_VEC_ALL(unsigned int, uint, 4, 8, 16)
LEAP_EMU_VEC_ALL(long, long, 8, 16, 16)
LEAP_EMU_VEC_ALL(unsigned long, ulong, 8, 16, 16)
LEAP_EMU_VEC_ALL(long long, longlong, 8, 16, 16)
LEAP_EMU_VEC_ALL(unsigned long long, ulonglong, 8, 16, 16)
LEAP_EMU_VEC_ALL(float, float, 4, 8, 16)
LEAP_EMU_VEC_ALL(double, double, 8, 16, 16)

#undef LEAP_EMU_VEC_ALL
#undef LEAP_EMU_VEC1
#undef LEAP_EMU_VEC2
#undef LEAP_EMU_VEC3
#undef LEAP_EMU_VEC4

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
