# SPDX-License-Identifier: Apache-2.0
# Builds the C++ example of README.md and runs it as a device test, so the README cannot drift from the
# API. The example is the ```cpp block between <!-- readme-example:begin --> and <!-- readme-example:end -->;
# it checks its own result and returns non-zero on a mismatch.

set(readme "${PROJECT_SOURCE_DIR}/README.md")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${readme}")
file(READ "${readme}" readme_text)

set(begin_marker "<!-- readme-example:begin -->")
set(end_marker "<!-- readme-example:end -->")
string(FIND "${readme_text}" "${begin_marker}" begin)
string(FIND "${readme_text}" "${end_marker}" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "README.md: no ${begin_marker} ... ${end_marker} section holding the C++ example")
endif()
string(SUBSTRING "${readme_text}" 0 ${end} before_end)
string(SUBSTRING "${before_end}" ${begin} -1 section)

set(fence_open "```cpp\n")
string(FIND "${section}" "${fence_open}" code_begin)
if(code_begin EQUAL -1)
  message(FATAL_ERROR "README.md: the readme-example section has no ```cpp block")
endif()
string(LENGTH "${fence_open}" fence_length)
math(EXPR code_begin "${code_begin} + ${fence_length}")
string(SUBSTRING "${section}" ${code_begin} -1 code)
string(FIND "${code}" "\n```" code_end)
if(code_end EQUAL -1)
  message(FATAL_ERROR "README.md: the ```cpp block of the readme-example section is not closed")
endif()
math(EXPR code_length "${code_end} + 1")
string(SUBSTRING "${code}" 0 ${code_length} code)

# A #line directive makes compiler messages point into README.md.
math(EXPR code_offset "${begin} + ${code_begin}")
string(SUBSTRING "${readme_text}" 0 ${code_offset} preceding)
string(REGEX MATCHALL "\n" newlines "${preceding}")
list(LENGTH newlines first_line)
math(EXPR first_line "${first_line} + 1")

# Written through configure_file so that an unchanged example is not rebuilt on every configure.
set(example "${CMAKE_CURRENT_BINARY_DIR}/readme_example.cpp")
file(WRITE "${example}.in" "#line ${first_line} \"${readme}\"\n${code}")
configure_file("${example}.in" "${example}" COPYONLY)

add_executable(xnorcl_readme_example "${example}" "${CMAKE_CURRENT_SOURCE_DIR}/readme_example_harness.cpp")
set_source_files_properties("${example}" PROPERTIES COMPILE_DEFINITIONS main=readme_example_main)
target_link_libraries(xnorcl_readme_example PRIVATE xnorcl::xnorcl xnorcl_warnings)
add_test(NAME readme_example COMMAND xnorcl_readme_example)
set_tests_properties(readme_example PROPERTIES LABELS device SKIP_RETURN_CODE 77)
