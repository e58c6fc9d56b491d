# cmake -DPYTHON=<interpreter> -DSCRIPT=<file.py> -DARGS=<a;b> -P LowbitRunPython.cmake
# Runs a helper script of python/ with the project's venv, failing with a clear
# message (not a skip) when the venv is missing: CI always has it.
if(NOT EXISTS "${PYTHON}")
  message(FATAL_ERROR
    "lowbit: Python venv not found at ${PYTHON}.\n"
    "Tests that compare with ml_dtypes need it. Run `bash scripts/setup.sh` "
    "(it creates .venv with requirements.txt), or configure with -DLOWBIT_PYTHON=<python>.")
endif()
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" ${ARGS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lowbit: ${SCRIPT} failed (${rc}) with ${PYTHON}")
endif()
