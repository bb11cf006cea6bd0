// The CUDA runtime API subset of the CPU emulation: memory (host memory standing in for device
// memory), copies, synchronisation (no-ops: launches are synchronous), errors, device
// properties, streams and events (dummy handles). Called from host code of the candidate, on
// the thread that runs solution(); the implementation in leap_emu_rt is thread-safe.
#pragma once

#include <cstddef>
#include <cstring>

#include "leap_emu/errors.h"

extern "C" {
cudaError_t cudaMalloc(void** ptr, std::size_t size);
cudaError_t cudaMallocManaged(void** ptr, std::size_t size, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void** ptr, std::size_t size);
cudaError_t cudaHostAlloc(void** ptr, std::size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                         std::size_t width, std::size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemset(void* ptr, int value, std::size_t count);
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t count, cudaStream_t stream = nullptr);
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);

cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// Function attributes: `func` is the kernel's address (any kernel; limits are global here).
cudaError_t leap_emu_func_set_attribute(const void* func, cudaFuncAttribute attr, int value);
cudaError_t leap_emu_func_get_attributes(cudaFuncAttributes* attr, const void* func);
cudaError_t leap_emu_occupancy(int* num_blocks, int block_size, std::size_t dynamic_smem);
}

// C++ conveniences of cuda_runtime.h: typed pointers and kernel function pointers.
template <class T>
inline cudaError_t cudaMalloc(T** ptr, std::size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), size);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, std::size_t size, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, std::size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, std::size_t size, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocPitch(T** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  return cudaMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}
template <class T>
inline cudaError_t cudaFuncSetAttribute(T* func, cudaFuncAttribute attr, int value) {
  return leap_emu_func_set_attribute(reinterpret_cast<const void*>(func), attr, value);
}
template <class T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, T* func) {
  return leap_emu_func_get_attributes(attr, reinterpret_cast<const void*>(func));
}
template <class T>
inline cudaError_t cudaFuncSetCacheConfig(T*, cudaFuncCache) { return cudaSuccess; }
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, T*, int block_size,
                                                                 std::size_t dynamic_smem) {
  return leap_emu_occupancy(num_blocks, block_size, dynamic_smem);
}
template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, T*,
                                                      std::size_t = 0, int limit = 0) {
  int b = (limit > 0 && limit < 1024) ? limit : 1024;
  if (block_size) *block_size = b;
  if (min_grid) *min_grid = 132 * (2048 / b);
  return cudaSuccess;
}

// __constant__ / __device__ globals are plain globals in the emulation.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, std::size_t count,
                                      std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  std::memcpy(reinterpret_cast<char*>(&symbol) + offset, src, count);
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* src, std::size_t count,
                                           std::size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t = nullptr) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t count,
                                        std::size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  std::memcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, count);
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** ptr, T& symbol) {
  *ptr = reinterpret_cast<void*>(&symbol);
  return cudaSuccess;
}
