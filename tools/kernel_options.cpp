// Prints every (kernel file, build options) pair the runtime can emit, one per line as "file<TAB>options",
// so that tools/check_kernels.sh compiles exactly what the runtime would ask a driver to compile.
#include <cstdio>
#include <exception>

#include "runtime/device_profile.hpp"

int main() {
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
