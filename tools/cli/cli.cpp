// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/file_io.hpp"
#include "xnorcl/version.hpp"

namespace xnorcl_cli {

namespace {

template <typename T>
T parse_decimal(const std::string& what, const std::string& text, const std::string& range) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    throw UsageError(what + " needs an integer " + range + ", not '" + text + "'");
  }
  if (ec == std::errc::result_out_of_range) throw UsageError(what + " must be " + range + ", not " + text);
  return value;
}

}  // namespace

std::int64_t parse_int(const std::string& what, const std::string& text, std::int64_t minimum,
                       std::int64_t maximum) {
  const std::string range = "from " + std::to_string(minimum) + " to " + std::to_string(maximum);
  const std::int64_t v = parse_decimal<std::int64_t>(what, text, range);
  if (v < minimum || v > maximum) throw UsageError(what + " must be " + range + ", not " + text);
  return v;
}

std::uint64_t parse_uint64(const std::string& what, const std::string& text) {
  return parse_decimal<std::uint64_t>(what, text, "from 0 to 18446744073709551615");
}

double parse_finite(const std::string& what, const std::string& text) {
  // strtod also takes leading spaces, hex floats, "inf" and "nan": refused here before or after it.
  const bool plain = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const double v = plain ? std::strtod(text.c_str(), &end) : 0.0;
  if (!plain || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    throw UsageError(what + " needs a finite decimal number, not '" + text + "'");
  }
  return v;
}

void check_output_path(const std::string& what, const std::string& path) {
  if (path.empty()) throw UsageError(what + " needs a file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(what + " " + path + " is a directory");
    // Opening a FIFO would wait for a reader; a device or socket is no place for a report either.
    if (!S_ISREG(st.st_mode))
      throw UsageError(what + " " + path + " is not a regular file (a FIFO, a device or a socket)");
  }
  // The file is written as a new temporary beside it, then renamed over it: its directory must take new
  // files. Checked without creating anything (a file made and removed again would also replace a dangling
  // link with nothing).
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string directory = parent.empty() ? "." : parent;
  if (::stat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError(what + " " + path + " cannot be written (no directory " + directory + ")");
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw UsageError(what + " " + path + " cannot be written (directory " + directory + ": " +
                     std::strerror(errno) + ")");
}

std::string read_input_file(const std::string& path, std::uint64_t max_bytes) {
  return xnorcl::detail::read_regular_file(path, max_bytes);
}

void write_output_file(const std::string& path, const std::string& text) {
  xnorcl::detail::write_file_atomically(path, text);
}

std::string version_line(const char* tool) {
  return std::string(tool) + " " + XNORCL_VERSION_STRING + " (library " + xnorcl::version() + ")";
}

bool answered_help_or_version(int argc, char** argv, const char* tool, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      return true;
    }
    if (arg == "--version") {
      std::printf("%s\n", version_line(tool).c_str());
      return true;
    }
  }
  return false;
}

int report_usage_error(const char* tool, const UsageError& error) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", tool, error.what(), tool);
  return 2;
}

std::function<void(const std::string&)> compile_notice(const char* tool) {
  return [tool = std::string(tool)](const std::string& message) {
    if (message.rfind("warning: ", 0) == 0) {
      std::fprintf(stderr, "%s: %s\n", tool.c_str(), message.c_str());
      return;
    }
    if (message.rfind("compiling the OpenCL kernels", 0) != 0) return;
    std::fprintf(stderr, "%s: %s (once: seconds on a GPU, up to a minute on a CPU)\n", tool.c_str(),
                 message.c_str());
  };
}

}  // namespace xnorcl_cli
