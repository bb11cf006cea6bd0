# Build speed: a precompiled LibTorch header and unity files for the header-heavy targets, and
# ccache when it is installed. Nothing here changes what is compiled, only how often it is parsed.
#
# LibTorch's <torch/torch.h> costs about 9 s of the 13 s a translation unit that includes it takes
# on a 2-core machine (measured: decoder.cpp 13.1 s, 7.0 s with the precompiled header). It is
# precompiled once, in a target of its own (leap_pch_torch, 23 s), and the targets that include
# it reuse that file (leap_use_torch_pch(target)). A reusing target must compile with the flags
# the header was precompiled with: the global ones and LibTorch's definitions (its targets link
# ${TORCH_LIBRARIES}). GCC checks this and says so (-Winvalid-pch, which CMake adds): a mismatch
# costs time, never correctness. Sources of a reusing target that do not need the header pay only
# the load of the precompiled file (about 3 s), so sources that never include LibTorch opt out
# (SKIP_PRECOMPILE_HEADERS). CAF's headers are not precompiled: loading their precompiled file
# cost nearly what parsing them does (judge.cpp 3.9 s, 3.5 s with it); unity files share them.
#
# -DLEAP_PRECOMPILED_HEADERS=OFF turns it off (to check that every file includes what it uses).

option(LEAP_PRECOMPILED_HEADERS "Precompile LibTorch's header once and reuse it" ON)

if(LEAP_PRECOMPILED_HEADERS)
  add_library(leap_pch_torch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
  target_link_libraries(leap_pch_torch PRIVATE ${TORCH_LIBRARIES})
  target_precompile_headers(leap_pch_torch PRIVATE <torch/torch.h>)
endif()

#   leap_use_torch_pch(target)
function(leap_use_torch_pch target)
  if(LEAP_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} REUSE_FROM leap_pch_torch)
  endif()
endfunction()

# A unity build of one target: its sources compiled as a few translation units (CMake's
# UNITY_BUILD, BATCH files each), so the headers they share (LibTorch, CAF, Beast, toml++, JSON,
# the standard library) are parsed and their templates instantiated once per unity file. Only for
# targets whose files define no clashing file-local names (leap_env, leap_corpus and the bench
# harness do, and stay file by file); a file added to such a target must not reuse another's
# file-local names. -DLEAP_UNITY_BUILDS=OFF compiles every target file by file.
option(LEAP_UNITY_BUILDS "Compile the header-heavy libraries as unity files" ON)
#   leap_unity_build(target [BATCH n])  n files per unity file (default: all in one)
function(leap_unity_build target)
  cmake_parse_arguments(arg "" "BATCH" "" ${ARGN})
  if(NOT arg_BATCH)
    set(arg_BATCH 0)
  endif()
  if(LEAP_UNITY_BUILDS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${arg_BATCH})
  endif()
endfunction()

# Named unity files: the FILES of `target` (paths as its own CMakeLists names them) compiled as
# one unity file GROUP, the target's other sources file by file (UNITY_BUILD_MODE GROUP). For a
# target whose files clash in pairs, or where one unity file of everything would be the build's
# longest pole. Call once per group.
#   leap_unity_group(target group files...)
function(leap_unity_group target group)
  if(LEAP_UNITY_BUILDS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
    set_source_files_properties(${ARGN} PROPERTIES UNITY_GROUP ${group})
  endif()
endfunction()

# ccache, when installed, for rebuilds (a clean CI clone gains nothing from it). Precompiled
# headers need the two sloppiness settings, or ccache would compile every such file again.
find_program(LEAP_CCACHE ccache)
if(LEAP_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${LEAP_CCACHE})
  message(STATUS "ccache: ${LEAP_CCACHE}")
endif()
