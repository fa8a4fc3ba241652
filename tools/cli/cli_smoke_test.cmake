# SPDX-License-Identifier: Apache-2.0
# Every tool: --help and --version exit 0; a bad number, an unknown option and an unwritable output path exit 2
# with a message that names them, before any device work. BENCH, CLASSIFY, DEMO, TUNE: the programs; WORK: a
# folder.
function(expect rc_wanted pattern)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL rc_wanted OR NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${ARGN}: exit ${rc} (wanted ${rc_wanted}), output not matching '${pattern}':\n${out}${err}")
  endif()
endfunction()

foreach(tool BENCH CLASSIFY DEMO TUNE)
  get_filename_component(name "${${tool}}" NAME)
  expect(0 "^${name} [0-9]+\\.[0-9]+\\.[0-9]+ \\(library [0-9]+\\.[0-9]+\\.[0-9]+\\)\n$" "${${tool}}" --version)
  expect(0 "usage: ${name}" "${${tool}}" --help)
  expect(2 "unknown option '--bogus'" "${${tool}}" --bogus)
  # A usage error is the one line that matters and where the help is, not the whole help.
  execute_process(COMMAND "${${tool}}" --bogus RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${out}${err}" MATCHES "^${name}: unknown option '--bogus'[^\n]*\nRun '${name} --help' for the [a-z ]+\\.\n$")
    message(FATAL_ERROR "${name} --bogus: a usage error should be two lines, it printed:\n${out}${err}")
  endif()
endforeach()

expect(2 "--reps needs an integer from 1 to 1000000, not 'abc'" "${BENCH}" layers --reps abc)
expect(2 "--reps must be from 1 to 1000000, not -5" "${BENCH}" layers --reps -5)
expect(2 "--layer 0x8x8x8:8x3x3: N in '0x8x8x8' must be from 1" "${BENCH}" layers --layer 0x8x8x8:8x3x3)
expect(2 "--json ${WORK}/missing/run.json cannot be written" "${BENCH}" layers --json "${WORK}/missing/run.json")
expect(2 "--seed needs an integer from 0 to 18446744073709551615, not '-5'" "${CLASSIFY}" --seed -5 x.ppm)
expect(2 "--seed needs an integer from 0 to 18446744073709551615, not 'abc'" "${CLASSIFY}" --seed abc x.ppm)
expect(2 "--write-random-weights ${WORK}/missing/w.xnn cannot be written" "${CLASSIFY}"
  --write-random-weights "${WORK}/missing/w.xnn")
expect(2 "--mode takes fast, normal or exhaustive, not 'quick'" "${TUNE}" --mode quick --model bireal18)
expect(2 "--model takes bireal18, resnet18 or vehicle, not 'vgg'" "${TUNE}" --model vgg)
expect(2 "give a MODEL.xnn file or --model NAME" "${TUNE}" --mode fast)
expect(2 "--size must be from 32 to 1024, not 8" "${TUNE}" --model bireal18 --size 8)
# An option a command does not read is refused, not ignored; a batch is bounded before anything is built.
expect(2 "--json is not an option of the devices command" "${BENCH}" devices --json "${WORK}/devices.json")
expect(2 "--batch is not an option of the layers command" "${BENCH}" layers --batch 2)
expect(2 "--batch must be from 1 to 64, not 100000" "${BENCH}" network --batch 100000)
expect(2 "the input has 400000000 elements; the bench takes at most 67108864 per tensor" "${BENCH}" layers
  --layer 1x4x10000x10000:1x1x1)
expect(2 "--batch sets the built-in networks' batch; the model file ${WORK}/m.xnn has its own" "${BENCH}" network
  --model "${WORK}/m.xnn" --batch 2)
# The file is read before a device is looked for: with no such device, the missing file is still the error.
expect(1 "cannot open ${WORK}/missing.xnn" "${CMAKE_COMMAND}" -E env XNORCL_DEVICE=no-such-device-anywhere
  "${BENCH}" network --model "${WORK}/missing.xnn")
