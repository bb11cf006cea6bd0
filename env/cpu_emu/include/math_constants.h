// Shim <math_constants.h> of leap's CUDA-on-CPU emulation: the CUDART_* constants.
// Included by emulated candidates only.
#pragma once
#include <cmath>
#define CUDART_INF_F HUGE_VALF
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_MIN_DENORM_F 1.40129846e-45f
#define CUDART_MAX_NORMAL_F 3.40282347e+38f
#define CUDART_NEG_ZERO_F (-0.0f)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_TWO_F 1.414213562f
#define CUDART_PI_F 3.141592654f
#define CUDART_PIO2_F 1.570796327f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_LN2_F 0.693147181f
#define CUDART_L2E_F 1.442695041f
#define CUDART_INF HUGE_VAL
#define CUDART_NAN __builtin_nan("")
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_PIO2 1.5707963267948966e+0
#define CUDART_LN2 6.9314718055994529e-1
#define CUDART_SQRT_2PI 2.5066282746310002e+0
