# SPDX-License-Identifier: Apache-2.0
# Unit tests of the tools' own logic (strict parsing, the bench's noise verdict): no device, no timing.
if(TARGET xnorcl_cli)
  add_executable(xnorcl_tool_tests test_main.cpp "${PROJECT_SOURCE_DIR}/tools/cli/test_cli.cpp"
    "${PROJECT_SOURCE_DIR}/tools/bench/test_noise.cpp"
    # The bench's parts that the verdict and the targets need; nothing that times or needs a device.
    "${PROJECT_SOURCE_DIR}/tools/bench/noise.cpp" "${PROJECT_SOURCE_DIR}/tools/bench/stats.cpp"
    "${PROJECT_SOURCE_DIR}/tools/bench/report.cpp" "${PROJECT_SOURCE_DIR}/tools/bench/layers.cpp"
    "${PROJECT_SOURCE_DIR}/tools/bench/json.cpp")
  target_include_directories(xnorcl_tool_tests PRIVATE "${PROJECT_SOURCE_DIR}/tools/bench")
  target_link_libraries(xnorcl_tool_tests PRIVATE xnorcl_cli xnorcl_test_support)
  catch_discover_tests(xnorcl_tool_tests TEST_PREFIX "tools: " PROPERTIES LABELS host)
endif()

# The tools' command lines refuse bad input before any device work (cross builds: no emulator for scripts).
if(TARGET xnorcl-bench AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME cli_strict
    COMMAND "${CMAKE_COMMAND}" -DBENCH=$<TARGET_FILE:xnorcl-bench> -DCLASSIFY=$<TARGET_FILE:xnorcl-classify>
            -DDEMO=$<TARGET_FILE:xnorcl-demo>
            -DTUNE=$<TARGET_FILE:xnorcl-tune> -DWORK=${CMAKE_CURRENT_BINARY_DIR}
            -P "${PROJECT_SOURCE_DIR}/tools/cli/cli_smoke_test.cmake")
  set_tests_properties(cli_strict PROPERTIES LABELS host TIMEOUT 60)
endif()

# xnorcl-tune stores its results and a second process runs them: the tuning file is read across processes;
# --no-store writes nothing.
if(TARGET xnorcl-tune AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME tune_across_processes
    COMMAND "${CMAKE_COMMAND}" -DTUNE=$<TARGET_FILE:xnorcl-tune> -DWORK=${CMAKE_CURRENT_BINARY_DIR}/tune_across
            -P "${PROJECT_SOURCE_DIR}/tools/tune_process_test.cmake")
  set_tests_properties(tune_across_processes PROPERTIES LABELS device TIMEOUT 300)
endif()

# The source folders depend one way (core <- runtime <- ops <- graph): no include points up.
add_test(NAME layering COMMAND "${CMAKE_COMMAND}" -DSRC=${PROJECT_SOURCE_DIR}/src
  -P "${PROJECT_SOURCE_DIR}/tools/check_layering.cmake")
set_tests_properties(layering PROPERTIES LABELS host)
