# leap_text: the model's text side without LibTorch: byte-level BPE tokenizer (tokenizer.json),
# BPE trainer, prompt template and code extraction. NFC comes from utf8proc (libutf8proc-dev).
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h)
find_library(UTF8PROC_LIBRARY NAMES utf8proc)
if(NOT UTF8PROC_INCLUDE_DIR OR NOT UTF8PROC_LIBRARY)
  message(FATAL_ERROR "utf8proc not found (the tokenizer's NFC normalizer needs it): "
                      "apt-get install libutf8proc-dev, or run scripts/install-deps.sh")
endif()
add_library(leap_text STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/byte_level.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unicode_class.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unicode_normalize.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/pretokenize.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/bpe_merge.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/bpe_trainer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/prompt.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/hf_files.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/code_extract.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/code_edit.cpp)
target_include_directories(leap_text PUBLIC ${CMAKE_SOURCE_DIR})
target_include_directories(leap_text PRIVATE ${UTF8PROC_INCLUDE_DIR})
target_link_libraries(leap_text PUBLIC leap_common nlohmann_json::nlohmann_json
                      PRIVATE ${UTF8PROC_LIBRARY})
