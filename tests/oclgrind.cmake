# SPDX-License-Identifier: Apache-2.0
# Oclgrind: xnorcl's kernels under the simulator with its memory, data-race, uninitialized-value and API checks,
# plus negative controls (canary kernels with a known defect) that prove the checks are live.
#
# Label `oclgrind` only (not `device`): run them with `ctest -L oclgrind` (about 1-3 minutes on 2 cores).
# Oclgrind is loaded through its `oclgrind` command (LD_PRELOAD of its runtime), never installed as an ICD.
find_program(OCLGRIND_EXECUTABLE oclgrind)
# Oclgrind simulates on the build machine, so a cross build cannot run it.
if(CMAKE_CROSSCOMPILING)
  set(oclgrind_default OFF)
else()
  set(oclgrind_default ON)
endif()
option(XNORCL_OCLGRIND_TESTS "Register the Oclgrind tests (label oclgrind)" ${oclgrind_default})

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

  # The configurations, in eight processes so `ctest -j2` runs them in parallel (32 configurations in all;
  # 16-19 use 64-bit words, 20-27 the packing kernels' vector runs (keys and float compares), 28-29 a word
  # per work-item, 30-31 vector runs again).
  foreach(range "0;4" "4;4" "8;4" "12;4" "16;4" "20;4" "24;4" "28;4")
    list(GET range 0 first)
    list(GET range 1 count)
    math(EXPR last "${first} + ${count} - 1")
    add_test(NAME "oclgrind.kernels.${first}-${last}" COMMAND ${oclgrind_command}
      $<TARGET_FILE:xnorcl_oclgrind_runner> cases ${first} ${count})
    set_tests_properties("oclgrind.kernels.${first}-${last}" PROPERTIES
      LABELS oclgrind TIMEOUT 300
      FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")
  endforeach()

  # BinaryConvolution's output choices and packed input (the runner's `io` table: Local and Global, 32- and
  # 64-bit words, and a work-group cap that packs after the GEMM), in two processes.
  foreach(range "0;3" "3;2")
    list(GET range 0 first)
    list(GET range 1 count)
    math(EXPR last "${first} + ${count} - 1")
    add_test(NAME "oclgrind.conv_io.${first}-${last}" COMMAND ${oclgrind_command}
      $<TARGET_FILE:xnorcl_oclgrind_runner> io ${first} ${count})
    set_tests_properties("oclgrind.conv_io.${first}-${last}" PROPERTIES
      LABELS oclgrind TIMEOUT 300
      FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")
  endforeach()

  # Every GEMM configuration the tuner offers (its exhaustive search on Oclgrind: about 90, Local's then
  # Global's), each through the tuning table, in four processes.
  foreach(range "0;23" "23;22" "45;22" "67;1000")
    list(GET range 0 first)
    list(GET range 1 count)
    add_test(NAME "oclgrind.tuning.from_${first}" COMMAND ${oclgrind_command}
      $<TARGET_FILE:xnorcl_oclgrind_runner> tuning ${first} ${count})
    set_tests_properties("oclgrind.tuning.from_${first}" PROPERTIES
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

  # The network layers' kernels (a layer chain run as a graph: both max-pools, binary_fc, threshold_pack,
  # elementwise, on both variants) in a runner of their own.
  add_executable(xnorcl_oclgrind_network "${CMAKE_CURRENT_SOURCE_DIR}/oclgrind/oclgrind_network.cpp")
  target_link_libraries(xnorcl_oclgrind_network PRIVATE xnorcl_test_support)
  add_test(NAME "oclgrind.network_layers" COMMAND ${oclgrind_command} $<TARGET_FILE:xnorcl_oclgrind_network>)
  set_tests_properties("oclgrind.network_layers" PROPERTIES
    LABELS oclgrind TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")

  # The float graph ops' kernels (elementwise, activation, avg_pool, reduce_mean, softmax, concat, transpose)
  # in one small graph on both variants.
  add_executable(xnorcl_oclgrind_graph "${CMAKE_CURRENT_SOURCE_DIR}/oclgrind/oclgrind_graph.cpp")
  target_link_libraries(xnorcl_oclgrind_graph PRIVATE xnorcl_test_support)
  add_test(NAME "oclgrind.graph_float_ops" COMMAND ${oclgrind_command} $<TARGET_FILE:xnorcl_oclgrind_graph>)
  set_tests_properties("oclgrind.graph_float_ops" PROPERTIES
    LABELS oclgrind TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")

  # Sanitizer builds load Oclgrind as an ICD through a private OCL_ICD_VENDORS folder instead of its wrapper:
  # the wrapper's LD_PRELOAD would put Oclgrind's runtime ahead of the sanitizer's.
  if(XNORCL_SANITIZER)
    find_file(OCLGRIND_ICD_LIBRARY liboclgrind-rt-icd.so PATHS /usr/lib/oclgrind /usr/local/lib/oclgrind
      PATH_SUFFIXES lib lib/oclgrind)
    set(icd_dir "${CMAKE_CURRENT_BINARY_DIR}/oclgrind_vendors")
    file(WRITE "${icd_dir}/oclgrind.icd" "${OCLGRIND_ICD_LIBRARY}\n")
    set(icd_environment "OCL_ICD_VENDORS=${icd_dir}" "OCL_ICD_FILENAMES=" OCLGRIND_DATA_RACES=1
      OCLGRIND_UNINITIALIZED=1 OCLGRIND_CHECK_API=1)
    add_test(NAME "oclgrind_icd.kernels" COMMAND $<TARGET_FILE:xnorcl_oclgrind_runner> cases 0 16)
    set_tests_properties("oclgrind_icd.kernels" PROPERTIES LABELS oclgrind_icd TIMEOUT 600
      ENVIRONMENT "${icd_environment}" FAIL_REGULAR_EXPRESSION "${oclgrind_report};FAILED")
    add_test(NAME "oclgrind_icd.canary.out_of_bounds_read_is_reported"
      COMMAND $<TARGET_FILE:xnorcl_oclgrind_runner> canary-out-of-bounds)
    set_tests_properties("oclgrind_icd.canary.out_of_bounds_read_is_reported" PROPERTIES LABELS oclgrind_icd
      TIMEOUT 120 ENVIRONMENT "${icd_environment}" PASS_REGULAR_EXPRESSION "Invalid read of size 4 at global memory")
  endif()
elseif(XNORCL_OCLGRIND_TESTS)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "oclgrind not found: CI must run the Oclgrind tests (apt-get install oclgrind)")
  endif()
  message(WARNING "oclgrind not found: the Oclgrind tests (label oclgrind) are not registered")
endif()
