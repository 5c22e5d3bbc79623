# memtrail_add_test(NAME name COMMAND program args...
#                   [LIMIT_LEAKS size] [LIMIT_PEAK size] [LIMIT_RESERVED size]
#                   [SUPPRESSIONS file...] [POLICY file] [BASELINE file]
#                   [CHECK_ARGS args...] [WORKING_DIRECTORY dir])
#
# Registers a CTest test that runs `program` under the memtrail tracer and
# gates it with `memtrail check` in one process:
#   memtrail check [limits] --junit <name>.junit.xml --run --trace <name>.mtr -- program args
# The test fails when the program fails or a limit is exceeded; the failure
# text names the limit, the measured bytes and the sites. With no LIMIT_*,
# POLICY or BASELINE, any leak fails. The trace and the JUnit report stay in
# the current binary directory. A `program` that is a CMake executable target
# is replaced by its file. Sizes: "0", "64 KiB", "1.5 GiB".
#
# Needs MEMTRAIL_EXECUTABLE (set by find_package(memtrail), or by the
# memtrail build itself).
function(memtrail_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 MT ""
    "NAME;LIMIT_LEAKS;LIMIT_PEAK;LIMIT_RESERVED;POLICY;BASELINE;WORKING_DIRECTORY"
    "COMMAND;SUPPRESSIONS;CHECK_ARGS")
  if(MT_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "memtrail_add_test: unknown arguments: ${MT_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MT_NAME OR NOT MT_COMMAND)
    message(FATAL_ERROR "memtrail_add_test: NAME and COMMAND are required")
  endif()
  if(NOT MEMTRAIL_EXECUTABLE)
    message(FATAL_ERROR "memtrail_add_test: MEMTRAIL_EXECUTABLE is not set (find_package(memtrail) first)")
  endif()

  set(check_args)
  if(DEFINED MT_LIMIT_LEAKS)
    list(APPEND check_args --max-leaked "${MT_LIMIT_LEAKS}")
  endif()
  if(DEFINED MT_LIMIT_PEAK)
    list(APPEND check_args --max-peak "${MT_LIMIT_PEAK}")
  endif()
  if(DEFINED MT_LIMIT_RESERVED)
    list(APPEND check_args --max-reserved "${MT_LIMIT_RESERVED}")
  endif()
  foreach(file IN LISTS MT_SUPPRESSIONS)
    get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND check_args --suppressions "${file}")
  endforeach()
  if(MT_POLICY)
    get_filename_component(policy "${MT_POLICY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND check_args --policy "${policy}")
  endif()
  if(MT_BASELINE)
    get_filename_component(baseline "${MT_BASELINE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND check_args --baseline "${baseline}")
  endif()
  list(APPEND check_args ${MT_CHECK_ARGS})

  list(POP_FRONT MT_COMMAND program)
  if(TARGET "${program}")
    set(program "$<TARGET_FILE:${program}>")
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${MT_NAME}")
  set(workdir "${CMAKE_CURRENT_BINARY_DIR}")
  if(MT_WORKING_DIRECTORY)
    set(workdir "${MT_WORKING_DIRECTORY}")
  endif()
  add_test(NAME "${MT_NAME}"
    COMMAND "${MEMTRAIL_EXECUTABLE}" check ${check_args} --junit "${out}.junit.xml"
            --run --trace "${out}.mtr" -- "${program}" ${MT_COMMAND}
    WORKING_DIRECTORY "${workdir}")
  set_tests_properties("${MT_NAME}" PROPERTIES LABELS memtrail)
endfunction()
