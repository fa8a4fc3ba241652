// SPDX-License-Identifier: Apache-2.0
// Loading libOpenCL.so at run time (CMake option XNORCL_DLOPEN_OPENCL, for Android).
//
// With the option on, src/runtime/opencl_loader.cpp defines every OpenCL 1.0-1.2 core function (cl.h and
// cl_gl.h), a superset of what the library and an app's inline OpenCL-CLHPP code call, and forwards each to
// the driver's function, found with dlopen/dlsym on first use. Neither libxnorcl nor the app then links
// libOpenCL, which Android apps cannot do: the NDK has no libOpenCL.so, and each vendor puts its own in a
// different place.
#pragma once

#include <string>

namespace xnorcl::detail {

#ifdef XNORCL_DLOPEN_OPENCL
// What the loader did, for error messages: the library it loaded, or every path it tried with dlerror().
std::string opencl_loader_report();
#else
// Linked against libOpenCL: nothing to add.
inline std::string opencl_loader_report() {
  return {};
}
#endif

}  // namespace xnorcl::detail
