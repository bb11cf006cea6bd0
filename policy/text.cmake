# leap_text: the model's text side without LibTorch: byte-level BPE tokenizer (tokenizer.json),
# BPE trainer, prompt template and code extraction.
add_library(leap_text STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/byte_level.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unicode_class.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/pretokenize.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/bpe_merge.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/bpe_trainer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/prompt.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/code_extract.cpp)
target_include_directories(leap_text PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(leap_text PUBLIC leap_common nlohmann_json::nlohmann_json)
