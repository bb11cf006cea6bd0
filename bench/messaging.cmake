# bench_messaging: CAF request/response and ping-pong round trips, local vs loopback middleman.
add_executable(bench_messaging ${CMAKE_CURRENT_SOURCE_DIR}/messaging_bench.cpp)
target_link_libraries(bench_messaging PRIVATE leap_messages benchmark::benchmark)
