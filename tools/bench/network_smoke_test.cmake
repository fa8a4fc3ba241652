# SPDX-License-Identifier: Apache-2.0
# The network bench smoke test: `xnorcl-bench network --quick` must exit 0 (both networks checked, neither
# wrong) and write JSON that parses, with both sides ok and a row per layer part.
file(REMOVE "${JSON}")
execute_process(COMMAND "${BENCH}" network --quick --json "${JSON}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-bench network exited with ${rc}")
endif()
if(PYTHON)
  execute_process(COMMAND "${PYTHON}" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']==1, d['schema']; n=d['network']; assert n['binary']['status']=='ok', n['binary']; assert n['float']['status'] in ('ok','unavailable'), n['float']; assert len(d['layers'])==13, len(d['layers']); assert len(d['targets'])==2" "${JSON}"
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
  if(NOT rc EQUAL 0 OR NOT out MATCHES "check, step by step [^\n]*: 7 tensors, 0 bits differ")
    message(FATAL_ERROR "xnorcl-bench network --model <version-1 file> exited with ${rc}:\n${out}${err}")
  endif()
endif()
