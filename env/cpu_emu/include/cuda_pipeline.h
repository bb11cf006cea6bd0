// Shim <cuda_pipeline.h> of leap's CUDA-on-CPU emulation: the pipeline primitives
// (__pipeline_memcpy_async, __pipeline_commit, __pipeline_wait_prior), the C form of cp.async:
// each copy is pending until the issuing thread waits for its batch (see leap_emu/ptx.h), so the
// destination keeps its old contents until __pipeline_wait_prior covers it. The C++ pipeline
// classes (nvcuda::experimental) are not supported. Called from kernel code on a worker thread.
#pragma once

#include "cuda_runtime.h"

// Copies `size_and_align` (4, 8 or 16) bytes into shared memory; the last `zfill` bytes of the
// destination are zeros instead.
inline void __pipeline_memcpy_async(void* dst_shared, const void* src_global, std::size_t size_and_align,
                                    std::size_t zfill = 0) {
  const auto n = static_cast<unsigned>(size_and_align);
  ::leap_emu::ptx::cp_async(::leap_emu::ptx::to_shared(dst_shared), static_cast<const char*>(src_global), n,
                            zfill < size_and_align ? n - static_cast<unsigned>(zfill) : 0u);
}
// Closes the current batch of copies (cp.async.commit_group).
inline void __pipeline_commit() { ::leap_emu::ptx::cp_async_commit(); }
// Waits until at most `prior` of the most recent batches are pending (cp.async.wait_group).
inline void __pipeline_wait_prior(std::size_t prior) { ::leap_emu::ptx::cp_async_wait_group(prior); }
