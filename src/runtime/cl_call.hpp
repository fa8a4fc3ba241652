// SPDX-License-Identifier: Apache-2.0
// Turns OpenCL-CLHPP's cl::Error into xnorcl::OpenCLError at the library's boundary.
#pragma once

#include <string>
#include <utility>

#include "xnorcl/error.hpp"
#include "xnorcl/opencl.hpp"

namespace xnorcl::detail {

// Runs f; a cl::Error it throws becomes an OpenCLError naming the call and the symbolic code.
template <class F>
auto cl_call(F&& f, const std::string& what = "") -> decltype(f()) {
  try {
    return std::forward<F>(f)();
  } catch (const cl::Error& e) {
    throw OpenCLError(e.what() ? e.what() : "OpenCL call", e.err(), what);
  }
}

}  // namespace xnorcl::detail
