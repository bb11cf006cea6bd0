# Tests of leap_text: tokenizer (round trips, tokenizer.json, training), prompt/extraction, edits.
add_executable(test_policy_text
  ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unicode_normalize_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/prompt_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/code_edit_test.cpp)
target_link_libraries(test_policy_text PRIVATE leap_text GTest::gtest_main)
target_compile_definitions(test_policy_text PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
leap_discover_tests(test_policy_text)

# Conformance of the tokenizer with Hugging Face tokenizers and Meta's tiktoken tokenizer (real
# Llama 3 vocabulary and tokenizers built with `tokenizers`): tests/python/test_tokenizer_conformance.py.

# Chat formats (leap, chatml, llama3) against the published Llama 3, Qwen2.5 and Qwen3 chat
# templates (tests/python/chat_templates) rendered by transformers' apply_chat_template, run with
# the test-only .venv's python (scripts/install-test-deps.sh; those parts skipped without it).
add_executable(test_policy_chat_template ${CMAKE_CURRENT_SOURCE_DIR}/chat_template_test.cpp)
target_link_libraries(test_policy_chat_template PRIVATE leap_text GTest::gtest_main
  nlohmann_json::nlohmann_json)
target_compile_definitions(test_policy_chat_template PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  LEAP_TEST_PYTHON="${CMAKE_SOURCE_DIR}/.venv/bin/python")
leap_discover_tests(test_policy_chat_template PROPERTIES TIMEOUT 120 LABELS "slow")
