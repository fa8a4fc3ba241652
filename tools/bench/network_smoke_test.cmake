# SPDX-License-Identifier: Apache-2.0
# The network bench smoke test: `xnorcl-bench network --quick` (the vehicle classifier and its float32 twin)
# must exit 0 (both checked, neither wrong) and write JSON that parses, with a row per step of each, the
# four targets and the binary network's kernels (each run by at least one step, every step's kernels).
file(REMOVE "${JSON}")
execute_process(COMMAND "${BENCH}" network --quick --json "${JSON}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-bench network exited with ${rc}")
endif()
if(PYTHON)
  execute_process(COMMAND "${PYTHON}" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']==1, d['schema']; assert d['model']=='vehicle', d['model']; assert d['step_differing_bits']==0, d; assert len(d['steps'])==6, [s['step'] for s in d['steps']]; assert len(d['float32_twin_steps'])>=len(d['steps']), d['float32_twin_steps']; assert d['float32_twin_device_median_ms']>0, d; assert sorted(t['id'] for t in d['targets'])==['activation_memory','device_over_perfect_float32','no_mac_share','speedup_vs_float32_twin'], d['targets']; k=d['kernels']; assert 'xnor_gemm_bits' in [x['kernel'] for x in k], k; assert all(x['kernel'] and x['steps']>=1 and x['device_median_ms']>=0 for x in k), k; assert sum(x['steps'] for x in k)>=len(d['steps']), k" "${JSON}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the network JSON does not parse or misses fields")
  endif()
endif()

# A version-1 file (the chain xnorcl-classify writes) runs as a graph too: `network --model FILE`.
if(CLASSIFY)
  set(chain "${JSON}.v1.xnn")
  execute_process(COMMAND "${CLASSIFY}" --write-random-weights "${chain}" RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xnorcl-classify --write-random-weights exited with ${rc}")
  endif()
  execute_process(COMMAND "${BENCH}" network --model "${chain}" --quick RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "check, step by step [^\n]*: 6 tensors, 0 bits differ")
    message(FATAL_ERROR "xnorcl-bench network --model <version-1 file> exited with ${rc}:\n${out}${err}")
  endif()
endif()
