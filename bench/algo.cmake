# bench_algo: tournament, advantage estimators and the DCP decision for G = 8, 16, 64.
add_executable(bench_algo ${CMAKE_CURRENT_SOURCE_DIR}/algo_bench.cpp)
target_link_libraries(bench_algo PRIVATE leap_algo benchmark::benchmark)
