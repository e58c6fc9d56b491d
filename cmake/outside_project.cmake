# Shared steps of the ctest drivers that build an outside project against
# lowbit (tests/consumer, tests/subdirectory, tests/check_a_kernel), run with
# `cmake -P`: each driver includes this file and calls these functions instead
# of repeating them.

# lowbit_outside_require(LABEL VAR...): stops with a message naming LABEL and
# the first VAR that the caller did not pass with -D.
function(lowbit_outside_require label)
  foreach(var ${ARGN})
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${label}: ${var} not set")
    endif()
  endforeach()
endfunction()

# lowbit_outside_run(LABEL COMMAND...): runs COMMAND; a nonzero exit stops
# the driver with LABEL, the command line and the exit status.
function(lowbit_outside_run label)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${label}: `${cmd}` failed (${rc})")
  endif()
endfunction()

# lowbit_outside_config_args(OUT CONFIG): `--config CONFIG` for
# multi-config generators, nothing when CONFIG is empty.
function(lowbit_outside_config_args out config)
  set(args)
  if(config)
    set(args --config ${config})
  endif()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

# lowbit_outside_program(OUT LABEL BUILD NAME CONFIG): the path of the
# program NAME that a build in BUILD produced (BUILD/NAME, or BUILD/CONFIG/NAME
# for multi-config generators); stops with LABEL when there is none.
function(lowbit_outside_program out label build name config)
  if(EXISTS ${build}/${name})
    set(${out} ${build}/${name} PARENT_SCOPE)
  elseif(config AND EXISTS ${build}/${config}/${name})
    set(${out} ${build}/${config}/${name} PARENT_SCOPE)
  else()
    message(FATAL_ERROR "${label}: no ${name} executable in ${build}")
  endif()
endfunction()
