cmake_minimum_required(VERSION 3.22)
# Runs one command and checks its exit status and output (ctest driver for
# the cli.* tests whose status matters).
#
#   cmake -DCMD="prog|arg|..." -DRC=n -DMATCH=regex [-DINPUT=file] -P expect.cmake
#
# CMD is '|'-separated. stdout and stderr are checked together: MATCH must
# be found in them, and the status must be RC.
string(REPLACE "|" ";" CMD "${CMD}")
if(INPUT)
  execute_process(COMMAND ${CMD} INPUT_FILE "${INPUT}" OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
else()
  execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
endif()
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "exit status '${rc}', expected ${RC}; output:\n${out}")
endif()
if(NOT out MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match '${MATCH}':\n${out}")
endif()
