# SPDX-License-Identifier: Apache-2.0
# Reliability tests (limits, OpenCL failures, bad arguments) in an executable of their own: it defines the
# OpenCL entry points the library calls (faults/cl_intercept.cpp), so that no other test runs through them.
# A static library built with XNORCL_DLOPEN_OPENCL defines those entry points itself: linking both would define
# them twice, so that one configuration goes without these tests (the shared one runs them, on top of the
# library's own definitions).
if(XNORCL_DLOPEN_OPENCL AND NOT BUILD_SHARED_LIBS)
  message(STATUS "xnorcl_fault_tests not built: a static XNORCL_DLOPEN_OPENCL library defines the OpenCL entry points they intercept")
  return()
endif()
file(GLOB fault_test_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/faults/*.cpp")
add_executable(xnorcl_fault_tests test_main.cpp ${fault_test_sources})
target_link_libraries(xnorcl_fault_tests PRIVATE xnorcl_test_support ${CMAKE_DL_LIBS})
# Registered like the device tests: one CTest test per variant, labelled device;local or device;global, so
# that .ci/run counts them with the rest.
catch_discover_tests(xnorcl_fault_tests TEST_SPEC "[local]" TEST_PREFIX "local: "
  TEST_LIST xnorcl_fault_local_tests PROPERTIES SKIP_RETURN_CODE 77)
catch_discover_tests(xnorcl_fault_tests TEST_SPEC "[global]" TEST_PREFIX "global: "
  TEST_LIST xnorcl_fault_global_tests PROPERTIES SKIP_RETURN_CODE 77)
# Every fault test is a variant test (XNORCL_VARIANT_TEST), so a third discovery of the untagged ones would find
# none and make CMake warn "contains no tests" on every build. Instead this test fails if an untagged one
# appears, which the two registrations above would never run: Catch2 v2's listing exits with the number of
# tests it lists.
add_test(NAME fault_tests_name_their_variant
  COMMAND xnorcl_fault_tests --list-test-names-only "~[local]~[global]")
set_tests_properties(fault_tests_name_their_variant PROPERTIES LABELS host)
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/fault_variant_labels.cmake"
  "foreach(variant local global)\n"
  "  if(xnorcl_fault_\${variant}_tests)\n"
  "    set_tests_properties(\${xnorcl_fault_\${variant}_tests} PROPERTIES LABELS \"device;\${variant}\")\n"
  "  endif()\n"
  "endforeach()\n")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${CMAKE_CURRENT_BINARY_DIR}/fault_variant_labels.cmake")
