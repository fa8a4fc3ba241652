#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts "SPDX-License-Identifier: Apache-2.0" near the top of every source file that lacks it: C++ and OpenCL
# C and Java (//), CMake, shell and Python (#), after a #! line where there is one. Idempotent, so it can be
# run again after merges.
#
#   tools/spdx_headers.sh           add the line where it is missing
#   tools/spdx_headers.sh --check   list the files without it; exit 1 if there are any (CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly tag="SPDX-License-Identifier: Apache-2.0"
mode=${1:-add}
if [[ "$mode" != add && "$mode" != --check ]]; then
  echo "usage: $0 [--check]" >&2
  exit 2
fi

# Tracked files only: build trees and generated files are not the project's sources.
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cl' '*.cmake' '*.cmake.in' '*.hpp.in' \
  'CMakeLists.txt' '*.sh' '.ci/run' '*.py' '*.java')

missing=0
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue
  head -n 3 "$f" | grep -qE "^(//|#) SPDX-License-Identifier: " && continue
  missing=$((missing + 1))
  if [[ "$mode" == --check ]]; then
    echo "no SPDX line: $f"
    continue
  fi
  case "$f" in
    *.cpp | *.hpp | *.h | *.cl | *.hpp.in | *.java) line="// $tag" ;;
    *) line="# $tag" ;;
  esac
  if head -n 1 "$f" | grep -q '^#!'; then
    # Keep the #! line first; sed keeps the file's mode (executable scripts stay executable).
    sed -i "1a $line" "$f"
  else
    sed -i "1i $line" "$f"
  fi
done

if [[ "$mode" == --check ]]; then
  ((missing == 0)) || { echo "$missing file(s) without an SPDX line: run tools/spdx_headers.sh" >&2; exit 1; }
  echo "every source file has an SPDX line (${#files[@]} checked)"
else
  echo "added the SPDX line to $missing of ${#files[@]} source files"
fi
