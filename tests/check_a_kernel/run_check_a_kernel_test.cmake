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
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/outside_project.cmake)
set(label "check-a-kernel example")
lowbit_outside_require("${label}" LOWBIT_BUILD SOURCE WORK CUDA_COMPILER)
set(prefix ${WORK}/prefix)
set(build ${WORK}/build)
file(REMOVE_RECURSE ${WORK})
lowbit_outside_config_args(config_args "${CONFIG}")
set(launcher_args)
if(LAUNCHER)
  set(launcher_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CUDA_COMPILER_LAUNCHER=${LAUNCHER})
endif()
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --install ${LOWBIT_BUILD} --prefix ${prefix} ${config_args})
# Only the install prefix is searched for lowbit (not the package registry,
# not the build tree).
lowbit_outside_run("${label}" ${CMAKE_COMMAND} -S ${SOURCE} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
                   -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
                   -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} ${launcher_args})
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --build ${build} ${config_args})
lowbit_outside_program(test_binary "${label}" ${build} per_token_fp8_test "${CONFIG}")
lowbit_outside_run("${label}" ${test_binary} --gtest_filter=PerTokenFp8Host.*)
