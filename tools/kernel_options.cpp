// SPDX-License-Identifier: Apache-2.0
// Prints every (kernel file, build options) pair the runtime can emit, one per line as "file<TAB>options",
// so that tools/check_kernels.sh compiles exactly what the runtime would ask a driver to compile.
#include <cstdio>
#include <exception>
#include <string>

#include "cli.hpp"
#include "runtime/device_profile.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string arg = argv[1];
    if (argc == 2 && arg == "--version") {
      std::printf("%s\n", xnorcl_cli::version_line("xnorcl-kernel-options").c_str());
      return 0;
    }
    const bool help = argc == 2 && (arg == "-h" || arg == "--help");
    std::fprintf(
        help ? stdout : stderr,
        "%susage: xnorcl-kernel-options [-h | --help | --version]\n\nPrints every (kernel file, build "
        "options) pair the runtime can emit, one per line as \"file<TAB>options\" (for "
        "tools/check_kernels.sh).\n",
        help ? "" : ("xnorcl-kernel-options: unexpected argument '" + arg + "'\n\n").c_str());
    return help ? 0 : 2;
  }
  try {
    for (const auto& [file, options] : xnorcl::detail::all_build_option_sets()) {
      std::printf("%s\t%s\n", file.c_str(), options.c_str());
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xnorcl-kernel-options: %s\n", e.what());
    return 1;
  }
}
