# SPDX-License-Identifier: Apache-2.0
# Canaries of the sanitizer jobs: each must fail, proving its sanitizer is live.
if(XNORCL_SANITIZER STREQUAL "address")
  add_executable(canary_address sanitizers/canary_address.cpp)
  add_test(NAME sanitizer_canary_address COMMAND canary_address)
  set_tests_properties(sanitizer_canary_address PROPERTIES WILL_FAIL TRUE LABELS "host;canary")
elseif(XNORCL_SANITIZER STREQUAL "thread")
  add_executable(canary_thread sanitizers/canary_thread.cpp)
  add_test(NAME sanitizer_canary_thread COMMAND canary_thread)
  set_tests_properties(sanitizer_canary_thread PROPERTIES WILL_FAIL TRUE LABELS "host;canary")
endif()
