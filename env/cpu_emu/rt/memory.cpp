// "Device" memory of the emulation: cudaMalloc & co. return 256-byte aligned host memory,
// tracked so cudaFree can reject unknown pointers; copies and memsets are plain memcpy/memset
// (launches are synchronous, so the async variants are too). Thread-safe.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "leap_emu/rt_internal.h"
#include "leap_emu/runtime_api.h"

namespace {

constexpr std::size_t k_alignment = 256;

struct allocation_registry {
  std::mutex mutex;
  std::unordered_map<void*, std::size_t> sizes;
  std::size_t total = 0;
};

allocation_registry& registry() {
  static allocation_registry r;
  return r;
}

std::size_t limit_bytes() {
  static const std::size_t limit =
      static_cast<std::size_t>(leap_emu::detail::env_int("LEAP_EMU_MEM_LIMIT_MB", 16384, 1, 1 << 24)) << 20;
  return limit;
}

cudaError_t allocate(void** ptr, std::size_t size) {
  using namespace leap_emu::detail;
  if (!ptr) return api_return(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (sticky_error() != cudaSuccess) return sticky_error();
  if (size == 0) return cudaSuccess;
  std::size_t rounded = (size + k_alignment - 1) / k_alignment * k_alignment;
  auto& reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (rounded > limit_bytes() || reg.total + rounded > limit_bytes()) return api_return(cudaErrorMemoryAllocation);
  }
  void* p = std::aligned_alloc(k_alignment, rounded);
  if (!p) return api_return(cudaErrorMemoryAllocation);
  static const bool poison = env_int("LEAP_EMU_POISON", 0, 0, 1) == 1;
  std::memset(p, poison ? 0xff : 0, rounded);
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.sizes.emplace(p, rounded);
  reg.total += rounded;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t release(void* ptr) {
  using namespace leap_emu::detail;
  if (!ptr) return api_return(cudaSuccess);
  auto& reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    auto it = reg.sizes.find(ptr);
    if (it == reg.sizes.end()) return api_return(cudaErrorInvalidValue);
    reg.total -= it->second;
    reg.sizes.erase(it);
  }
  std::free(ptr);
  return api_return(cudaSuccess);
}

bool valid_kind(cudaMemcpyKind kind) { return static_cast<int>(kind) >= 0 && static_cast<int>(kind) <= 4; }

}  // namespace

using namespace leap_emu::detail;

extern "C" cudaError_t cudaMalloc(void** ptr, std::size_t size) { return allocate(ptr, size); }
extern "C" cudaError_t cudaMallocManaged(void** ptr, std::size_t size, unsigned int) { return allocate(ptr, size); }
extern "C" cudaError_t cudaMallocHost(void** ptr, std::size_t size) { return allocate(ptr, size); }
extern "C" cudaError_t cudaHostAlloc(void** ptr, std::size_t size, unsigned int) { return allocate(ptr, size); }
extern "C" cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  if (!pitch) return api_return(cudaErrorInvalidValue);
  *pitch = (width + k_alignment - 1) / k_alignment * k_alignment;
  return allocate(ptr, *pitch * height);
}
extern "C" cudaError_t cudaFree(void* ptr) { return release(ptr); }
extern "C" cudaError_t cudaFreeHost(void* ptr) { return release(ptr); }

extern "C" cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
  if (sticky_error() != cudaSuccess) return sticky_error();
  if (!valid_kind(kind)) return api_return(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  if (!dst || !src) return api_return(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}
extern "C" cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                                       cudaStream_t) {
  return cudaMemcpy(dst, src, count, kind);
}
extern "C" cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                                    std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  if (sticky_error() != cudaSuccess) return sticky_error();
  if (!valid_kind(kind)) return api_return(cudaErrorInvalidMemcpyDirection);
  if (width > dpitch || width > spitch) return api_return(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return cudaSuccess;
  if (!dst || !src) return api_return(cudaErrorInvalidValue);
  for (std::size_t r = 0; r < height; ++r)
    std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  return cudaSuccess;
}
extern "C" cudaError_t cudaMemset(void* ptr, int value, std::size_t count) {
  if (sticky_error() != cudaSuccess) return sticky_error();
  if (count == 0) return cudaSuccess;
  if (!ptr) return api_return(cudaErrorInvalidValue);
  std::memset(ptr, value, count);
  return cudaSuccess;
}
extern "C" cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t count, cudaStream_t) {
  return cudaMemset(ptr, value, count);
}
extern "C" cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (total_bytes) *total_bytes = limit_bytes();
  if (free_bytes) *free_bytes = limit_bytes() - reg.total;
  return cudaSuccess;
}
