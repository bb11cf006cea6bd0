# leap_model: the Llama-style decoder, KV cache, group sampler, safetensors I/O, checkpoints.
add_library(leap_model STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/model_config.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/safetensors.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tensor_file.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decoder.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_step.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_path.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_kernels_portable.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_kernels_avx2.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode_kernels_avx512.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/multinomial_one.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/sampler.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_verify.cpp)
target_include_directories(leap_model PUBLIC ${CMAKE_SOURCE_DIR})
# leap_text: the checkpoint's tokenizer_config.json / generation_config.json (hf_files.hpp).
target_link_libraries(leap_model PUBLIC leap_common leap_text ${TORCH_LIBRARIES} nlohmann_json::nlohmann_json)

# The learner's loss (GRPO with clip-higher, k3 KL, token-mean / Dr.GRPO).
target_sources(leap_model PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/grpo_loss.cpp)
