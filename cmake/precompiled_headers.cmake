# Build speed: precompiled headers for the two header sets that dominate a clean build, and ccache
# when it is installed. Nothing here changes what is compiled, only how often it is parsed.
#
# LibTorch's <torch/torch.h> costs about 9 s of the 13 s a translation unit that includes it takes
# on a 2-core machine, and 25 translation units include it; CAF's headers cost about 3 s of the
# 4 s each of 83 translation units take. Each set is precompiled once, in a target of its own
# (leap_pch_torch, leap_pch_caf), and the targets that include it reuse that file
# (leap_use_pch(target torch|caf)), so a clean build parses each set twice instead of 25 or 83
# times. A reusing target must compile with the flags the header was precompiled with: the
# global ones and, for torch, LibTorch's definitions (its targets link ${TORCH_LIBRARIES}).
# GCC checks this and says so (-Winvalid-pch, which CMake adds): a mismatch costs time, never
# correctness. Sources of a reusing target that do not need the header pay only the load of the
# precompiled file.
#
# -DLEAP_PRECOMPILED_HEADERS=OFF turns it off (to check that every file includes what it uses).

option(LEAP_PRECOMPILED_HEADERS "Precompile LibTorch's and CAF's headers once and reuse them" ON)

if(LEAP_PRECOMPILED_HEADERS)
  add_library(leap_pch_torch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
  target_link_libraries(leap_pch_torch PRIVATE ${TORCH_LIBRARIES})
  target_precompile_headers(leap_pch_torch PRIVATE <torch/torch.h>)

  add_library(leap_pch_caf OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
  target_link_libraries(leap_pch_caf PRIVATE caf)
  target_precompile_headers(leap_pch_caf PRIVATE <caf/all.hpp> <caf/io/all.hpp>)
endif()

#   leap_use_pch(target torch|caf)
function(leap_use_pch target set)
  if(LEAP_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} REUSE_FROM leap_pch_${set})
  endif()
endfunction()

# A unity build of one target: its sources compiled as one translation unit (CMake's UNITY_BUILD),
# so headers they share (LibTorch, Beast) are parsed and their templates instantiated once. For
# targets whose files include such a header and define no clashing file-local names.
# -DLEAP_UNITY_BUILDS=OFF compiles them file by file.
option(LEAP_UNITY_BUILDS "Compile the LibTorch- and Beast-heavy targets as unity builds" ON)
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

# ccache, when installed, for rebuilds (a clean CI clone gains nothing from it). Precompiled
# headers need the two sloppiness settings, or ccache would compile every such file again.
find_program(LEAP_CCACHE ccache)
if(LEAP_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${LEAP_CCACHE})
  message(STATUS "ccache: ${LEAP_CCACHE}")
endif()
