# cmake -DLOWBIT_BUILD=<build dir> -DSOURCE=<examples/check-a-kernel>
#       -DWORK=<scratch dir> -DCUDA_COMPILER=<nvcc> [-DCONFIG=<config>]
#       [-DLAUNCHER=<ccache>] -P run_check_a_kernel_test.cmake
# Installs the lowbit build into a scratch prefix, then configures and builds
# examples/check-a-kernel (a user's CUDA kernel and its gtest) against that
# prefix only, with find_package(lowbit COMPONENTS testing), and runs the
# host half of its tests (PerTokenFp8Host.*: the kernel's own code on the
# CPU, its wrong variants and their diagnosis). The GPU half
# (PerTokenFp8Gpu.*) runs on the GPU machine: scripts/run_gpu.sh runs the
# binary this leaves in <WORK>/build (LOWBIT_CHECK_A_KERNEL_TEST).
foreach(var LOWBIT_BUILD SOURCE WORK CUDA_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_check_a_kernel_test.cmake: ${var} not set")
  endif()
endforeach()
set(prefix ${WORK}/prefix)
set(build ${WORK}/build)
file(REMOVE_RECURSE ${WORK})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "check-a-kernel example: `${cmd}` failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
set(launcher_args)
if(LAUNCHER)
  set(launcher_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CUDA_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} --install ${LOWBIT_BUILD} --prefix ${prefix} ${config_args})
# Only the install prefix is searched for lowbit (not the package registry,
# not the build tree).
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} ${launcher_args})
run(${CMAKE_COMMAND} --build ${build} ${config_args})
set(test_binary ${build}/per_token_fp8_test)
if(CONFIG AND NOT EXISTS ${test_binary})
  set(test_binary ${build}/${CONFIG}/per_token_fp8_test)
endif()
run(${test_binary} --gtest_filter=PerTokenFp8Host.*)
