# bench_emulation: __syncthreads() cost in the CUDA-on-CPU emulation (fibers), block sizes
# 32/256/1024, barrier vs no-barrier kernels in the same run. Includes the emulation's shim
# headers (leap_emu_rt's public include dir), so nothing else may share this TU.
add_executable(bench_emulation ${CMAKE_CURRENT_SOURCE_DIR}/emulation_bench.cpp)
target_link_libraries(bench_emulation PRIVATE leap_emu_rt benchmark::benchmark)
