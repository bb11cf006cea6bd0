# bench_serve: a bounded load test of `leap serve` (cache-hit and cold checks at 1, 8 and 64
# concurrent clients) against the in-process evaluator on the same candidates.
add_executable(bench_serve ${CMAKE_CURRENT_SOURCE_DIR}/serve_bench.cpp)
target_link_libraries(bench_serve PRIVATE leap_pipeline nlohmann_json::nlohmann_json)
add_dependencies(bench_serve leap leap_emu_rt leap_harness_cpu)
target_compile_definitions(bench_serve PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                                               LEAP_BINARY="${CMAKE_BINARY_DIR}/leap")
