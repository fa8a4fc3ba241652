# SPDX-License-Identifier: Apache-2.0
# Sourced by the CI jobs: `phase NAME COMMAND...` runs and times one phase; the EXIT trap prints every phase's
# time and the total. Set PHASES_JOB to the job's name before sourcing.
timings=()
run_start=$SECONDS
current=""
phase_start=$SECONDS

phases_report() {
  local status=$?
  [[ -n "$current" ]] && timings+=("$current: FAILED after $((SECONDS - phase_start)) s")
  echo
  echo "=== ${PHASES_JOB:-job} phase timings"
  printf '%s\n' "${timings[@]}"
  echo "total: $((SECONDS - run_start)) s ($([[ $status == 0 ]] && echo passed || echo "FAILED, exit $status"))"
}
trap phases_report EXIT

phase() {
  current=$1
  shift
  echo
  echo "=== phase: $current"
  phase_start=$SECONDS
  "$@"
  timings+=("$current: $((SECONDS - phase_start)) s")
  current=""
}
