#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Android loading of libOpenCL, tested on Linux with PoCL. For a shared and a static xnorcl
# built with -DXNORCL_DLOPEN_OPENCL=ON it checks that
#   - neither libxnorcl.so nor an app (tests/dlopen_consumer: its own cl::Program, cl::Kernel, cl::Buffer and
#     cl::CommandQueue, plus xnorcl::Runtime and a BinaryConvolution) links libOpenCL: no -lOpenCL on the app's
#     link line, no NEEDED libOpenCL in readelf -d;
#   - the app runs on PoCL through the loader, with the default search list and with a list whose first
#     entry is missing;
#   - the library's device tests (label device: the op, graph, fault, tool and README-example tests that
#     open a device) pass on PoCL through the loader, less the tuning sweeps and the repeated cold-start
#     processes (labels sweep and repeat), which call no cl* function the rest does not; the host tests and
#     the bench smoke tests are the README's test command's (the first call no cl* function at all);
#   - where nothing loads, Runtime::create throws DeviceNotFound listing every path tried with its dlerror():
#     for a list given in XNORCL_OPENCL_LIBRARY_PATHS (the test-only override), and for the default list with
#     the real libOpenCL hidden in a private mount namespace (where unshare is permitted).
# Needs root (apt-get) on a fresh Debian 12 machine; prints the time of each phase.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

JOBS=${XNORCL_JOBS:-2}
# No ocl-icd-opencl-dev: the dlopen build needs only the headers, and the ICD loader's libOpenCL.so.1 at run time.
PACKAGES=(cmake make g++ binutils util-linux mount pocl-opencl-icd ocl-icd-libopencl1 opencl-c-headers
  opencl-clhpp-headers)

PHASES_JOB=android_loader
# shellcheck source=.ci/phases.sh
source .ci/phases.sh  # the working directory is the repository root

fail() {
  echo "FAIL: $*" >&2
  return 1
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "all packages present"
    return
  fi
  echo "installing: ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# <mode>: shared or static. Builds and installs xnorcl with the loader into build-dlopen-<mode>/install; the
# shared build also builds the tools and the device tests' programs (not the host tests': building every
# test program was most of this job's minutes), which then run through the loader as well.
build_library() {
  local build=build-dlopen-$1 shared=OFF tests=OFF targets=()
  [[ $1 == shared ]] && shared=ON tests=ON targets=(--target xnorcl xnorcl-demo xnorcl-classify xnorcl-tune
    xnorcl-bench xnorcl_device_tests xnorcl_fault_tests xnorcl_readme_example)
  # Oclgrind preloads its own OpenCL runtime, bypassing the loader: nothing to learn about the loader there.
  cmake -S . -B "$build" -DXNORCL_DLOPEN_OPENCL=ON -DBUILD_SHARED_LIBS=$shared -DXNORCL_WERROR=ON \
    -DXNORCL_BUILD_TESTS=$tests -DXNORCL_BUILD_TOOLS=$tests -DXNORCL_OCLGRIND_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/$build/install"
  cmake --build "$build" -j "$JOBS" "${targets[@]}"
  rm -rf "$build/install" "$build/cache"
  cmake --install "$build" >/dev/null
}

# Every cl* function the loader defines (clGetPlatformIDs and the XNORCL_FORWARD list) is a defined symbol of
# the library, and nothing in it refers to a cl* function it does not define.
check_library() {
  local lib expected defined undefined missing
  expected=$( (echo clGetPlatformIDs; sed -n 's/^XNORCL_FORWARD([^,]*, *\(cl[A-Za-z0-9]*\),.*/\1/p' \
    src/runtime/opencl_loader.cpp) | sort -u)
  if [[ $1 == shared ]]; then
    lib="build-dlopen-shared/install/lib/libxnorcl.so"
    readelf -d "$lib" | grep NEEDED
    ! readelf -d "$lib" | grep -q 'NEEDED.*libOpenCL' || fail "$lib has NEEDED libOpenCL"
    defined=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^cl[A-Z]/ {print $3}' | sort -u)
    undefined=$(nm -D --undefined-only "$lib" | awk '$2 ~ /^cl[A-Z]/ {print $2}' | sort -u)
  else
    lib="build-dlopen-static/install/lib/libxnorcl.a"
    defined=$(nm --defined-only "$lib" 2>/dev/null | awk '$2 == "T" && $3 ~ /^cl[A-Z]/ {print $3}' | sort -u)
    undefined=$(nm --undefined-only "$lib" 2>/dev/null | awk '$2 ~ /^cl[A-Z]/ {print $2}' | sort -u |
      comm -23 - <(echo "$defined"))
  fi
  missing=$(comm -23 <(echo "$expected") <(echo "$defined"))
  echo "$lib: $(grep -c . <<<"$defined") cl* entry points defined (expected $(grep -c . <<<"$expected"))"
  [[ -z "$missing" ]] || fail "not defined: $missing"
  [[ -z "$undefined" ]] || fail "$lib refers to cl* functions it does not define: $undefined"
  # Every function OpenCL-CLHPP can call when configured as xnorcl configures it (the calls left in its
  # preprocessed text at CL_HPP_TARGET_OPENCL_VERSION 120) is among them, whatever an app uses of it.
  local clhpp
  clhpp=$(echo '#include <xnorcl/opencl.hpp>' | g++ -std=c++17 -x c++ -E -Iinclude - |
    grep -oE '::cl[A-Z][A-Za-z0-9]*' | sed 's/^:://' | sort -u)
  missing=$(comm -23 <(echo "$clhpp") <(echo "$defined"))
  echo "OpenCL-CLHPP (target 1.2) calls $(grep -c . <<<"$clhpp") cl* functions, all defined"
  [[ -z "$missing" ]] || fail "OpenCL-CLHPP calls functions the loader does not define: $missing"
}

# The library's device tests on PoCL through the loader: the test programs link no libOpenCL.
# The sweeps and repeats (see above) are the README's test command's.
run_test_suite() {
  local build=build-dlopen-shared
  ! readelf -d "$build/tests/xnorcl_device_tests" | grep -q 'NEEDED.*libOpenCL' ||
    fail "xnorcl_device_tests has NEEDED libOpenCL"
  XNORCL_CACHE_DIR="$PWD/$build/cache" ctest --test-dir "$build" -j "$JOBS" --output-on-failure --timeout 600 \
    -L '^device$' -LE 'sweep|repeat' 2>&1 | tee "$build/ctest.log" | grep -vE '^ *(Start|[0-9]+/[0-9]+ Test)'
  local device
  device=$(ctest --test-dir "$build" -N -L '^device$' -LE 'sweep|repeat' | sed -n 's/^Total Tests: //p')
  grep -q '^100% tests passed' "$build/ctest.log" || fail "tests failed"
  ! grep -q '(Skipped)$' "$build/ctest.log" || fail "tests skipped"
  echo "all tests passed through the loader, $device of them device tests"
}

# Builds the app against the installed package and checks that nothing of it links libOpenCL.
build_consumer() {
  local build=build-dlopen-$1
  rm -rf "$build/consumer"
  cmake -S tests/dlopen_consumer -B "$build/consumer" -DCMAKE_PREFIX_PATH="$PWD/$build/install" \
    -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build/consumer" -j "$JOBS" --verbose | tee "$build/consumer/build.log" | grep -- ' -o dlopen_consumer'
  ! grep -- ' -o dlopen_consumer' "$build/consumer/build.log" | grep -qi 'opencl' ||
    fail "the app's link line names OpenCL"
  local app=$build/consumer/dlopen_consumer
  readelf -d "$app" | grep NEEDED
  ! readelf -d "$app" | grep -q 'NEEDED.*libOpenCL' || fail "$app has NEEDED libOpenCL"
  if [[ $1 == shared ]]; then
    echo "cl* functions the app imports from libxnorcl.so:" \
      "$(nm "$app" | awk '$1 == "U" && $2 ~ /^cl[A-Z]/ {print $2}' | tr '\n' ' ')"
  else
    echo "cl* functions linked into the app from libxnorcl.a:" \
      "$(nm "$app" | awk '$2 == "T" && $3 ~ /^cl[A-Z]/' | wc -l)"
  fi
}

# <mode> [env...]: runs the app on PoCL; it must pass and must have mapped the libOpenCL the loader chose.
# The program cache is kept in the build tree: the first run builds the kernels, the next loads binaries.
run_on_pocl() {
  local build=build-dlopen-$1 out
  shift
  out=$(env XNORCL_CACHE_DIR="$PWD/$build/cache" "$@" "$build/consumer/dlopen_consumer" 2>&1) ||
    { echo "$out"; fail "the app failed"; }
  echo "$out"
  grep -q '^PASS$' <<<"$out" || fail "no PASS"
  grep -q '^mapped: .*libOpenCL' <<<"$out" || fail "no libOpenCL mapped"
}

# <mode>: with a search list where nothing loads, the error names every entry with why it failed: one
# missing absolute path, one missing name, a file that is not a library, and libxnorcl itself (a library
# that exports clGetPlatformIDs but is not a driver).
run_without_library() {
  local build=build-dlopen-$1 out path paths=()
  paths=(/nonexistent/lib64/libOpenCL.so libOpenCL-not-installed.so "$PWD/.ci/android_loader.sh")
  [[ $1 == shared ]] && paths+=("$PWD/$build/install/lib/libxnorcl.so")
  out=$(XNORCL_OPENCL_LIBRARY_PATHS=$(IFS=:; echo "${paths[*]}") "$build/consumer/dlopen_consumer" --no-driver 2>&1) ||
    { echo "$out"; fail "the app did not see the expected errors"; }
  echo "$out"
  for path in "${paths[@]}"; do
    grep -qF -- "  $path: " <<<"$out" || fail "the error does not list $path"
  done
  echo "every one of the ${#paths[@]} paths tried is listed"
}

# <mode>: the default search list, with the ICD loader's file replaced by /dev/null in a private mount
# namespace (nothing outside this one command sees it), so that no candidate loads.
run_default_list_without_library() {
  local app=build-dlopen-$1/consumer/dlopen_consumer real out path bits=lib64
  if ! unshare -m true 2>/dev/null; then
    echo "NOT RUN: unshare -m is not permitted here; the XNORCL_OPENCL_LIBRARY_PATHS test above covers the report"
    return
  fi
  real=$(realpath "$(ldconfig -p | awk '/libOpenCL\.so\.1 / {print $NF; exit}')")
  [[ $(getconf LONG_BIT) == 64 ]] || bits=lib
  # shellcheck disable=SC2016  # $1 and $2 are the inner shell's arguments
  out=$(unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" --no-driver' sh "$real" "$app" 2>&1) ||
    { echo "$out"; fail "the app did not see the expected errors"; }
  echo "$out"
  for path in libOpenCL.so libOpenCL.so.1 /system/vendor/$bits/libOpenCL.so /vendor/$bits/libOpenCL.so \
    /system/$bits/libOpenCL.so libOpenCL-pixel.so libOpenCL-car.so; do
    grep -qF -- "  $path: " <<<"$out" || fail "the error does not list $path"
  done
  echo "every path of the default list is listed"
}

phase "install packages" install_packages
for mode in shared static; do
  phase "$mode: build and install xnorcl (-DXNORCL_DLOPEN_OPENCL=ON)" build_library $mode
  phase "$mode: check the library" check_library $mode
  [[ $mode == shared ]] && phase "shared: the test suite through the loader (ctest)" run_test_suite
  phase "$mode: build the app (no -lOpenCL)" build_consumer $mode
  phase "$mode: run on PoCL through the loader" run_on_pocl $mode
  phase "$mode: run with the first candidate missing" run_on_pocl $mode \
    XNORCL_OPENCL_LIBRARY_PATHS=/nonexistent/libOpenCL.so:libOpenCL.so.1
  phase "$mode: no library loads (XNORCL_OPENCL_LIBRARY_PATHS)" run_without_library $mode
done
phase "shared: no library loads (default list)" run_default_list_without_library shared
