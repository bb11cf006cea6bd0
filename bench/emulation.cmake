# bench_emulation: __syncthreads() cost in the CUDA-on-CPU emulation (fibers), block sizes
# 32/256/1024, barrier vs no-barrier kernels in the same run; and what each emulated CUDA
# feature costs (emu/feature/*: volatile lockstep, cooperative groups, coalesced_threads, cp.async,
# the rewriter's #if evaluation). Both TUs include the emulation's shim headers (leap_emu_rt's
# public include dir), so no other leap code may share them.
add_executable(bench_emulation ${CMAKE_CURRENT_SOURCE_DIR}/emulation_bench.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation_features_bench.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation_shared_volatile_bench.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation_half_bench.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation_async_masks_bench.cpp)
target_include_directories(bench_emulation PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(bench_emulation PRIVATE leap_emu_rt leap_emu_rewriter benchmark::benchmark)
