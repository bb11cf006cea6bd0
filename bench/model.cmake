# bench_sampling: tokens/s of batched group sampling with and without the KV cache.
add_executable(bench_sampling ${CMAKE_CURRENT_SOURCE_DIR}/sampling_bench.cpp)
target_link_libraries(bench_sampling PRIVATE leap_model benchmark::benchmark)

# bench_learner: GRPO learner step throughput on quickstart-shaped batches.
add_executable(bench_learner ${CMAKE_CURRENT_SOURCE_DIR}/learner_bench.cpp)
target_link_libraries(bench_learner PRIVATE leap_policy benchmark::benchmark)
# Build speed (cmake/precompiled_headers.cmake): the precompiled LibTorch header.
leap_use_torch_pch(bench_sampling)
