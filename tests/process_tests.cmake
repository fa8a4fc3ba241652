# SPDX-License-Identifier: Apache-2.0
# Tests that need a process of their own, because they change what the OpenCL ICD loader sees.

# With the ICD loader pointed at an empty vendor directory there is no OpenCL platform at all: Runtime::create
# must say so and name the package that provides one.
set(no_vendors_dir "${CMAKE_CURRENT_BINARY_DIR}/empty_opencl_vendors")
file(MAKE_DIRECTORY "${no_vendors_dir}")
add_executable(xnorcl_no_platform no_platform_main.cpp)
target_link_libraries(xnorcl_no_platform PRIVATE xnorcl::xnorcl xnorcl_warnings)
add_test(NAME no_platform COMMAND xnorcl_no_platform)
set_tests_properties(no_platform PROPERTIES
  LABELS host
  ENVIRONMENT "OCL_ICD_VENDORS=${no_vendors_dir};OCL_ICD_FILENAMES=")

# The program cache stores PoCL programs after their kernels' first launches; visible only with PoCL's own
# kernel cache off, which PoCL reads once per process (tests/device/test_program_cache.cpp). Its builds from
# source are a cold start's, so it also checks that they print no compiler warnings (PoCL on a CPU without
# AVX-512 printed "41 warnings generated." on the process's stderr).
add_test(NAME program_cache_after_launch
         COMMAND xnorcl_device_tests "[.cache_after_launch]")
set_tests_properties(program_cache_after_launch
  PROPERTIES LABELS device SKIP_RETURN_CODE 77 ENVIRONMENT "POCL_KERNEL_CACHE=0"
  FAIL_REGULAR_EXPRESSION "warnings? generated")

# One Runtime shared by 12 threads from its very first run, each process with an empty program cache and
# PoCL's kernel cache off: the program binaries are stored while other threads launch. Without the launch
# gate a race there aborted 9 of 30 processes of this test, so it runs in 10 processes (a race at that rate
# would pass all 10 with a probability under 3%); the 9 repeats carry the label "repeat", which the sanitizer
# and loader jobs leave out (one process covers their code).
# The test program runs through sh, so a cross build's emulator (qemu) is named here: CMake adds it only to
# commands that are targets.
list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " cold_cache_emulator)
foreach(i RANGE 1 10)
  add_test(NAME cold_cache_threads_${i}
           COMMAND sh -c "d=$(mktemp -d) && XNORCL_CACHE_DIR=\"$d\" ${cold_cache_emulator} \"$0\" '[.cold_threads]'; rc=$?; rm -rf \"$d\"; exit $rc"
                   $<TARGET_FILE:xnorcl_device_tests>)
  set(labels device)
  if(i GREATER 1)
    set(labels "device;repeat")
  endif()
  set_tests_properties(cold_cache_threads_${i}
    PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 ENVIRONMENT "POCL_KERNEL_CACHE=0")
endforeach()

# A Runtime held by a static constructed after another Runtime deferred its stores: at exit it must store
# nothing (PoCL would compile inside a half torn-down LLVM; 4 of 6 such processes crashed when one exit handler
# served the whole process). The check that its cache directory stayed empty runs after the process is gone.
add_test(NAME store_at_exit
         COMMAND sh -c "d=$(mktemp -d) && XNORCL_TEST_LATE_CACHE=\"$d\" ${cold_cache_emulator} \"$0\" '[.store_at_exit]'; rc=$?; n=$(ls -A \"$d\" | wc -l); rm -rf \"$d\"; if [ $rc -ne 0 ]; then exit $rc; fi; if [ $n -ne 0 ]; then echo \"$n entries stored at exit\"; exit 1; fi"
                 $<TARGET_FILE:xnorcl_device_tests>)
set_tests_properties(store_at_exit
  PROPERTIES LABELS device SKIP_RETURN_CODE 77 ENVIRONMENT "POCL_KERNEL_CACHE=0")

# Planning is near-linear in the node count: a 48,000-node graph plans and runs in seconds (a buffer
# assignment that compared every pair of tensors took over 30 s on the 2-core machine, the new code 1 s); the
# test itself is hidden from discovery.
add_test(NAME graph_planning_scale COMMAND xnorcl_device_tests "[planning_scale]")
set_tests_properties(graph_planning_scale PROPERTIES TIMEOUT 30 LABELS device SKIP_RETURN_CODE 77)
