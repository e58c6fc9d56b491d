# cmake -DLOWBIT_SOURCE=<lowbit source tree> -DSOURCE=<tests/subdirectory>
#       -DWORK=<scratch dir> [-DGENERATOR=<generator>] [-DENABLE_CUDA=ON|OFF]
#       [-DLAUNCHER=<compiler launcher>] -P run_subdirectory_test.cmake
# ENABLE_CUDA=ON is honoured at LOWBIT_TEST_LEVEL=full; otherwise off.
# 1. Configures tests/subdirectory with no build type and no SIMD/CUDA (quick):
#    lowbit must leave the parent's empty CMAKE_BUILD_TYPE empty.
# 2. Configures it again as a Release parent with the backends of the calling
#    build, builds it and runs the consumer, which links every lowbit target.
# 3. Installs the parent: only the parent's program lands in the prefix,
#    nothing of lowbit (LOWBIT_INSTALL is off in a subproject).
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/outside_project.cmake)
set(label "subdirectory test")
lowbit_outside_require("${label}" LOWBIT_SOURCE SOURCE WORK)
file(REMOVE_RECURSE ${WORK})

set(common -DLOWBIT_SOURCE_DIR=${LOWBIT_SOURCE})
if(GENERATOR)
  list(APPEND common -G ${GENERATOR})
endif()
if(LAUNCHER)
  list(APPEND common -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CUDA_COMPILER_LAUNCHER=${LAUNCHER})
endif()

lowbit_outside_run("${label}" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/empty-build-type ${common}
    -DLOWBIT_ENABLE_SIMD=OFF -DLOWBIT_ENABLE_CUDA=OFF)

if(NOT DEFINED ENABLE_CUDA)
  set(ENABLE_CUDA OFF)
endif()
# Compiling the CUDA library a second time was most of this test's time (16 of
# CI's 46 minutes, 2026-11-24, 2 cores), and ccache (the C++ launcher passed on
# here) does not cover the calling build's CUDA objects: below the full level
# the subproject is built without CUDA; the full level (LOWBIT_TEST_LEVEL=full)
# builds it with the calling build's CUDA setting. The subproject rules this
# test is about (build type, options, install) do not depend on CUDA;
# tests/consumer links the installed CUDA library.
if(ENABLE_CUDA AND NOT "$ENV{LOWBIT_TEST_LEVEL}" STREQUAL "full")
  message(STATUS "subdirectory test: CUDA left out below LOWBIT_TEST_LEVEL=full")
  set(ENABLE_CUDA OFF)
endif()
set(build ${WORK}/build)
lowbit_outside_run("${label}" ${CMAKE_COMMAND} -S ${SOURCE} -B ${build} ${common} -DCMAKE_BUILD_TYPE=Release
    -DLOWBIT_ENABLE_CUDA=${ENABLE_CUDA})
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --build ${build} --target consumer --config Release)
lowbit_outside_program(consumer "${label}" ${build} consumer Release)
lowbit_outside_run("${label}" ${consumer})

set(prefix ${WORK}/prefix)
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --install ${build} --prefix ${prefix} --config Release)
file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
if(NOT installed STREQUAL "bin/consumer")
  message(FATAL_ERROR "subdirectory test: installing the parent installed '${installed}', "
                      "expected only bin/consumer (lowbit's install rules must be off)")
endif()
message(STATUS "subdirectory test: OK")
