# SPDX-License-Identifier: Apache-2.0
# The soak: 1,000 warm-up runs, then 10,000 runs of a mix of small random layers on both variants
# must grow resident memory by less than 2 MiB. Registered only for the configuration "Soak", so the
# README's test command (no -C) leaves it out; run it with `ctest --test-dir build -C Soak -L soak`.
add_executable(xnorcl_soak soak/soak_main.cpp)
target_link_libraries(xnorcl_soak PRIVATE xnorcl_test_support)
add_test(NAME soak COMMAND xnorcl_soak 1000 10000 2048 CONFIGURATIONS Soak)
set_tests_properties(soak PROPERTIES LABELS "soak" SKIP_RETURN_CODE 77 TIMEOUT 600)
