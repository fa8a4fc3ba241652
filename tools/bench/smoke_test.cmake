# SPDX-License-Identifier: Apache-2.0
# The bench smoke test: a small layer with --quick must exit 0 and write JSON that parses.
file(REMOVE "${JSON}")
execute_process(COMMAND "${BENCH}" layers --quick --layer 1x32x12x12:32x3x3:s1:p1 --json "${JSON}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-bench exited with ${rc}")
endif()
if(PYTHON)
  execute_process(COMMAND "${PYTHON}" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']==1, d['schema']; assert d['layers'][0]['binary'][0]['status']=='ok'" "${JSON}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the JSON does not parse or misses fields")
  endif()
endif()
