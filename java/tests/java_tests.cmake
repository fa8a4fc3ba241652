# SPDX-License-Identifier: Apache-2.0
# The Java tests (JUnit 5 on the desktop JVM, on whatever OpenCL device the C++ device tests use): the
# fixture writes the models and their host-reference outputs, then the JUnit console launcher runs every
# test class against xnorcl.jar and libxnorcl_jni under -Xcheck:jni; and docs/java.md's example program,
# extracted, compiled and run on the fixture's model.

find_jar(XNORCL_JUNIT_CONSOLE NAMES junit-platform-console-standalone
  PATHS /usr/share/java DOC "JUnit 5's console launcher, standalone jar (Debian: junit5)")
if(NOT XNORCL_JUNIT_CONSOLE)
  message(FATAL_ERROR "XNORCL_JAVA with tests needs junit-platform-console-standalone.jar (Debian: junit5); "
                      "set XNORCL_JUNIT_CONSOLE to its path")
endif()

add_executable(xnorcl_java_fixture "${CMAKE_CURRENT_SOURCE_DIR}/tests/fixture.cpp")
target_link_libraries(xnorcl_java_fixture PRIVATE xnorcl::xnorcl xnorcl_warnings)

file(GLOB xnorcl_java_test_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/test/java/org/xnorcl/*.java")
if(XNORCL_WERROR)
  set(CMAKE_JAVA_COMPILE_FLAGS -Xlint:all -Werror)
else()
  set(CMAKE_JAVA_COMPILE_FLAGS -Xlint:all)
endif()
add_jar(xnorcl_java_tests SOURCES ${xnorcl_java_test_sources} OUTPUT_NAME xnorcl-tests
  INCLUDE_JARS xnorcl_jar "${XNORCL_JUNIT_CONSOLE}")

set(xnorcl_java_models "${CMAKE_CURRENT_BINARY_DIR}/models")
add_test(NAME java_fixture COMMAND xnorcl_java_fixture "${xnorcl_java_models}")
set_tests_properties(java_fixture PROPERTIES FIXTURES_SETUP java_models LABELS java)

get_target_property(xnorcl_jar_file xnorcl_jar JAR_FILE)
get_target_property(xnorcl_java_tests_file xnorcl_java_tests JAR_FILE)
# -Xcheck:jni makes the JVM check every JNI call; its complaints are warnings on stdout, so CTest fails on
# them. Any failed test fails the launcher's exit status, and a run that found no test fails too.
add_test(NAME java_tests
  COMMAND "${Java_JAVA_EXECUTABLE}" -Xcheck:jni "-Djava.library.path=$<TARGET_FILE_DIR:xnorcl_jni>"
          "-Dxnorcl.test.models=${xnorcl_java_models}"
          -jar "${XNORCL_JUNIT_CONSOLE}" --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests
          --class-path "${xnorcl_jar_file}:${xnorcl_java_tests_file}"
          --scan-class-path "${xnorcl_java_tests_file}")
set_tests_properties(java_tests PROPERTIES FIXTURES_REQUIRED java_models LABELS "device;java"
  SKIP_RETURN_CODE 77
  FAIL_REGULAR_EXPRESSION "WARNING in native method|FATAL ERROR in native method|JNI local refs")

# docs/java.md's example: the ```java block between <!-- java-example:begin --> and <!-- java-example:end -->.
set(doc "${PROJECT_SOURCE_DIR}/docs/java.md")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${doc}")
file(READ "${doc}" doc_text)
string(FIND "${doc_text}" "<!-- java-example:begin -->" begin)
string(FIND "${doc_text}" "<!-- java-example:end -->" end)
if(begin EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "docs/java.md: no <!-- java-example:begin --> ... <!-- java-example:end --> section")
endif()
math(EXPR length "${end} - ${begin}")
string(SUBSTRING "${doc_text}" ${begin} ${length} section)
if(NOT section MATCHES "```java\n(.*)\n```")
  message(FATAL_ERROR "docs/java.md: the java-example section has no ```java block")
endif()
set(code "${CMAKE_MATCH_1}\n")
if(NOT code MATCHES "public class ([A-Za-z0-9_]+)")
  message(FATAL_ERROR "docs/java.md: the example has no public class")
endif()
set(example_class "${CMAKE_MATCH_1}")
set(example "${CMAKE_CURRENT_BINARY_DIR}/example/${example_class}.java")
file(WRITE "${example}.in" "${code}")
configure_file("${example}.in" "${example}" COPYONLY)
add_jar(xnorcl_java_example SOURCES "${example}" OUTPUT_NAME xnorcl-example INCLUDE_JARS xnorcl_jar)
get_target_property(xnorcl_java_example_file xnorcl_java_example JAR_FILE)
add_test(NAME java_docs_example
  COMMAND "${CMAKE_COMMAND}" "-DJAVA=${Java_JAVA_EXECUTABLE}" "-DLIBRARY_DIR=$<TARGET_FILE_DIR:xnorcl_jni>"
          "-DCLASS_PATH=${xnorcl_jar_file}:${xnorcl_java_example_file}" "-DMAIN=${example_class}"
          "-DMODELS=${xnorcl_java_models}" -P "${CMAKE_CURRENT_SOURCE_DIR}/tests/run_example.cmake")
set_tests_properties(java_docs_example PROPERTIES FIXTURES_REQUIRED java_models LABELS "device;java")
