#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's quick start: set up a fresh Debian 12 / Ubuntu 22.04 machine, build xnorcl, then run it.
#
#   tools/quickstart.sh run    install what is missing, build Release into build/, run the main job
#   tools/quickstart.sh test   install what is missing, build, run the whole test suite
#   tools/quickstart.sh deps   only install what is missing (CI's first phase)
#
# Extra CMake arguments come from XNORCL_CMAKE_ARGS (CI passes -DXNORCL_WERROR=ON).
set -euo pipefail

# The one list of system packages the project needs (CI installs through this script too).
packages=(cmake g++ ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd catch2 clinfo libclblast-dev libdnnl-dev
  oclgrind clang python3-matplotlib python3-venv python3-dev pkg-config default-jdk-headless junit5)

# What `run` runs once built: the benchmark of the default layer set on the default device (every layer checked
# bitwise against the host reference before and after timing).
main_job=(build/tools/bench/xnorcl-bench layers)

cd "$(dirname "${BASH_SOURCE[0]}")/.."

install_deps() {
  local missing=() p native_arch
  native_arch=$(dpkg --print-architecture)
  for p in "${packages[@]}"; do
    # dpkg-query is quick, so a machine that is already set up never waits for apt. It prints a line per
    # installed architecture (amd64 and a cross arm64, say); only the native one or "all" counts.
    if ! dpkg-query -W -f='${Architecture} ${db:Status-Status}\n' "$p" 2>/dev/null |
      grep -qxE "($native_arch|all) installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then
    echo "quickstart: all ${#packages[@]} packages already installed"
    return
  fi
  echo "quickstart: installing ${missing[*]}"
  local sudo=()
  ((EUID == 0)) || sudo=(sudo)
  # Wait for another apt (unattended upgrades on a fresh machine) instead of failing at once.
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
  "${apt[@]}" update
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
}

# build TESTS: configure build/ with the tests on or off and build everything that configuration has (the
# library and the tools; with ON, the test programs too). `run` needs no test program, which is most of the
# build time on a small machine.
build() {
  local tests=$1 start=$SECONDS
  echo "quickstart: configuring build/ (Release, tests $tests)"
  # Word splitting is intended: XNORCL_CMAKE_ARGS may hold several arguments.
  # shellcheck disable=SC2086
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DXNORCL_BUILD_TESTS="$tests" ${XNORCL_CMAKE_ARGS:-}
  echo "quickstart: building with $(nproc) jobs; a few minutes on a 2-core machine"
  cmake --build build --parallel "$(nproc)"
  echo "quickstart: built in $((SECONDS - start)) s"
}

# Runs a long, quiet command ("$@"), saying every 30 s that it is still at work, so that a terminal or a log
# never looks stuck; exits with the command's status.
with_heartbeat() {
  local what=$1 start=$SECONDS pid status=0
  shift
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    kill -0 "$pid" 2>/dev/null && echo "quickstart: $what still running ($((SECONDS - start)) s)"
  done
  wait "$pid" || status=$?
  echo "quickstart: $what took $((SECONDS - start)) s"
  return $status
}

# The Python package, installed by pip into a fresh virtual environment (build/venv), and its pytest suite.
python_tests() {
  rm -rf build/venv
  python3 -m venv build/venv
  # CMAKE_ARGS carries XNORCL_CMAKE_ARGS (CI's -DXNORCL_WERROR=ON) into pip's CMake build.
  # The [openvino] extra brings OpenVINO's reader and CPU plugin for the IR converter's conformance tests
  # (about 50 MB from PyPI, half a minute); with CI=true those tests fail rather than skip without it.
  # [all] also brings the TFLite readers (tflite, flatbuffers) for the Larq converter and onnx for the ONNX one;
  # [test] brings onnxruntime and qonnx, the engines the ONNX tests compare with.
  echo "quickstart: installing the Python package into build/venv: pip compiles the C++ library for it" \
    "(about 5 minutes on 2 cores) and fetches its test and converter dependencies"
  CMAKE_ARGS="${XNORCL_CMAKE_ARGS:-}" with_heartbeat "pip install" build/venv/bin/pip install --quiet ".[test,all]"
  # Larq Compute Engine's interpreter reruns the Larq fixtures (tests/python/test_larq_convert.py): its own
  # environment, as LCE 0.16 wants CPython 3.10-3.12 and numpy < 2 (about 60 MB from PyPI, no TensorFlow).
  local lce_env=()
  if python3 -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 12))'; then
    rm -rf build/venv-lce
    python3 -m venv build/venv-lce
    build/venv-lce/bin/pip install --quiet "larq-compute-engine==0.16.0" "numpy<2"
    lce_env=(XNORCL_LCE_PYTHON="$PWD/build/venv-lce/bin/python")
  else
    echo "quickstart: $(python3 --version) has no Larq Compute Engine wheel (3.10-3.12): its rerun is skipped"
  fi
  env "${lce_env[@]}" build/venv/bin/python -m pytest -q tests/python
}

case "${1:-}" in
  deps)
    install_deps
    ;;
  run)
    install_deps
    build OFF
    echo "quickstart: running ${main_job[*]}; its first start on a device compiles the OpenCL kernels" \
      "(measured on PoCL with 2 CPU cores: 5 s quiet, 25 s loaded, most of it at the first launches) and keeps" \
      "them in the program cache (XNORCL_CACHE_DIR, default ~/.cache/xnorcl), so later starts take under 0.5 s"
    # Exit status 3: everything measured and checked, but other work disturbed the timings (a noisy run, its
    # targets not judged): the bench has said so; the quick start itself worked.
    status=0
    "${main_job[@]}" || status=$?
    if ((status == 3)); then
      echo "quickstart: the machine was busy, so the bench judged no target; rerun when it is quiet"
      status=0
    fi
    exit $status
    ;;
  test)
    install_deps
    build ON
    ctest --test-dir build --output-on-failure -j2
    python_tests
    ;;
  *)
    echo "usage: $0 run|test|deps" >&2
    exit 2
    ;;
esac
