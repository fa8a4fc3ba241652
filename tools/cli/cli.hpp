// SPDX-License-Identifier: Apache-2.0
// What every xnorcl command-line tool shares: strict number parsing, output paths checked before the work,
// the --version line and the message of a first start that compiles the kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace xnorcl_cli {

// Bad command-line input: the tool prints the message (and its usage) and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The whole of `text` as a decimal integer in [minimum, maximum]: no spaces, no '+', no trailing characters.
// `what` names the value in the message ("--reps", "N of --layer 1x3x8x8:4x3x3").
std::int64_t parse_int(const std::string& what, const std::string& text, std::int64_t minimum,
                       std::int64_t maximum);
// Any 64-bit unsigned decimal (seeds): "-5" is refused, not wrapped around.
std::uint64_t parse_uint64(const std::string& what, const std::string& text);
// A finite decimal number ("0.5", "-1", "1e-3"); NaN, infinities, hex and trailing characters are refused.
double parse_finite(const std::string& what, const std::string& text);

// Refuses a path the tool could not write (a missing or unwritable directory, a directory, anything else that
// is not a regular file), so that a long run does not fail at its end. Creates and changes nothing.
void check_output_path(const std::string& what, const std::string& path);
// The whole of a regular file of at most max_bytes (a FIFO is refused, not waited on; nothing larger than the
// limit is read). Throws xnorcl::Error naming the file and what is wrong with it.
std::string read_input_file(const std::string& path, std::uint64_t max_bytes);
// Writes a tool's output file atomically: the text goes to a new temporary beside it, then replaces it, so
// that a reader never sees half a report and an interrupted run leaves the old file whole. Throws
// xnorcl::Error naming the file.
void write_output_file(const std::string& path, const std::string& text);

// "xnorcl-bench 0.1.0 (library 0.1.0)": the tool's build and the library it runs.
std::string version_line(const char* tool);

// -h/--help or --version anywhere on the command line: prints the usage or the version line on stdout and
// returns true (the tool then exits 0).
bool answered_help_or_version(int argc, char** argv, const char* tool, const char* usage);
// A usage error's two lines on stderr (the message, then where the help is); returns the exit status, 2.
int report_usage_error(const char* tool, const UsageError& error);

// A RuntimeOptions::log hook that prints, on stderr, only the message of a Runtime that compiles its kernels
// rather than loading them from the program cache, so that a slow first start says why, and warnings.
std::function<void(const std::string&)> compile_notice(const char* tool);

}  // namespace xnorcl_cli
