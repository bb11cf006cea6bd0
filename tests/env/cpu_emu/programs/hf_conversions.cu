// Half and bfloat16 conversions, checked against hand-derived bit patterns and against an
// independent host reference: every one of the 65536 half patterns widened to float, and a
// sweep of floats (each half's neighbours and rounding midpoints, plus pseudo-random floats)
// narrowed to half and bfloat16 in the four rounding modes. The reference finds the two
// representable neighbours of a float by binary search over a table of the format's values and
// compares with their exact midpoint (IEEE: ties to even, subnormals kept, overflow to inf).
// Prints PASS and exits 0 only when every value is what a GPU gives (nvcc -arch=sm_90).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;
static void check(bool ok, const char* what, unsigned long long got, unsigned long long want) {
  if (!ok && failures++ < 20) printf("FAIL %s: got 0x%llx want 0x%llx\n", what, got, want);
}
static float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// ---- host reference ------------------------------------------------------------------------
// Value of a half pattern, from its fields: (-1)^s * 2^(e-15) * (1 + f/1024), subnormal f * 2^-24.
static double half_value(uint16_t h) {
  int e = (h >> 10) & 31, f = h & 1023;
  double v = e == 0 ? std::ldexp((double)f, -24) : std::ldexp(1.0 + f / 1024.0, e - 15);
  return (h & 0x8000) ? -v : v;
}
static double bf16_value(uint16_t h) {
  int e = (h >> 7) & 255, f = h & 127;
  double v = e == 0 ? std::ldexp((double)f, -133) : std::ldexp(1.0 + f / 128.0, e - 127);
  return (h & 0x8000) ? -v : v;
}
struct table {
  std::vector<double> v;  // v[k]: value of pattern k, k = 0 .. largest finite; then the value the
  uint16_t inf;           // next pattern would have (2^16 resp. 2^128), which is infinity
};
static table make_table(bool bf) {
  table t;
  t.inf = bf ? 0x7F80 : 0x7C00;
  for (uint16_t k = 0; k < t.inf; ++k) t.v.push_back(bf ? bf16_value(k) : half_value(k));
  t.v.push_back(bf ? std::ldexp(1.0, 128) : 65536.0);
  return t;
}
enum mode { RN, RZ, RD, RU };
// Rounds the finite float x to the format of t.
static uint16_t ref_round(const table& t, float x, mode m) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs((double)x);
  if (sign && m == RD) m = RU; else if (sign && m == RU) m = RD;  // work on the magnitude
  if (a >= t.v.back()) return sign | (m == RN || m == RU ? t.inf : t.inf - 1);  // beyond the largest finite
  size_t lo = 0, hi = t.v.size() - 1;  // largest k with v[k] <= a
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (t.v[mid] <= a) lo = mid; else hi = mid - 1;
  }
  if (t.v[lo] == a) return sign | (uint16_t)lo;
  const size_t up = lo + 1;
  size_t r = lo;
  if (m == RU) r = up;
  if (m == RN) {
    const double mid = (t.v[lo] + t.v[up]) / 2;  // exact in double
    r = a < mid ? lo : a > mid ? up : ((lo & 1) ? up : lo);
  }
  return sign | (uint16_t)r;
}

// ---- kernels -----------------------------------------------------------------------------
__global__ void widen(const unsigned short* h, const unsigned short* b, float* hf, float* bf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    hf[i] = __half2float(__ushort_as_half(h[i]));
    bf[i] = __bfloat162float(__ushort_as_bfloat16(b[i]));
  }
}
__global__ void narrow(const float* x, unsigned short* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float f = x[i];
  unsigned short* o = out + 8 * i;
  o[0] = __half_as_ushort(__float2half_rn(f));
  o[1] = __half_as_ushort(__float2half_rz(f));
  o[2] = __half_as_ushort(__float2half_rd(f));
  o[3] = __half_as_ushort(__float2half_ru(f));
  o[4] = __bfloat16_as_ushort(__float2bfloat16_rn(f));
  o[5] = __bfloat16_as_ushort(__float2bfloat16_rz(f));
  o[6] = __bfloat16_as_ushort(__float2bfloat16_rd(f));
  o[7] = __bfloat16_as_ushort(__float2bfloat16_ru(f));
}
// Hand-derived cases: conversions with every spelling (functions, constructors, operators).
__global__ void fixed(const float* in, unsigned int* out) {
  int k = 0;
  out[k++] = __half_as_ushort(__float2half(in[0]));         // 1.0
  out[k++] = __half_as_ushort(__half(in[1]));                // 65504
  out[k++] = __half_as_ushort(__float2half_rn(in[2]));      // 65520
  out[k++] = __half_as_ushort(__float2half(in[3]));         // 2^-24
  out[k++] = __half_as_ushort(__float2half(in[4]));         // 2049
  out[k++] = __half_as_ushort(__float2half(in[5]));         // 2051
  out[k++] = __half_as_ushort(__float2half(in[6]));         // 2^-25 (tie with 0)
  out[k++] = __half_as_ushort(__float2half(-in[2]));        // -65520
  out[k++] = __half_as_ushort(__float2half_rz(in[2]));      // 65520 toward zero
  out[k++] = __half_as_ushort(__float2half_rd(-in[7]));     // -(1 + 2^-11) down
  out[k++] = __half_as_ushort(__float2half_ru(in[7]));      // 1 + 2^-11 up
  out[k++] = __half_as_ushort(__float2half_rn(in[7]));      // tie: to even
  out[k++] = __bfloat16_as_ushort(__float2bfloat16(in[0]));  // 1.0
  out[k++] = __bfloat16_as_ushort(__float2bfloat16_rn(in[8]));  // 1 + 2^-8: tie to even
  out[k++] = __bfloat16_as_ushort(__float2bfloat16_rn(in[9]));  // 1 + 3 * 2^-8: tie to even (up)
  out[k++] = __bfloat16_as_ushort(__float2bfloat16(in[10]));   // NaN
  out[k++] = __bfloat16_as_ushort(__nv_bfloat16(in[11]));      // FLT_MAX: to inf
  out[k++] = __half_as_ushort(__int2half_rn((int)in[4]));      // 2049 as an int
  out[k++] = __half_as_ushort(__int2half_rn(65520));
  out[k++] = (unsigned)__half2int_rn(__float2half(2.5f));
  out[k++] = (unsigned)__half2int_rn(__float2half(3.5f));
  out[k++] = (unsigned)__half2int_rz(__float2half(-2.75f));
  out[k++] = (unsigned)__half2int_rd(__float2half(-2.25f));
  out[k++] = (unsigned)__half2int_ru(__float2half(2.25f));
  out[k++] = (unsigned)(unsigned short)__half2short_rz(__float2half(40000.0f));  // saturates
  out[k++] = (unsigned)__hisnan(__float2half(in[10])) | (unsigned)__hisinf(__float2half(in[2])) << 1;
  out[k++] = __half_as_ushort(__habs(__float2half(-in[0])));
  half2 p = __floats2half2_rn(in[0], in[4]);
  out[k++] = __half_as_ushort(__low2half(p)) | (unsigned)__half_as_ushort(__high2half(p)) << 16;
  float2 w = __half22float2(__float22half2_rn(make_float2(in[5], -in[3])));
  out[k++] = __float_as_uint(w.x) == __float_as_uint(2052.0f) && w.y == -in[3];
  out[k++] = __low2float(p) == 1.0f && __high2float(p) == 2048.0f;
  __half h = 2049;       // int constructor
  float back = h;        // operator float
  out[k++] = __half_as_ushort(h) | (unsigned)(back == 2048.0f) << 16;
  out[k++] = __bfloat16_as_ushort(__nv_bfloat16(__float2half(in[5])));  // half 2052 to bf16: 2048
  out[k++] = __half_as_ushort(__half(__float2bfloat16(in[0])));
}

int main() {
  // 1. Fixed cases.
  const float in[12] = {1.0f, 65504.0f, 65520.0f, std::ldexp(1.0f, -24), 2049.0f, 2051.0f, std::ldexp(1.0f, -25),
                        1.0f + std::ldexp(1.0f, -11), from_bits(0x3F808000), from_bits(0x3F818000), NAN, from_bits(0x7F7FFFFF)};
  const unsigned want[] = {0x3C00, 0x7BFF, 0x7C00, 0x0001, 0x6800, 0x6802, 0x0000, 0xFC00, 0x7BFF, 0xBC01, 0x3C01, 0x3C00,
                           0x3F80, 0x3F80, 0x3F82, 0 /* NaN */, 0x7F80, 0x6800, 0x7C00, 2, 4, (unsigned)-2, (unsigned)-3,
                           3, 32767, 3, 0x3C00, 0x6800u << 16 | 0x3C00, 1, 1, 0x16800, 0x4500, 0x3C00};
  const int nfixed = sizeof(want) / sizeof(want[0]);
  float* d_in;
  unsigned* d_out;
  cudaMalloc(&d_in, sizeof in);
  cudaMalloc(&d_out, nfixed * 4);
  cudaMemcpy(d_in, in, sizeof in, cudaMemcpyHostToDevice);
  fixed<<<1, 1>>>(d_in, d_out);
  std::vector<unsigned> got(nfixed);
  cudaMemcpy(got.data(), d_out, nfixed * 4, cudaMemcpyDeviceToHost);
  for (int k = 0; k < nfixed; ++k) {
    char what[32];
    snprintf(what, sizeof what, "fixed case %d", k);
    if (k == 15) check((got[k] & 0x7F80) == 0x7F80 && (got[k] & 0x7F) != 0, "bf16 of NaN is NaN", got[k], 0x7FFF);
    else check(got[k] == want[k], what, got[k], want[k]);
  }

  // 2. All 65536 half and bfloat16 patterns widened to float.
  const int n16 = 65536;
  std::vector<unsigned short> pat(n16);
  for (int i = 0; i < n16; ++i) pat[i] = (unsigned short)i;
  unsigned short *d_h;
  float *d_hf, *d_bf;
  cudaMalloc(&d_h, n16 * 2);
  cudaMalloc(&d_hf, n16 * 4);
  cudaMalloc(&d_bf, n16 * 4);
  cudaMemcpy(d_h, pat.data(), n16 * 2, cudaMemcpyHostToDevice);
  widen<<<n16 / 256, 256>>>(d_h, d_h, d_hf, d_bf, n16);
  std::vector<float> hf(n16), bfv(n16);
  cudaMemcpy(hf.data(), d_hf, n16 * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(bfv.data(), d_bf, n16 * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n16; ++i) {
    const bool hnan = ((i >> 10) & 31) == 31 && (i & 1023), bnan = ((i >> 7) & 255) == 255 && (i & 127);
    const bool hinf = ((i >> 10) & 31) == 31 && !(i & 1023), binf = ((i >> 7) & 255) == 255 && !(i & 127);
    const float hw = hinf ? ((i & 0x8000) ? -INFINITY : INFINITY) : (float)half_value((uint16_t)i);
    const float bw = binf ? ((i & 0x8000) ? -INFINITY : INFINITY) : (float)bf16_value((uint16_t)i);
    if (hnan) check(std::isnan(hf[i]), "half NaN widens to NaN", to_bits(hf[i]), i);
    else check(to_bits(hf[i]) == to_bits(hw), "half to float", to_bits(hf[i]), to_bits(hw));
    if (bnan) check(std::isnan(bfv[i]), "bf16 NaN widens to NaN", to_bits(bfv[i]), i);
    else check(to_bits(bfv[i]) == to_bits(bw), "bf16 to float", to_bits(bfv[i]), to_bits(bw));
  }

  // 3. Floats narrowed in four modes: every finite half's value, its float neighbours, the
  // midpoint to the next half and that midpoint's float neighbours; bf16 likewise for every
  // 16th bf16; then pseudo-random float patterns (all exponents).
  const table th = make_table(false), tb = make_table(true);
  std::vector<float> xs;
  auto around = [&](double v, double next) {
    const float f = (float)v, m = (float)((v + next) / 2);
    for (float g : {f, std::nextafter(f, INFINITY), std::nextafter(f, -INFINITY), m, std::nextafter(m, INFINITY),
                    std::nextafter(m, -INFINITY)}) {
      xs.push_back(g);
      xs.push_back(-g);
    }
  };
  for (size_t k = 0; k + 1 < th.v.size(); ++k) around(th.v[k], th.v[k + 1]);
  for (size_t k = 0; k + 1 < tb.v.size(); k += 16) around(tb.v[k], tb.v[k + 1]);
  uint32_t s = 12345;
  for (int i = 0; i < (1 << 19); ++i) {
    s = s * 1664525u + 1013904223u;
    uint32_t u = s ^ (s >> 13);
    if (((u >> 23) & 255) == 255) u &= 0xBFFFFFFF;  // finite only here (NaN, inf: fixed cases)
    xs.push_back(from_bits(u));
  }
  const int nx = (int)xs.size();
  float* d_x;
  unsigned short* d_o;
  cudaMalloc(&d_x, nx * 4);
  cudaMalloc(&d_o, (size_t)nx * 16);
  cudaMemcpy(d_x, xs.data(), nx * 4, cudaMemcpyHostToDevice);
  narrow<<<(nx + 255) / 256, 256>>>(d_x, d_o, nx);
  std::vector<unsigned short> o((size_t)nx * 8);
  cudaMemcpy(o.data(), d_o, (size_t)nx * 16, cudaMemcpyDeviceToHost);
  const char* names[8] = {"half rn", "half rz", "half rd", "half ru", "bf16 rn", "bf16 rz", "bf16 rd", "bf16 ru"};
  for (int i = 0; i < nx; ++i)
    for (int m = 0; m < 8; ++m) {
      const uint16_t w = ref_round(m < 4 ? th : tb, xs[i], (mode)(m % 4));
      const uint16_t g = o[(size_t)i * 8 + m];
      if (g != w && failures < 20) printf("  input %.9g (0x%08x)\n", xs[i], to_bits(xs[i]));
      check(g == w, names[m], g, w);
    }
  printf("checked %d fixed cases, %d widenings, %d floats x 8 narrowings\n", nfixed, 2 * n16, nx);
  if (failures) {
    printf("FAIL: %d mismatches\n", failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
