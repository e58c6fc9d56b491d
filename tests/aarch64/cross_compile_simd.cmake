# Cross-compiles every simd/src/*.cc for aarch64 (an Arm server such as
# NVIDIA Grace) with the host's Highway headers, so that x86-only code or
# flags in lowbit::simd fail a test on an x86 machine. Highway is header-only
# for compilation: its foreach_target.h compiles each kernel once per Arm
# target (NEON, SVE, SVE2, SVE_256, SVE2_128), which the object of
# simd_targets.cc must then name. Run by ctest (simd/CMakeLists.txt registers it
# when an aarch64 cross compiler is found):
#   cmake -DCXX=aarch64-linux-gnu-g++ -DSOURCE_DIR=<repo> -DHWY_INCLUDE_DIR=<dir holding hwy/>
#         -DWORK=<scratch dir> -P tests/aarch64/cross_compile_simd.cmake
foreach(var CXX SOURCE_DIR HWY_INCLUDE_DIR WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "cross_compile_simd.cmake: -D${var}=... is required")
  endif()
endforeach()

# Only Highway's headers from the host: the host's other headers (glibc's
# x86 bits, gtest, Boost) must not reach the cross compiler, which has its
# own aarch64 C and C++ libraries.
file(MAKE_DIRECTORY ${WORK}/include)
file(CREATE_LINK ${HWY_INCLUDE_DIR}/hwy ${WORK}/include/hwy SYMBOLIC)

# The include directories of lowbit::simd and what it links (the model, its
# spec data, the registry): every folder named `include` under formats/,
# registry/ and simd/, so that moving headers between those targets needs no
# edit here.
set(includes -I${SOURCE_DIR}/simd/src)
foreach(dir formats registry simd)
  file(GLOB_RECURSE candidates LIST_DIRECTORIES true ${SOURCE_DIR}/${dir}/*)
  foreach(candidate ${candidates})
    get_filename_component(leaf ${candidate} NAME)
    if(IS_DIRECTORY ${candidate} AND leaf STREQUAL "include")
      list(APPEND includes -I${candidate})
    endif()
  endforeach()
endforeach()

file(GLOB sources ${SOURCE_DIR}/simd/src/*.cc)
list(LENGTH sources count)
if(count EQUAL 0)
  message(FATAL_ERROR "no sources in ${SOURCE_DIR}/simd/src")
endif()

set(failed "")
foreach(source ${sources})
  get_filename_component(name ${source} NAME_WE)
  execute_process(
    COMMAND ${CXX} -std=c++20 -O2 -Wall -c ${source} ${includes} -I${WORK}/include
            -o ${WORK}/${name}.o
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "aarch64: ${name}.cc does not compile:\n${out}${err}")
    list(APPEND failed ${name})
  elseif(err)
    message(STATUS "aarch64: ${name}.cc compiles with warnings:\n${err}")
  else()
    message(STATUS "aarch64: ${name}.cc compiles")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "aarch64: ${failed} failed")
endif()

# The dispatch compiled Highway's Arm targets: each target's copy of
# simd_targets.cc lives in its own namespace (N_NEON, N_SVE2, ...), which the
# object's symbol table names as <length><name> (Itanium C++ ABI mangling).
foreach(target NEON SVE SVE2)
  string(LENGTH "N_${target}" length)
  file(STRINGS ${WORK}/simd_targets.o hits REGEX "[^0-9]${length}N_${target}[0-9]" LIMIT_COUNT 1)
  if(NOT hits)
    message(FATAL_ERROR "aarch64: simd_targets.o has no N_${target} code: Highway compiled no ${target} target")
  endif()
endforeach()
message(STATUS "aarch64: ${count} sources compile; NEON, SVE and SVE2 targets present")
