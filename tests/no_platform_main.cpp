// SPDX-License-Identifier: Apache-2.0
// Run by CTest with the OpenCL ICD loader pointed at an empty vendor directory (tests/process_tests.cmake):
// Runtime::create() must throw DeviceNotFound saying there is no platform and naming the package that
// provides one. Exit code 0 only then.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "xnorcl/xnorcl.hpp"

int main() {
  try {
    xnorcl::Runtime runtime = xnorcl::Runtime::create();
    std::printf("FAIL: Runtime::create() found %s although no OpenCL platform is installed\n",
                runtime.device_name().c_str());
    return 1;
  } catch (const xnorcl::DeviceNotFound& e) {
    std::string message = e.what();
    std::printf("DeviceNotFound: %s\n", message.c_str());
    std::string lower = message;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool says_no_platform = lower.find("platform") != std::string::npos;
    const bool names_package = message.find("pocl-opencl-icd") != std::string::npos;
    if (!says_no_platform) std::printf("FAIL: the message does not say that no OpenCL platform was found\n");
    if (!names_package) std::printf("FAIL: the message does not name the package pocl-opencl-icd\n");
    return says_no_platform && names_package ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAIL: expected xnorcl::DeviceNotFound, got: %s\n", e.what());
    return 1;
  }
}
