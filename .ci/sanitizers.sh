#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer jobs: the suite under AddressSanitizer + UndefinedBehaviorSanitizer on PoCL, and the thread
# test under ThreadSanitizer. Each job has a canary test that must fail, proving its sanitizer is live.
# Both build at -O1 with line tables only (-g1): a sanitizer's reports keep their file:line stacks, and the
# two builds take less than half the time that -O2 -g takes, which was most of these jobs' minutes.
# The ASan suite leaves out what only repeats host code the rest of it runs: the tuning sweeps (label sweep:
# every candidate of a search space through the same planning code) and the 9 repeated cold-start
# processes (label repeat); the README's test command runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
job=${1:-all}
jobs=${CTEST_JOBS:-2}
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  -DXNORCL_WERROR=ON -DXNORCL_BUILD_TOOLS=OFF)

asan() {
  cmake -S . -B build-asan "${sanitizer_flags[@]}" -DXNORCL_SANITIZER=address \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    >/dev/null
  cmake --build build-asan -j2
  # intercept_tls_get_addr=0: this GCC's LeakSanitizer (12) takes a dynamic TLS block that starts 16 bytes
  # past a page boundary for one with a {size, start} header in front (which only a fork of glibc wrote);
  # glibc allocates the blocks with malloc, and where ASan's allocator puts one there, LeakSanitizer reads
  # ASan's own chunk header as the block's bounds and its tracer crashes on them ("Tracer caught signal 11",
  # google/sanitizers#1409; LLVM 17 fixed it). Which block lands there follows the process's allocations,
  # so the same tests crash on every run once some change moves them. Without the interception only the TLS
  # of libraries loaded by dlopen (PoCL and LLVM, whose leaks are suppressed below) stops being a root:
  # xnorcl's and the tests' own TLS is static and still scanned, and fewer roots can only report more leaks.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0"
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # PoCL's kernel cache stays as the README's test command left it: compiling every program cold in each of
  # the suite's processes took about 6 of this job's minutes and ran no xnorcl code. The processes that test
  # cold builds (program_cache_after_launch, cold_cache_threads_1) turn it off themselves, so PoCL's
  # compiler still runs inside the instrumented process there.
  export XNORCL_CACHE_DIR=off
  # The canary must fail with ASan's own report, not for any other reason.
  build-asan/tests/canary_address >/tmp/canary_address.log 2>&1 && { echo "ASan canary did not fail"; exit 1; }
  grep -q "ERROR: AddressSanitizer: heap-buffer-overflow" /tmp/canary_address.log ||
    { cat /tmp/canary_address.log; echo "ASan canary failed without ASan's report"; exit 1; }
  echo "ASan canary: reported as expected"
  # LeakSanitizer's own tracer sometimes crashes while it stops the world for the final leak check ("Tracer
  # caught signal 11 ... LeakSanitizer has encountered a fatal error", google/sanitizers#1353), more often on a
  # loaded machine: the failed tests run once more, only on that signature, with no sanitizer report in the log.
  local log
  log=$(mktemp)
  if ! ctest --test-dir build-asan -j"$jobs" --output-on-failure -LE "oclgrind|soak|sweep|repeat" 2>&1 | tee "$log"; then
    if grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
      ! grep -qE "ERROR: (AddressSanitizer|LeakSanitizer: detected)|runtime error" "$log"; then
      echo "rerunning the failed tests once: LeakSanitizer's tracer crashed (google/sanitizers#1353)"
      ctest --test-dir build-asan --output-on-failure --rerun-failed
    else
      exit 1
    fi
  fi
  if [ -n "$(ctest --test-dir build-asan -N -L oclgrind_icd | grep 'Test *#' || true)" ]; then
    ctest --test-dir build-asan --output-on-failure -L oclgrind_icd
  fi
}

tsan() {
  # Only the programs this job runs: the device tests (the thread tests are among them) and the canary.
  cmake -S . -B build-tsan "${sanitizer_flags[@]}" -DXNORCL_SANITIZER=thread -DXNORCL_OCLGRIND_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" >/dev/null
  cmake --build build-tsan -j2 --target xnorcl_device_tests canary_thread
  export TSAN_OPTIONS="halt_on_error=1:suppressions=$PWD/tests/sanitizers/tsan.supp"
  export XNORCL_CACHE_DIR=off
  # TSan needs a fixed memory layout: no address-space randomisation.
  local norandom="setarch $(uname -m) -R"
  $norandom build-tsan/tests/canary_thread >/tmp/canary_thread.log 2>&1 && { echo "TSan canary did not fail"; exit 1; }
  grep -q "WARNING: ThreadSanitizer: data race" /tmp/canary_thread.log ||
    { cat /tmp/canary_thread.log; echo "TSan canary failed without TSan's report"; exit 1; }
  echo "TSan canary: reported as expected"
  $norandom ctest --test-dir build-tsan --output-on-failure -R "threads|canary" -E cold_cache_threads
  # A cold start compiles every program inside PoCL, on PoCL's worker threads, in LLVM and libstdc++: none of
  # them instrumented, and PoCL's own locks are ignored (called_from_lib above), so TSan saw about 160 races
  # per process between PoCL's threads inside LLVM's string and vector code. Those processes run with the
  # option that ignores interceptors called from uninstrumented libraries; xnorcl's own loads and stores stay
  # checked (the canary still fails under it). One of the ten processes (each runs the same 12 threads;
  # a second took about 90 s here): the rest repeat the PoCL abort hunt that the main suite already runs.
  TSAN_OPTIONS="$TSAN_OPTIONS:ignore_noninstrumented_modules=1" \
    $norandom build-tsan/tests/canary_thread >/tmp/canary_thread_cold.log 2>&1 &&
    { echo "TSan canary did not fail with ignore_noninstrumented_modules"; exit 1; }
  grep -q "WARNING: ThreadSanitizer: data race" /tmp/canary_thread_cold.log ||
    { cat /tmp/canary_thread_cold.log; echo "TSan canary failed without TSan's report"; exit 1; }
  TSAN_OPTIONS="$TSAN_OPTIONS:ignore_noninstrumented_modules=1" \
    $norandom ctest --test-dir build-tsan --output-on-failure -R "^cold_cache_threads_1$"
}

case "$job" in
  address) asan ;;
  thread) tsan ;;
  all) asan; tsan ;;
  *) echo "usage: $0 [address|thread|all]"; exit 2 ;;
esac
