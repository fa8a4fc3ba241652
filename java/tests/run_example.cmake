# SPDX-License-Identifier: Apache-2.0
# Runs docs/java.md's example on the fixture's Bi-Real model and checks the top class it prints against the
# host reference's (bireal.example.top, for the same input).
execute_process(
  COMMAND "${JAVA}" -Xcheck:jni "-Djava.library.path=${LIBRARY_DIR}" -cp "${CLASS_PATH}" "${MAIN}"
          "${MODELS}/bireal.xnn"
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
message("${out}${err}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the example exited with ${status}")
endif()
if("${out}${err}" MATCHES "WARNING in native method|FATAL ERROR in native method")
  message(FATAL_ERROR "-Xcheck:jni reported a problem")
endif()
file(STRINGS "${MODELS}/bireal.example.top" expected LIMIT_COUNT 1)
if(NOT out MATCHES "top class: ${expected}\n")
  message(FATAL_ERROR "the example's top class is not the host reference's ${expected}")
endif()
message("the example printed the host reference's top class ${expected}")
