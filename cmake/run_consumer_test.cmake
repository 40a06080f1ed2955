# CTest driver for the `consumer` test:
#   cmake -DSRC=<source dir> -DBIN=<build dir> -DCXX=<compiler> [-DCONFIG=<cfg>] -P run_consumer_test.cmake
# 1. installs the build tree BIN into BIN/consumer-install,
# 2. configures/builds tests/consumer against it (fresh build dir, Ninja, same compiler),
# 3. runs the resulting executable.
cmake_minimum_required(VERSION 3.25)

foreach(var SRC BIN CXX)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${BIN}/consumer-install)
set(build ${BIN}/consumer-build)
file(REMOVE_RECURSE ${prefix} ${build})

set(config_args "")
if(DEFINED CONFIG AND NOT "${CONFIG}" STREQUAL "")
  set(config_args --config ${CONFIG})
endif()

message(STATUS "consumer: installing ${BIN} -> ${prefix}")
execute_process(
  COMMAND ${CMAKE_COMMAND} --install ${BIN} --prefix ${prefix} ${config_args}
  COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "consumer: configuring ${SRC}/tests/consumer")
execute_process(
  COMMAND ${CMAKE_COMMAND}
    -S ${SRC}/tests/consumer
    -B ${build}
    -G Ninja
    -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON
  COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "consumer: building")
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${build}
  COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "consumer: running")
execute_process(
  COMMAND ${build}/janus_consumer
  COMMAND_ERROR_IS_FATAL ANY)

message(STATUS "consumer: OK")
