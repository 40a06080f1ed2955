# CTest driver for fuzz.<name>.run (JANUS_FUZZ=ON):
#   cmake -DFUZZER=<exe> -DCORPUS=<source corpus dir> -DWORK=<build-dir scratch>
#         -DSECONDS=<n> [-DDICT=<file>] -P run_fuzzer.cmake
# The environment variable JANUS_FUZZ_SECONDS, if set, overrides SECONDS.
# libFuzzer only writes new inputs into the FIRST corpus directory, so a fresh,
# empty WORK/corpus goes first and the committed source corpus is read-only.
cmake_minimum_required(VERSION 3.25)

foreach(var FUZZER CORPUS WORK SECONDS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}=... is required")
  endif()
endforeach()

if(DEFINED ENV{JANUS_FUZZ_SECONDS} AND NOT "$ENV{JANUS_FUZZ_SECONDS}" STREQUAL "")
  set(SECONDS "$ENV{JANUS_FUZZ_SECONDS}")
endif()

if(NOT IS_DIRECTORY "${CORPUS}")
  message(FATAL_ERROR "fuzz corpus directory ${CORPUS} does not exist: commit at least one seed file there")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)

set(args
  -max_total_time=${SECONDS}
  -rss_limit_mb=2048
  -timeout=30
  -print_final_stats=1
  -artifact_prefix=${WORK}/artifacts/)
if(DEFINED DICT AND NOT "${DICT}" STREQUAL "")
  list(APPEND args -dict=${DICT})
endif()

list(JOIN args " " args_str)
message(STATUS "fuzz: ${FUZZER} ${args_str} ${WORK}/corpus ${CORPUS}")
execute_process(
  COMMAND ${FUZZER} ${args} ${WORK}/corpus ${CORPUS}
  WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB artifacts ${WORK}/artifacts/*)
  message(FATAL_ERROR "fuzz: ${FUZZER} failed (exit ${rc}); artifacts: ${artifacts}")
endif()
message(STATUS "fuzz: OK")
