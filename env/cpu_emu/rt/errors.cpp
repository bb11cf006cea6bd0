// Error bookkeeping of the emulation runtime: last/sticky cudaError_t, the fatal message for
// leap_emu_fatal_error(), cudaGetErrorString/Name. Thread-safe.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "leap_emu/api.h"
#include "leap_emu/rt_internal.h"
#include "leap_emu/runtime_api.h"

namespace leap_emu::detail {
namespace {

std::atomic<int> g_last_error{cudaSuccess};
std::atomic<int> g_sticky_error{cudaSuccess};
std::mutex g_fatal_mutex;
std::string g_fatal_message;
std::atomic<bool> g_has_fatal{false};
std::string g_undefined_message;
std::atomic<bool> g_has_undefined{false};
std::atomic<bool> g_implicit_warp_sync{false};

}  // namespace

void set_last_error(cudaError_t e) { g_last_error.store(e); }

void record_fatal(cudaError_t e, const std::string& message, bool sticky) {
  {
    std::lock_guard<std::mutex> lock(g_fatal_mutex);
    if (!g_has_fatal.load()) {
      g_fatal_message = message;
      g_has_fatal.store(true);
      std::fprintf(stderr, "%s\n", message.c_str());
      std::fflush(stderr);
    }
  }
  if (sticky) {
    int expected = cudaSuccess;
    g_sticky_error.compare_exchange_strong(expected, e);
  }
  set_last_error(e);
}

void record_undefined(const std::string& message) {
  if (g_has_undefined.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_fatal_mutex);
  if (g_has_undefined.load()) return;
  g_undefined_message = message;
  g_has_undefined.store(true);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
}

void record_implicit_warp_sync() {
  if (!g_implicit_warp_sync.load(std::memory_order_relaxed)) g_implicit_warp_sync.store(true);
}

cudaError_t sticky_error() { return static_cast<cudaError_t>(g_sticky_error.load()); }

cudaError_t api_return(cudaError_t e) {
  cudaError_t s = sticky_error();
  if (s != cudaSuccess) return s;
  if (e != cudaSuccess) set_last_error(e);
  return e;
}

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (end == v || x < lo || x > hi) return fallback;
  return static_cast<int>(x);
}

std::string dim_string(const uint3& v) {
  return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}

}  // namespace leap_emu::detail

using namespace leap_emu::detail;

extern "C" const char* leap_emu_fatal_error(void) {
  if (!g_has_fatal.load()) return nullptr;
  std::lock_guard<std::mutex> lock(g_fatal_mutex);
  return g_fatal_message.c_str();
}

extern "C" const char* leap_emu_undefined_behaviour(void) {
  if (!g_has_undefined.load()) return nullptr;
  std::lock_guard<std::mutex> lock(g_fatal_mutex);
  return g_undefined_message.c_str();
}

extern "C" int leap_emu_implicit_warp_sync(void) { return g_implicit_warp_sync.load() ? 1 : 0; }

extern "C" cudaError_t cudaGetLastError(void) {
  cudaError_t s = sticky_error();
  if (s != cudaSuccess) return s;
  return static_cast<cudaError_t>(g_last_error.exchange(cudaSuccess));
}

extern "C" cudaError_t cudaPeekAtLastError(void) {
  cudaError_t s = sticky_error();
  if (s != cudaSuccess) return s;
  return static_cast<cudaError_t>(g_last_error.load());
}

extern "C" const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define LEAP_EMU_NAME(x) case x: return #x;
    LEAP_EMU_NAME(cudaSuccess)
    LEAP_EMU_NAME(cudaErrorInvalidValue)
    LEAP_EMU_NAME(cudaErrorMemoryAllocation)
    LEAP_EMU_NAME(cudaErrorInitializationError)
    LEAP_EMU_NAME(cudaErrorInvalidConfiguration)
    LEAP_EMU_NAME(cudaErrorInvalidPitchValue)
    LEAP_EMU_NAME(cudaErrorInvalidSymbol)
    LEAP_EMU_NAME(cudaErrorInvalidDevicePointer)
    LEAP_EMU_NAME(cudaErrorInvalidMemcpyDirection)
    LEAP_EMU_NAME(cudaErrorInvalidDeviceFunction)
    LEAP_EMU_NAME(cudaErrorNoDevice)
    LEAP_EMU_NAME(cudaErrorInvalidDevice)
    LEAP_EMU_NAME(cudaErrorInvalidResourceHandle)
    LEAP_EMU_NAME(cudaErrorNotReady)
    LEAP_EMU_NAME(cudaErrorIllegalAddress)
    LEAP_EMU_NAME(cudaErrorLaunchOutOfResources)
    LEAP_EMU_NAME(cudaErrorLaunchTimeout)
    LEAP_EMU_NAME(cudaErrorAssert)
    LEAP_EMU_NAME(cudaErrorLaunchFailure)
    LEAP_EMU_NAME(cudaErrorCooperativeLaunchTooLarge)
    LEAP_EMU_NAME(cudaErrorNotSupported)
    LEAP_EMU_NAME(cudaErrorUnknown)
#undef LEAP_EMU_NAME
  }
  return "cudaErrorUnknown";
}

extern "C" const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
  }
  return "unrecognized error code";
}
