# bench_tokenizer: byte-level BPE encode/decode throughput on the bundled CUDA sources.
add_executable(bench_tokenizer ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer_bench.cpp)
target_link_libraries(bench_tokenizer PRIVATE leap_text benchmark::benchmark)
target_compile_definitions(bench_tokenizer PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
