# SPDX-License-Identifier: Apache-2.0
# The classify smoke test: write a random-weights file, classify a small grey PGM with it and without it; both
# runs must exit 0 (device logits bitwise equal to the host reference) and agree.
# The PGM's pixel bytes are printable characters (none of CMake's list separator or escapes), so that CMake can write the binary (P5) file as text.
set(pgm "${WORK}/classify_smoke.pgm")
set(weights "${WORK}/classify_smoke.xnn")
string(REPEAT "0123456789:<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ^_abcdefghijklmnopqrstuvwxyz{}~!%&()*+,-." 13 pixels)
string(SUBSTRING "${pixels}" 0 1000 pixels)
file(WRITE "${pgm}" "P5\n# 40x25 grey\n40 25\n255\n${pixels}")
execute_process(COMMAND "${CLASSIFY}" --write-random-weights "${weights}" --seed 7 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-classify --write-random-weights exited with ${rc}")
endif()
execute_process(COMMAND "${CLASSIFY}" --weights "${weights}" "${pgm}" RESULT_VARIABLE rc OUTPUT_VARIABLE from_file)
message("${from_file}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-classify --weights exited with ${rc}")
endif()
execute_process(COMMAND "${CLASSIFY}" --seed 7 "${pgm}" RESULT_VARIABLE rc OUTPUT_VARIABLE built)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xnorcl-classify --seed 7 exited with ${rc}")
endif()
string(REGEX MATCH "class: [a-z]+" class_file "${from_file}")
string(REGEX MATCH "class: [a-z]+" class_built "${built}")
if(NOT class_file OR NOT class_file STREQUAL class_built)
  message(FATAL_ERROR "the file's network says '${class_file}', the built one '${class_built}'")
endif()

# Hostile images: a header that claims 65535 x 65535 colour pixels over three bytes of data is refused before
# anything of that size is allocated, and a FIFO is refused rather than waited on (the timeout catches a wait).
set(huge "${WORK}/classify_smoke_huge.ppm")
file(WRITE "${huge}" "P6\n65535 65535\n255\nabc")
execute_process(COMMAND "${CLASSIFY}" "${huge}" RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 1 OR NOT err MATCHES "truncated \\(65535x65535 needs 12884508675 bytes\\)")
  message(FATAL_ERROR "a 65535x65535 header over 3 bytes: exit ${rc}, '${err}'")
endif()
set(fifo "${WORK}/classify_smoke.fifo")
file(REMOVE "${fifo}")
execute_process(COMMAND mkfifo "${fifo}" RESULT_VARIABLE made)
if(made EQUAL 0)
  execute_process(COMMAND "${CLASSIFY}" "${fifo}" RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  file(REMOVE "${fifo}")
  if(NOT rc EQUAL 1 OR NOT err MATCHES "is a FIFO, not a regular file")
    message(FATAL_ERROR "an image path that is a FIFO: exit ${rc}, '${err}'")
  endif()
endif()

# A 787-byte graph file with the classifier's input and output whose padded 1x1 binary convolution (pads
# 15000) makes a 1x1x30096x30096 tensor: refused when the file is checked, before the device or the host
# reference would hold gigabytes (HUGE_TENSOR, tools/classify_huge_tensor.xnn: a BinaryConvolution of a
# 1x3x1x1 filter with pads 15000, a MaxPool of 15048x15048, a Reshape to 1x4x1x1).
execute_process(COMMAND "${CLASSIFY}" --weights "${HUGE_TENSOR}" "${pgm}" RESULT_VARIABLE rc ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT rc EQUAL 1 OR NOT err MATCHES "tensor 'c' is \\[1, 1, 30096, 30096\\]; xnorcl-classify runs networks")
  message(FATAL_ERROR "a graph with a 30096x30096 tensor: exit ${rc}, '${err}'")
endif()
