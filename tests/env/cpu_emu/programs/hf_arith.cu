// Paired half and bfloat16 arithmetic in kernels (__hadd2, operator-, __hmul2, __hfma2, __h2div,
// __hmax2/__hmin2, compares, and the __nv_bfloat162 equivalents), checked lane by lane against
// an exact host reference: half values are integers in units of 2^-72, so sums, products and
// a*b+c are exact in __int128 and rounded once to nearest even by searching a table of half
// values; bf16 operands are kept in [2^-10, 2^11) so a*b+c is exact in x87 long double; quotients
// come from double division (exact enough: a double holds more than twice the bits plus two).
// Also atomicAdd on __half2, __half and __nv_bfloat16 with sums every order gives alike.
// Prints PASS and exits 0 only when every value is what a GPU gives (nvcc -arch=sm_90).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

typedef __int128 i128;
static int failures = 0;
static void check(bool ok, const char* what, int i, unsigned got, unsigned want) {
  if (!ok && failures++ < 20) printf("FAIL %s at %d: got 0x%04x want 0x%04x\n", what, i, got, want);
}

// ---- reference -------------------------------------------------------------------------------
static i128 half_u24(uint16_t h) {  // value * 2^24, exact (< 2^40)
  int e = (h >> 10) & 31, f = h & 1023;
  i128 v = e == 0 ? (i128)f : (i128)(1024 + f) << (e - 1);
  return (h & 0x8000) ? -v : v;
}
static i128 half_units(uint16_t h) { return half_u24(h) * ((i128)1 << 48); }  // value * 2^72
static i128 product_units(uint16_t a, uint16_t b) { return half_u24(a) * half_u24(b) * ((i128)1 << 24); }
static std::vector<i128> half_table() {  // values of 0x0000 .. 0x7BFF, then 2^16 (infinity)
  std::vector<i128> t;
  for (int k = 0; k < 0x7C00; ++k) t.push_back(half_units((uint16_t)k));
  t.push_back((i128)1 << 88);
  return t;
}
static const std::vector<i128> H = half_table();
// Nearest-even rounding of v * 2^-72 to half; an exact zero takes the sign zero_neg.
static uint16_t round_units(i128 v, bool zero_neg) {
  if (v == 0) return zero_neg ? 0x8000 : 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  const i128 a = v < 0 ? -v : v;
  if (a >= H.back()) return sign | 0x7C00;
  size_t lo = 0, hi = H.size() - 1;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (H[mid] <= a) lo = mid; else hi = mid - 1;
  }
  if (H[lo] == a) return sign | (uint16_t)lo;
  const i128 twice = 2 * a, mid2 = H[lo] + H[lo + 1];
  const size_t r = twice < mid2 ? lo : twice > mid2 ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
  return sign | (uint16_t)r;  // lo + 1 == 0x7C00 is infinity
}
template <class V>
static uint16_t round_table(const std::vector<V>& t, uint16_t inf, V x) {  // generic, x finite
  const uint16_t sign = std::signbit((double)x) ? 0x8000 : 0;
  const V a = x < 0 ? -x : x;
  if (a >= t.back()) return sign | inf;
  size_t lo = 0, hi = t.size() - 1;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (t[mid] <= a) lo = mid; else hi = mid - 1;
  }
  if (t[lo] == a) return sign | (uint16_t)lo;
  const V mid = (t[lo] + t[lo + 1]) / 2;
  return sign | (uint16_t)(a < mid ? lo : a > mid ? lo + 1 : ((lo & 1) ? lo + 1 : lo));
}
static double half_double(uint16_t h) { return std::ldexp((double)half_units(h), -72); }
static std::vector<double> half_table_d() {
  std::vector<double> t;
  for (int k = 0; k < 0x7C00; ++k) t.push_back(half_double((uint16_t)k));
  t.push_back(65536.0);
  return t;
}
static long double bf16_value(uint16_t h) {
  int e = (h >> 7) & 255, f = h & 127;
  long double v = e == 0 ? std::ldexp((long double)f, -133) : std::ldexp(1.0L + f / 128.0L, e - 127);
  return (h & 0x8000) ? -v : v;
}
static std::vector<long double> bf16_table() {
  std::vector<long double> t;
  for (int k = 0; k < 0x7F80; ++k) t.push_back(bf16_value((uint16_t)k));
  t.push_back(std::ldexp(1.0L, 128));
  return t;
}

// ---- kernels ---------------------------------------------------------------------------------
const int NOPS = 10;
__global__ void half_ops(const half2* a, const half2* b, const half2* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const half2 x = a[i], y = b[i], z = c[i];
  half2 r[NOPS - 1] = {__hadd2(x, y), x - y, __hmul2(x, y), __hfma2(x, y, z), __h2div(x, y), __hmax2(x, y), __hmin2(x, y), -x};
  for (int k = 0; k < 8; ++k) out[i * NOPS + k] = __half_as_ushort(r[k].x) | (unsigned)__half_as_ushort(r[k].y) << 16;
  const half2 ge = __hge2(x, y);
  out[i * NOPS + 8] = __hlt2_mask(x, y);
  out[i * NOPS + 9] = (__hbeq2(x, x) ? 1u : 0u) | (__low2float(ge) == 1.0f ? 2u : 0u) | (__high2float(ge) == 1.0f ? 4u : 0u);
}
__global__ void bf16_ops(const nv_bfloat162* a, const nv_bfloat162* b, const nv_bfloat162* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const nv_bfloat162 x = a[i], y = b[i], z = c[i];
  nv_bfloat162 r[5] = {__hadd2(x, y), x - y, __hmul2(x, y), __hfma2(x, y, z), x / y};
  for (int k = 0; k < 5; ++k) out[i * 5 + k] = __bfloat16_as_ushort(r[k].x) | (unsigned)__bfloat16_as_ushort(r[k].y) << 16;
}
__global__ void atomics(half2* h2, __half* h, __nv_bfloat16* b) {
  atomicAdd(h2, __floats2half2_rn(1.0f, 0.25f));
  atomicAdd(h, __float2half(0.5f));
  atomicAdd(b, __float2bfloat16(1.0f));
}

static uint32_t rnd_state = 2463534242u;
static uint32_t next_rand() {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 17;
  rnd_state ^= rnd_state << 5;
  return rnd_state;
}
// A finite half: any exponent (kind 0) or a moderate one, 2^-6 .. 2^6 (kind 1).
static uint16_t some_half(int kind) {
  const uint32_t r = next_rand();
  const uint32_t e = kind == 0 ? r % 31 : 9 + r % 12;
  return (uint16_t)((r >> 16 & 0x8000) | e << 10 | (r >> 5 & 1023));
}

int main() {
  const int n = 1 << 16, lanes = 2 * n;
  std::vector<uint16_t> A(lanes), B(lanes), C(lanes);
  for (int i = 0; i < lanes; ++i) {
    const int cat = i % 4;
    A[i] = some_half(cat != 0);
    B[i] = some_half(cat != 0);
    if (cat == 1) {  // c close to -a*b: cancellation
      C[i] = round_units(-product_units(A[i], B[i]), false) ^ (uint16_t)(next_rand() % 3);
    } else if (cat == 2) {  // tiny c: a*b + c next to a rounding midpoint
      C[i] = (uint16_t)((next_rand() & 0x8000) | (next_rand() % 4));
    } else {
      C[i] = some_half(cat != 0);
    }
  }
  half2 *da, *db, *dc;
  unsigned* dout;
  cudaMalloc(&da, lanes * 2);
  cudaMalloc(&db, lanes * 2);
  cudaMalloc(&dc, lanes * 2);
  cudaMalloc(&dout, (size_t)n * NOPS * 4);
  cudaMemcpy(da, A.data(), lanes * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, B.data(), lanes * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, C.data(), lanes * 2, cudaMemcpyHostToDevice);
  half_ops<<<n / 256, 256>>>(da, db, dc, dout, n);
  std::vector<unsigned> out((size_t)n * NOPS);
  cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost);
  const std::vector<double> HD = half_table_d();
  const char* names[] = {"__hadd2", "operator-", "__hmul2", "__hfma2", "__h2div", "__hmax2", "__hmin2", "unary -"};
  for (int i = 0; i < lanes; ++i) {
    const uint16_t a = A[i], b = B[i], c = C[i];
    const bool na = a >> 15, nb = b >> 15, nc = c >> 15;
    const i128 ua = half_units(a), ub = half_units(b), uc = half_units(c), p = product_units(a, b);  // exact
    const double qa = half_double(a), qb = half_double(b);
    uint16_t want[8];
    want[0] = round_units(ua + ub, na && nb);
    want[1] = round_units(ua - ub, na && !nb);
    want[2] = round_units(p, na != nb);
    want[3] = round_units(p + uc, (na != nb) && nc);
    if (qb == 0) want[4] = qa == 0 ? 0x7FFF : (uint16_t)(((na != nb) ? 0x8000 : 0) | 0x7C00);
    else want[4] = round_table(HD, 0x7C00, qa / qb);
    want[5] = qa > qb ? a : qb > qa ? b : 0xFFFF;  // equal values (+0/-0): not checked here
    want[6] = qa < qb ? a : qb < qa ? b : 0xFFFF;
    want[7] = a ^ 0x8000;
    const unsigned* o = &out[(size_t)(i / 2) * NOPS];
    for (int k = 0; k < 8; ++k) {
      const uint16_t g = (uint16_t)(o[k] >> (16 * (i & 1)));
      if (want[k] == 0xFFFF) continue;
      if (k == 4 && qa == 0 && qb == 0) { check((g & 0x7C00) == 0x7C00 && (g & 0x3FF), "0/0 is NaN", i, g, 0x7FFF); continue; }
      if (g != want[k] && failures < 20) printf("  lane %d: a=0x%04x b=0x%04x c=0x%04x\n", i, a, b, c);
      check(g == want[k], names[k], i, g, want[k]);
    }
    const unsigned m = o[8];
    check(((m >> (16 * (i & 1))) & 0xFFFF) == (qa < qb ? 0xFFFFu : 0u), "__hlt2_mask", i, m, qa < qb);
    const unsigned g = o[9];
    check((g & 1) == 1 && ((g >> (1 + (i & 1))) & 1) == (qa >= qb), "__hbeq2/__hge2", i, g, qa >= qb);
  }

  // bfloat162: operands in [2^-10, 2^11), either sign.
  const std::vector<long double> BT = bf16_table();
  std::vector<uint16_t> X(lanes), Y(lanes), Z(lanes);
  for (int i = 0; i < lanes; ++i) {
    uint16_t* v[3] = {&X[i], &Y[i], &Z[i]};
    for (uint16_t* p : v) {
      const uint32_t r = next_rand();
      *p = (uint16_t)((r & 0x8000) | (117 + (r >> 16) % 21) << 7 | (r >> 4 & 127));
    }
  }
  cudaMemcpy(da, X.data(), lanes * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, Y.data(), lanes * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, Z.data(), lanes * 2, cudaMemcpyHostToDevice);
  bf16_ops<<<n / 256, 256>>>((nv_bfloat162*)da, (nv_bfloat162*)db, (nv_bfloat162*)dc, dout, n);
  cudaMemcpy(out.data(), dout, (size_t)n * 5 * 4, cudaMemcpyDeviceToHost);
  const char* bnames[] = {"bf16 __hadd2", "bf16 operator-", "bf16 __hmul2", "bf16 __hfma2", "bf16 operator/"};
  for (int i = 0; i < lanes; ++i) {
    const long double x = bf16_value(X[i]), y = bf16_value(Y[i]), z = bf16_value(Z[i]);
    const long double exact[5] = {x + y, x - y, x * y, x * y + z, (long double)((double)x / (double)y)};
    for (int k = 0; k < 5; ++k) {
      const uint16_t g = (uint16_t)(out[(size_t)(i / 2) * 5 + k] >> (16 * (i & 1)));
      const uint16_t w = exact[k] == 0 ? 0 : round_table(BT, 0x7F80, exact[k]);  // no -0 here: x + y = 0 is +0
      check(g == w, bnames[k], i, g, w);
    }
  }

  // atomics: 1024 threads; every order gives the same sums (exact up to the point they stop)
  half2* dh2;
  __half* dh;
  __nv_bfloat16* dbf;
  cudaMalloc(&dh2, 4);
  cudaMalloc(&dh, 2);
  cudaMalloc(&dbf, 2);
  cudaMemset(dh2, 0, 4);
  cudaMemset(dh, 0, 2);
  cudaMemset(dbf, 0, 2);
  atomics<<<4, 256>>>(dh2, dh, dbf);
  uint16_t ah2[2], ah, abf;
  cudaMemcpy(ah2, dh2, 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(&ah, dh, 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(&abf, dbf, 2, cudaMemcpyDeviceToHost);
  check(ah2[0] == 0x6400 && ah2[1] == 0x5C00, "atomicAdd half2 (1024, 256)", 0, ah2[0] | ah2[1] << 16, 0x5C006400);
  check(ah == 0x6000, "atomicAdd half (512)", 0, ah, 0x6000);
  check(abf == 0x4380, "atomicAdd bf16 (stops at 256)", 0, abf, 0x4380);
  printf("checked %d half lanes x 10 operations, %d bf16 lanes x 5, 3 atomics\n", lanes, lanes);
  if (failures) {
    printf("FAIL: %d mismatches\n", failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
