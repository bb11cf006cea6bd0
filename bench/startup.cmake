# bench_startup: wall time of one `leap version` and one cache-hit `leap check` per process,
# through the `leap` front end and through `leap-torch` (the start-up a script pays per call).
add_executable(bench_startup ${CMAKE_CURRENT_SOURCE_DIR}/startup_bench.cpp)
target_link_libraries(bench_startup PRIVATE leap_common benchmark::benchmark)
add_dependencies(bench_startup leap leap-torch leap_emu_rt leap_harness_cpu)
target_compile_definitions(bench_startup PRIVATE LEAP_BINARY_DIR="${CMAKE_BINARY_DIR}")
