# Tests of leap_model: config, safetensors, decoder (cached vs full, padding, overfit), sampler,
# the fused decoding step, checkpoints. Tiny models only, so the whole binary runs in seconds.
add_executable(test_policy_model
  ${CMAKE_CURRENT_SOURCE_DIR}/model_config_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/safetensors_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/model_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/model_sampler_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_step_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/model_checkpoint_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_damage_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_pin_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/hf_checkpoint_test.cpp)
target_link_libraries(test_policy_model PRIVATE leap_model GTest::gtest_main)
leap_discover_tests(test_policy_model PROPERTIES LABELS "slow")

add_executable(test_policy_facade ${CMAKE_CURRENT_SOURCE_DIR}/policy_model_test.cpp)
target_link_libraries(test_policy_facade PRIVATE leap_policy_model GTest::gtest_main)
leap_discover_tests(test_policy_facade PROPERTIES LABELS "slow")

add_executable(test_policy_grpo ${CMAKE_CURRENT_SOURCE_DIR}/grpo_loss_test.cpp)
target_link_libraries(test_policy_grpo PRIVATE leap_model GTest::gtest_main)
leap_discover_tests(test_policy_grpo)

# Bounded fuzz loops over the checkpoint readers: safetensors images and tokenizer.json texts.
add_executable(test_policy_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_readers_test.cpp)
target_link_libraries(test_policy_fuzz PRIVATE leap_model leap_text GTest::gtest_main)
target_compile_definitions(test_policy_fuzz PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
leap_discover_tests(test_policy_fuzz)

# Golden outputs of decoding (greedy tokens, seeded samples, logits) for the quickstart model:
# decode-speed work must not change what is computed. Data in tests/policy/data/.
add_executable(test_policy_golden ${CMAKE_CURRENT_SOURCE_DIR}/decode_golden_test.cpp)
target_link_libraries(test_policy_golden PRIVATE leap_model GTest::gtest_main)
target_compile_definitions(test_policy_golden PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
leap_discover_tests(test_policy_golden PROPERTIES LABELS "slow")
# Every path of the fused decode step (policy/decode_path.hpp), forced with LEAP_DECODE_PATH: the
# tests above run the best one the CPU has; these run each, and skip (GTEST_SKIP, reported as
# skipped) where the CPU lacks it. Portable through its older alias LEAP_DECODE_PORTABLE=1;
# libtorch (no fused step) only for the golden outputs.
add_test(NAME DecodeStepPortable COMMAND test_policy_model --gtest_filter=DecodeStep.*:Sampler.*)
add_test(NAME DecodeGoldenPortable COMMAND test_policy_golden)
set_tests_properties(DecodeStepPortable DecodeGoldenPortable PROPERTIES ENVIRONMENT LEAP_DECODE_PORTABLE=1
                     LABELS "slow")
foreach(path avx2 avx512)
  string(REPLACE "avx" "Avx" name ${path})
  add_test(NAME DecodeStep${name} COMMAND test_policy_model --gtest_filter=DecodeStep.*:Sampler.*)
  add_test(NAME DecodeGolden${name} COMMAND test_policy_golden)
  set_tests_properties(DecodeStep${name} DecodeGolden${name} PROPERTIES ENVIRONMENT LEAP_DECODE_PATH=${path}
                       LABELS "slow" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endforeach()
add_test(NAME DecodeGoldenLibtorch COMMAND test_policy_golden)
set_tests_properties(DecodeGoldenLibtorch PROPERTIES ENVIRONMENT LEAP_DECODE_PATH=libtorch LABELS "slow")

# HF checkpoints written by transformers' save_pretrained (Llama with llama3 rope scaling, Qwen2,
# Mistral; float32, sharded, bf16, fp16) give transformers' logits within 1e-4. The models and
# logits come from tests/python/reference/hf_models.py run with the test-only .venv's python
# (scripts/install-test-deps.sh); skipped, saying why, without it.
add_executable(test_policy_hf_transformers ${CMAKE_CURRENT_SOURCE_DIR}/hf_transformers_test.cpp)
target_link_libraries(test_policy_hf_transformers PRIVATE leap_model GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(test_policy_hf_transformers PRIVATE LEAP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  LEAP_TEST_PYTHON="${CMAKE_SOURCE_DIR}/.venv/bin/python")
leap_discover_tests(test_policy_hf_transformers PROPERTIES TIMEOUT 300 LABELS "slow")
