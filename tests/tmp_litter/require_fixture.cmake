# Read by ctest (TEST_INCLUDE_FILES of tests/) before any test is declared:
# every test added after this, gtest_discover_tests' ones included, requires
# the memtrail_tmp fixture (tmp_litter.snapshot before, tmp_litter.compare
# after). Arguments are passed on one by one in bracket quotes, so commands
# keep their semicolons and empty arguments.
function(add_test name)
  set(call "_add_test(")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE ${last})
    string(APPEND call " [=====[${ARGV${i}}]=====]")
  endforeach()
  cmake_language(EVAL CODE "${call})")
  if(NOT name MATCHES "^tmp_litter\\.")
    set_tests_properties("${name}" PROPERTIES FIXTURES_REQUIRED memtrail_tmp)
  endif()
endfunction()
