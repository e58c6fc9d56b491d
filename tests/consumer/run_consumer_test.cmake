# cmake -DLOWBIT_BUILD=<build dir> -DSOURCE=<tests/consumer> -DWORK=<scratch dir>
#       [-DCONFIG=<config>] -P run_consumer_test.cmake
# Installs the lowbit build into a scratch prefix, then configures, builds and
# runs tests/consumer against that prefix only.
foreach(var LOWBIT_BUILD SOURCE WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake: ${var} not set")
  endif()
endforeach()
set(prefix ${WORK}/prefix)
set(build ${WORK}/build)
file(REMOVE_RECURSE ${WORK})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "consumer test: `${cmd}` failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
run(${CMAKE_COMMAND} --install ${LOWBIT_BUILD} --prefix ${prefix} ${config_args})
# Only the install prefix is searched for lowbit (the package registry and the
# build tree are not), so the test shows that the installed package works.
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${build} ${config_args})
if(EXISTS ${build}/consumer)
  run(${build}/consumer)
elseif(CONFIG AND EXISTS ${build}/${CONFIG}/consumer)
  run(${build}/${CONFIG}/consumer)
else()
  message(FATAL_ERROR "consumer test: no consumer executable in ${build}")
endif()
