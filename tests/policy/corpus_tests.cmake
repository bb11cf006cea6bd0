# Tests of policy/corpus: determinism, coverage per task, mutators, typos (leap_corpus, and
# leap_taskgen for the generated tasks' variants).
add_executable(test_policy_corpus ${CMAKE_CURRENT_LIST_DIR}/corpus_test.cpp)
target_link_libraries(test_policy_corpus PRIVATE leap_corpus leap_taskgen GTest::gtest_main)
target_compile_definitions(test_policy_corpus PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
leap_discover_tests(test_policy_corpus)
