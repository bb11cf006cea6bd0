// Device queries, streams and events of the emulation: one sm_90-like device, dummy stream
// handles (launches are synchronous), events that record host time. Thread-safe.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>

#include "leap_emu/rt_internal.h"
#include "leap_emu/runtime_api.h"

struct CUevent_st {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};

namespace {

std::atomic<std::size_t> g_dyn_smem_limit{48 * 1024};
constexpr std::size_t k_smem_optin = 227 * 1024;

std::mutex g_events_mutex;
std::deque<CUevent_st>& events() {
  static std::deque<CUevent_st> e;
  return e;
}

cudaStream_t new_stream_handle() {
  static std::atomic<std::uintptr_t> next{0x1000};
  return reinterpret_cast<cudaStream_t>(next.fetch_add(0x10));
}

}  // namespace

namespace leap_emu::detail {
std::size_t max_dynamic_smem() { return g_dyn_smem_limit.load(); }
}  // namespace leap_emu::detail

using namespace leap_emu::detail;

extern "C" cudaError_t cudaDeviceSynchronize(void) { return sticky_error(); }
extern "C" cudaError_t cudaThreadSynchronize(void) { return sticky_error(); }
extern "C" cudaError_t cudaDeviceReset(void) { return sticky_error(); }
extern "C" cudaError_t cudaSetDevice(int device) { return api_return(device == 0 ? cudaSuccess : cudaErrorInvalidDevice); }
extern "C" cudaError_t cudaGetDevice(int* device) {
  if (device) *device = 0;
  return cudaSuccess;
}
extern "C" cudaError_t cudaGetDeviceCount(int* count) {
  if (count) *count = 1;
  return cudaSuccess;
}
extern "C" cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (!p) return api_return(cudaErrorInvalidValue);
  if (device != 0) return api_return(cudaErrorInvalidDevice);
  std::memset(p, 0, sizeof(*p));
  std::strncpy(p->name, "leap CPU emulation (sm_90-like)", sizeof(p->name) - 1);
  p->totalGlobalMem = std::size_t(16) << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = std::size_t(1) << 31;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->clockRate = 1980000;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->deviceOverlap = 1;
  p->multiProcessorCount = 132;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 3;
  p->unifiedAddressing = 1;
  p->memoryClockRate = 2619000;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->sharedMemPerMultiprocessor = 228 * 1024;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = k_smem_optin;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  return cudaSuccess;
}
extern "C" cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return api_return(cudaErrorInvalidValue);
  if (device != 0) return api_return(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxBlockDimX: *value = 1024; break;
    case cudaDevAttrMaxBlockDimY: *value = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *value = 64; break;
    case cudaDevAttrMaxGridDimX: *value = 2147483647; break;
    case cudaDevAttrMaxGridDimY: *value = 65535; break;
    case cudaDevAttrMaxGridDimZ: *value = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 * 1024; break;
    case cudaDevAttrTotalConstantMemory: *value = 65536; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = 65536; break;
    case cudaDevAttrClockRate: *value = 1980000; break;
    case cudaDevAttrMultiProcessorCount: *value = 132; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = 5120; break;
    case cudaDevAttrL2CacheSize: *value = 50 * 1024 * 1024; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = 2048; break;
    case cudaDevAttrAsyncEngineCount: *value = 3; break;
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = 228 * 1024; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = 65536; break;
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(k_smem_optin); break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = 32; break;
    default: *value = 0; break;
  }
  return cudaSuccess;
}
extern "C" cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
extern "C" cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
extern "C" cudaError_t cudaDriverGetVersion(int* v) {
  if (v) *v = 13000;
  return cudaSuccess;
}
extern "C" cudaError_t cudaRuntimeGetVersion(int* v) {
  if (v) *v = 13000;
  return cudaSuccess;
}

extern "C" cudaError_t leap_emu_func_set_attribute(const void*, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || static_cast<std::size_t>(value) > k_smem_optin) return api_return(cudaErrorInvalidValue);
    std::size_t cur = g_dyn_smem_limit.load();
    while (static_cast<std::size_t>(value) > cur && !g_dyn_smem_limit.compare_exchange_weak(cur, value)) {}
  }
  return cudaSuccess;
}
extern "C" cudaError_t leap_emu_func_get_attributes(cudaFuncAttributes* a, const void*) {
  if (!a) return api_return(cudaErrorInvalidValue);
  std::memset(a, 0, sizeof(*a));
  a->maxThreadsPerBlock = 1024;
  a->numRegs = 32;
  a->ptxVersion = 90;
  a->binaryVersion = 90;
  a->maxDynamicSharedSizeBytes = static_cast<int>(g_dyn_smem_limit.load());
  return cudaSuccess;
}
extern "C" cudaError_t leap_emu_occupancy(int* num_blocks, int block_size, std::size_t dynamic_smem) {
  if (!num_blocks || block_size <= 0) return api_return(cudaErrorInvalidValue);
  int by_threads = 2048 / block_size;
  int by_smem = dynamic_smem ? static_cast<int>((228 * 1024) / dynamic_smem) : 32;
  int n = by_threads < by_smem ? by_threads : by_smem;
  *num_blocks = n < 32 ? n : 32;
  return cudaSuccess;
}

extern "C" cudaError_t cudaStreamCreate(cudaStream_t* s) {
  if (!s) return api_return(cudaErrorInvalidValue);
  *s = new_stream_handle();
  return cudaSuccess;
}
extern "C" cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }
extern "C" cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
extern "C" cudaError_t cudaStreamSynchronize(cudaStream_t) { return sticky_error(); }
extern "C" cudaError_t cudaStreamQuery(cudaStream_t) { return sticky_error(); }
extern "C" cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }

extern "C" cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (!e) return api_return(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(g_events_mutex);
  events().emplace_back();
  *e = &events().back();
  return cudaSuccess;
}
extern "C" cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
extern "C" cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
extern "C" cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (!e) return api_return(cudaErrorInvalidResourceHandle);
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
extern "C" cudaError_t cudaEventSynchronize(cudaEvent_t) { return sticky_error(); }
extern "C" cudaError_t cudaEventQuery(cudaEvent_t) { return sticky_error(); }
extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!ms || !a || !b) return api_return(cudaErrorInvalidValue);
  if (!a->recorded || !b->recorded) return api_return(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return cudaSuccess;
}
