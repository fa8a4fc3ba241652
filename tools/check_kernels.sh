#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles every kernel file with every build-option set the runtime can emit, as strict OpenCL C 1.2 with
# no extension (what Mali and Adreno drivers accept), and refuses build options that would make results
# depend on the driver's floating-point shortcuts (results must be exact on every device).
#
#   tools/check_kernels.sh build/tools/xnorcl-kernel-options
set -euo pipefail

if (($# != 1)); then
  echo "usage: $0 path/to/xnorcl-kernel-options" >&2
  exit 2
fi
options_tool=$1
cd "$(dirname "${BASH_SOURCE[0]}")/.."

forbidden=(-cl-fast-relaxed-math -cl-finite-math-only -cl-unsafe-math-optimizations -cl-mad-enable
  -cl-denorms-are-zero)

# Read the whole table first: a failing tool must fail this script, which a pipe into `while` would hide.
table=$("$options_tool")

# The runtime adds -DNATIVE_POPCOUNT=1 on one kind of device only (PoCL compiling for skylake-avx512 on an
# x86-64 CPU with AVX-512 VPOPCNTDQ): files that use it are compiled once more with it, for that target and
# through the assembler (its inline assembly names x86 vector registers and instructions that a syntax check
# would not read), as well as checked as portable OpenCL C without it. The bench's peak kernels likewise.
native=(-DNATIVE_POPCOUNT=1 -target x86_64-unknown-linux-gnu -march=skylake-avx512 -O1 -c)
objects=$(mktemp -d)
trap 'rm -rf "$objects"' EXIT

declare -A covered=()
checked=0
native_checked=0
failures=0
compile() {
  clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -Xclang -cl-ext=-all -Werror "$@"
}
while IFS=$'\t' read -r file options; do
  [[ -n "$file" ]] || continue
  read -ra opts <<<"$options"
  for opt in "${opts[@]}"; do
    for bad in "${forbidden[@]}"; do
      if [[ "$opt" == "$bad" ]]; then
        echo "FAIL: $file: forbidden build option $opt in '$options'" >&2
        failures=$((failures + 1))
      fi
    done
  done
  if [[ ! -f "cl_kernels/$file" ]]; then
    echo "FAIL: the runtime builds cl_kernels/$file, which does not exist" >&2
    failures=$((failures + 1))
    continue
  fi
  covered[$file]=1
  if ! compile -fsyntax-only "${opts[@]}" "cl_kernels/$file"; then
    echo "FAIL: cl_kernels/$file with '$options'" >&2
    failures=$((failures + 1))
  fi
  checked=$((checked + 1))
  if grep -q NATIVE_POPCOUNT "cl_kernels/$file"; then
    if ! compile "${opts[@]}" "${native[@]}" -o "$objects/native.o" "cl_kernels/$file"; then
      echo "FAIL: cl_kernels/$file with '$options ${native[*]}'" >&2
      failures=$((failures + 1))
    fi
    native_checked=$((native_checked + 1))
  fi
done <<<"$table"

for peak_options in "" "-DPEAK_ULONG" "-DNATIVE_POPCOUNT=1" "-DPEAK_ULONG -DNATIVE_POPCOUNT=1"; do
  read -ra opts <<<"$peak_options"
  extra=(-fsyntax-only)
  [[ "$peak_options" == *NATIVE_POPCOUNT* ]] && extra=("${native[@]:1}" -o "$objects/peak.o")
  if ! compile "${extra[@]}" "${opts[@]}" tools/bench/kernels/peak.cl; then
    echo "FAIL: tools/bench/kernels/peak.cl with '$peak_options'" >&2
    failures=$((failures + 1))
  fi
done

shopt -s nullglob
kernel_files=(cl_kernels/*.cl)
for path in "${kernel_files[@]}"; do
  if [[ -z "${covered[${path#cl_kernels/}]:-}" ]]; then
    echo "FAIL: $path is built with no option set of the runtime, so nothing checks it" >&2
    failures=$((failures + 1))
  fi
done
if ((checked == 0)); then
  echo "FAIL: no (kernel file, build options) pair to check" >&2
  failures=$((failures + 1))
fi

echo "check_kernels: $checked (file, option-set) pairs checked over ${#kernel_files[@]} kernel files" \
  "($native_checked of them again with -DNATIVE_POPCOUNT=1), $failures failures"
((failures == 0))
