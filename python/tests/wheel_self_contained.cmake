# ctest python_wheel_self_contained: installs the component "python" (what
# scikit-build-core puts in the wheel, pyproject.toml install.components) into
# WORK and checks, with readelf, that every shared library the module needs
# is either shipped beside it (with RUNPATH $ORIGIN to find it, and a
# libX.NOTICE naming its origin and license) or one that a
# Linux system provides: the C and C++ runtimes, and the CUDA runtime, which a
# CUDA build needs from the machine as any CUDA program does.
# Usage: cmake -DBUILD_DIR=<build> -DWORK=<scratch> -P wheel_self_contained.cmake
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --component python --prefix "${WORK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed (${rc}): ${out}${err}")
endif()
file(GLOB module "${WORK}/lowbit/_lowbit*.so")
if(NOT module)
  message(FATAL_ERROR "no lowbit/_lowbit*.so under ${WORK}")
endif()
find_program(READELF readelf REQUIRED)
execute_process(COMMAND "${READELF}" -d ${module} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${module} failed")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]]+\\]" needed_lines "${dynamic}")
set(system_libraries "^(libc|libm|libdl|librt|libpthread|libstdc\\+\\+|libgcc_s|ld-linux-x86-64|libcudart)\\.so")
set(shipped 0)
foreach(line IN LISTS needed_lines)
  string(REGEX REPLACE ".*\\[([^]]+)\\]" "\\1" library "${line}")
  if(library MATCHES "${system_libraries}")
    continue()
  endif()
  if(NOT EXISTS "${WORK}/lowbit/${library}")
    message(FATAL_ERROR "the module needs ${library}, which the wheel does not ship (and not every system has)")
  endif()
  # A shipped library comes with its origin and license: libX.so.N beside libX.NOTICE.
  string(REGEX REPLACE "\\.so.*$" "" library_base "${library}")
  if(NOT EXISTS "${WORK}/lowbit/${library_base}.NOTICE")
    message(FATAL_ERROR "the wheel ships ${library} without ${library_base}.NOTICE (its origin and license)")
  endif()
  math(EXPR shipped "${shipped} + 1")
endforeach()
if(shipped GREATER 0 AND NOT dynamic MATCHES "\\((RUNPATH|RPATH)\\)[^\n]*\\[\\$ORIGIN")
  message(FATAL_ERROR "the module ships ${shipped} libraries but its RUNPATH lacks $ORIGIN:\n${dynamic}")
endif()
list(LENGTH needed_lines count)
message(STATUS "the module needs ${count} libraries; ${shipped} shipped beside it, the rest system libraries")
