# cmake -DLOWBIT_BUILD=<build dir> -DSOURCE=<tests/consumer> -DWORK=<scratch dir>
#       [-DCONFIG=<config>] -P run_consumer_test.cmake
# Installs the lowbit build into a scratch prefix, then configures, builds and
# runs tests/consumer against that prefix only.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/outside_project.cmake)
set(label "consumer test")
lowbit_outside_require("${label}" LOWBIT_BUILD SOURCE WORK)
set(prefix ${WORK}/prefix)
set(build ${WORK}/build)
file(REMOVE_RECURSE ${WORK})
lowbit_outside_config_args(config_args "${CONFIG}")
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --install ${LOWBIT_BUILD} --prefix ${prefix} ${config_args})
# Only the install prefix is searched for lowbit (the package registry and the
# build tree are not), so the test shows that the installed package works.
lowbit_outside_run("${label}" ${CMAKE_COMMAND} -S ${SOURCE} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
                   -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release)
lowbit_outside_run("${label}" ${CMAKE_COMMAND} --build ${build} ${config_args})
lowbit_outside_program(consumer "${label}" ${build} consumer "${CONFIG}")
lowbit_outside_run("${label}" ${consumer})
