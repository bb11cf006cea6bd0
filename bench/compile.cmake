# bench_compile: a cold candidate's compile cost on the CPU backend, today's pipeline (nvcc
# -cubin, rewrite, g++ with the PCH, glue, link) against alternatives side by side, to find which
# stage a cheaper build would have to cut. Runs the real nvcc and g++ on bundled references and
# candidates.
add_executable(bench_compile ${CMAKE_CURRENT_SOURCE_DIR}/compile_bench.cpp)
target_include_directories(bench_compile PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(bench_compile PRIVATE leap_env benchmark::benchmark)
add_dependencies(bench_compile leap_emu_rt leap_harness_cpu leap_emu_pch)
