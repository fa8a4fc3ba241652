# SPDX-License-Identifier: Apache-2.0
# xnorcl-tune across processes: a first process tunes a small Bi-Real Net-18 and stores the results in a
# tuning file, a second one (`--show`) plans the model and must run tuned configurations; --no-store writes
# no file, and under XNORCL_TUNING=ignore every step runs its default. TUNE: the program; WORK: a folder.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{XNORCL_TUNING_FILE} "${WORK}/tuning.txt")
set(ENV{XNORCL_VARIANT} global)
set(model --model bireal18 --size 32)

function(run_tune out_var)
  execute_process(COMMAND "${TUNE}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xnorcl-tune ${ARGN}: exit ${rc}\n${out}${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_tune(out ${model} --reps 1 --no-store)
if(EXISTS "${WORK}/tuning.txt" OR NOT out MATCHES "results not stored")
  message(FATAL_ERROR "--no-store wrote a tuning file or did not say so:\n${out}")
endif()

run_tune(out ${model} --reps 1)
if(NOT out MATCHES "results stored in ${WORK}/tuning.txt" OR NOT EXISTS "${WORK}/tuning.txt")
  message(FATAL_ERROR "the first process stored no tuning file:\n${out}")
endif()
file(STRINGS "${WORK}/tuning.txt" entries REGEX "^entry ")
list(LENGTH entries stored)

run_tune(out ${model} --show)
if(NOT out MATCHES "([0-9]+) of ([0-9]+) tunable steps run a tuned configuration")
  message(FATAL_ERROR "--show printed no summary:\n${out}")
endif()
set(tuned ${CMAKE_MATCH_1})
if(stored LESS 5 OR tuned LESS stored)
  message(FATAL_ERROR "${stored} entries stored, ${tuned} steps of the second process tuned:\n${out}")
endif()

set(ENV{XNORCL_TUNING} ignore)
run_tune(out ${model} --show)
if(NOT out MATCHES "\n0 of [0-9]+ tunable steps run a tuned configuration")
  message(FATAL_ERROR "XNORCL_TUNING=ignore still ran tuned configurations:\n${out}")
endif()
message(STATUS "${stored} classes stored; the second process ran ${tuned} tuned steps")
