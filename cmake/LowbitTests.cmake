# Tests of the build itself, beside proptests/ (included by the top-level
# CMakeLists when LOWBIT_BUILD_TESTS):
#   install_consumer    - installs this build to a scratch prefix and builds
#                         and runs tests/consumer with find_package(lowbit)
#                         (when LOWBIT_INSTALL);
#   subdirectory_consumer - builds and runs tests/subdirectory, which uses
#                         this source tree through add_subdirectory;
#   check_a_kernel_example - installs this build to a scratch prefix,
#                         builds examples/check-a-kernel (a user's CUDA kernel
#                         and its gtest over lowbit::testing) with
#                         find_package(lowbit) and runs its host tests
#                         (when LOWBIT_INSTALL, CUDA and lowbit::testing);
#   nvcc_model_headers  - compiles tests/nvcc/model_kernels.cu (kernels and
#                         device-side static_asserts over the model headers)
#                         with nvcc, so a header that nvcc rejects fails CI on
#                         a machine without a GPU. Only when CUDA is found;
#   citations_resolve   - every cited section, heading and file exists.

if(LOWBIT_INSTALL)
  add_test(NAME install_consumer
           COMMAND ${CMAKE_COMMAND} -DLOWBIT_BUILD=${PROJECT_BINARY_DIR}
                   -DSOURCE=${PROJECT_SOURCE_DIR}/tests/consumer
                   -DWORK=${PROJECT_BINARY_DIR}/tests/consumer -DCONFIG=$<CONFIG>
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/run_consumer_test.cmake)
  set_tests_properties(install_consumer PROPERTIES LABELS lowbit TIMEOUT 600)
endif()

if(LOWBIT_INSTALL AND LOWBIT_HAVE_CUDA AND TARGET lowbit_testing)
  set(lowbit_example_launcher "")
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(GET CMAKE_CXX_COMPILER_LAUNCHER 0 lowbit_example_launcher)
  endif()
  add_test(NAME check_a_kernel_example
           COMMAND ${CMAKE_COMMAND} -DLOWBIT_BUILD=${PROJECT_BINARY_DIR}
                   -DSOURCE=${PROJECT_SOURCE_DIR}/examples/check-a-kernel
                   -DWORK=${PROJECT_BINARY_DIR}/tests/check_a_kernel -DCONFIG=$<CONFIG>
                   -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER} "-DLAUNCHER=${lowbit_example_launcher}"
                   -P ${PROJECT_SOURCE_DIR}/tests/check_a_kernel/run_check_a_kernel_test.cmake)
  set_tests_properties(check_a_kernel_example PROPERTIES LABELS lowbit TIMEOUT 900)
endif()

# subdirectory_consumer: an outside project that add_subdirectory()s this
# source tree (tests/subdirectory) with this build's generator, compiler
# launcher and CUDA setting (so ccache can reuse this build's objects), links
# every lowbit target and runs; lowbit must keep the parent's build type and
# install nothing into the parent's prefix.
set(lowbit_subdirectory_launcher "")
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(GET CMAKE_CXX_COMPILER_LAUNCHER 0 lowbit_subdirectory_launcher)
endif()
set(lowbit_subdirectory_cuda OFF)
if(LOWBIT_HAVE_CUDA)
  set(lowbit_subdirectory_cuda ON)
endif()
add_test(NAME subdirectory_consumer
         COMMAND ${CMAKE_COMMAND} -DLOWBIT_SOURCE=${PROJECT_SOURCE_DIR}
                 -DSOURCE=${PROJECT_SOURCE_DIR}/tests/subdirectory
                 -DWORK=${PROJECT_BINARY_DIR}/tests/subdirectory
                 "-DGENERATOR=${CMAKE_GENERATOR}" -DENABLE_CUDA=${lowbit_subdirectory_cuda}
                 "-DLAUNCHER=${lowbit_subdirectory_launcher}"
                 -P ${PROJECT_SOURCE_DIR}/tests/subdirectory/run_subdirectory_test.cmake)
set_tests_properties(subdirectory_consumer PROPERTIES LABELS lowbit TIMEOUT 1800)

if(LOWBIT_HAVE_CUDA)
  set(LOWBIT_NVCC_TEST_ARCH sm_90 CACHE STRING "GPU architecture tests/nvcc compiles for")
  set(nvcc_out ${PROJECT_BINARY_DIR}/tests/nvcc)
  file(MAKE_DIRECTORY ${nvcc_out})
  set(nvcc_host)
  if(CMAKE_CUDA_HOST_COMPILER)
    set(nvcc_host -ccbin ${CMAKE_CUDA_HOST_COMPILER})
  endif()
  add_test(NAME nvcc_model_headers
           COMMAND ${CMAKE_CUDA_COMPILER} ${nvcc_host} -std=c++20 -arch=${LOWBIT_NVCC_TEST_ARCH}
                   -I${PROJECT_SOURCE_DIR}/formats/spec/include -I${PROJECT_SOURCE_DIR}/formats/include
                   -c ${PROJECT_SOURCE_DIR}/tests/nvcc/model_kernels.cu
                   -o ${nvcc_out}/model_kernels.o)
  set_tests_properties(nvcc_model_headers PROPERTIES LABELS lowbit TIMEOUT 300)
endif()

# citations_resolve - every citation in a comment or doc names something a
# reader can open: a section of docs/formats-reference.md, a heading of
# docs/design.md, a file of the repository (python/check_citations.py).
add_test(NAME citations_resolve
         COMMAND ${CMAKE_COMMAND} -DPYTHON=${LOWBIT_PYTHON}
                 -DSCRIPT=${PROJECT_SOURCE_DIR}/python/check_citations.py -DARGS=${PROJECT_SOURCE_DIR}
                 -P ${PROJECT_SOURCE_DIR}/cmake/LowbitRunPython.cmake)
set_tests_properties(citations_resolve PROPERTIES LABELS lowbit TIMEOUT 120)
# citations_checker - the checker itself: an issue number planted in a scratch
# repository (in a line or a file name) fails it with one line naming
# file:line; links to other projects' issues and the results archive pass
# (python/check_citations_test.py, about 2 s).
add_test(NAME citations_checker
         COMMAND ${CMAKE_COMMAND} -DPYTHON=${LOWBIT_PYTHON}
                 -DSCRIPT=${PROJECT_SOURCE_DIR}/python/check_citations_test.py
                 -P ${PROJECT_SOURCE_DIR}/cmake/LowbitRunPython.cmake)
set_tests_properties(citations_checker PROPERTIES LABELS lowbit TIMEOUT 120)
