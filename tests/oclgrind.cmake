# Oclgrind: xnorcl's kernels under the simulator with its memory, data-race, uninitialized-value and API checks,
# plus negative controls (canary kernels with a known defect) that prove the checks are live.
#
# Label `oclgrind` only (not `device`): run them with `ctest -L oclgrind` (about 1-3 minutes on 2 cores).
# Oclgrind is loaded through its `oclgrind` command (LD_PRELOAD of its runtime), never installed as an ICD.
find_program(OCLGRIND_EXECUTABLE oclgrind)
option(XNORCL_OCLGRIND_TESTS "Register the Oclgrind tests (label oclgrind)" ON)

if(XNORCL_OCLGRIND_TESTS AND OCLGRIND_EXECUTABLE)
  add_executable(xnorcl_oclgrind_runner "${CMAKE_CURRENT_SOURCE_DIR}/oclgrind/oclgrind_runner.cpp")
  target_link_libraries(xnorcl_oclgrind_runner PRIVATE xnorcl_test_support)
  target_compile_definitions(xnorcl_oclgrind_runner
    PRIVATE XNORCL_CANARY_SOURCE="${CMAKE_CURRENT_SOURCE_DIR}/oclgrind/canaries.cl")

  set(oclgrind_command "${OCLGRIND_EXECUTABLE}" --data-races --uninitialized --check-api)
  # Oclgrind's report lines: "Invalid read of size ...", "Invalid write ...", "Read-write data race at ...",
  # "Write-write data race ...", "Uninitialized value ...", "Uninitialized address used to ...",
  # "Work-group divergence detected (barrier)", "Unaligned address on ...", "OCLGRIND FATAL ERROR" (an
# instruction the simulator cannot execute, after which results are meaningless), and for --check-api
  # "Oclgrind - OpenCL runtime error detected".
  set(oclgrind_report
    "Invalid read|Invalid write|Invalid memory|data race|Uninitialized|uninitialized|Unaligned address|divergence detected|FATAL ERROR|Oclgrind - ")

  # The configurations, in four processes so `ctest -j2` runs them in parallel (16 configurations in all).
  foreach(range "0;4" "4;4" "8;4" "12;4")
    list(GET range 0 first)
    list(GET range 1 count)
    math(EXPR last "${first} + ${count} - 1")
    add_test(NAME "oclgrind.kernels.${first}-${last}" COMMAND ${oclgrind_command}
      $<TARGET_FILE:xnorcl_oclgrind_runner> cases ${first} ${count})
    set_tests_properties("oclgrind.kernels.${first}-${last}" PROPERTIES
      LABELS oclgrind TIMEOUT 300
      FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")
  endforeach()

  # Negative controls: pass only when Oclgrind reports the canary's defect.
  add_test(NAME "oclgrind.canary.out_of_bounds_read_is_reported" COMMAND ${oclgrind_command}
    $<TARGET_FILE:xnorcl_oclgrind_runner> canary-out-of-bounds)
  set_tests_properties("oclgrind.canary.out_of_bounds_read_is_reported" PROPERTIES
    LABELS oclgrind TIMEOUT 120 PASS_REGULAR_EXPRESSION "Invalid read of size 4 at global memory")
  add_test(NAME "oclgrind.canary.local_race_is_reported" COMMAND ${oclgrind_command}
    $<TARGET_FILE:xnorcl_oclgrind_runner> canary-local-race)
  set_tests_properties("oclgrind.canary.local_race_is_reported" PROPERTIES
    LABELS oclgrind TIMEOUT 120 PASS_REGULAR_EXPRESSION "data race at local memory")
elseif(XNORCL_OCLGRIND_TESTS)
  message(STATUS "oclgrind not found: the Oclgrind tests (label oclgrind) are not registered")
endif()
