// SPDX-License-Identifier: Apache-2.0
// The cl_kernels/*.cl sources, compiled into the library by cmake/embed_kernels.cmake.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace xnorcl::detail {

struct EmbeddedKernel {
  const char* file_name;  // "xnor_gemm.cl"
  const char* source;
  std::size_t size;
};

const std::vector<EmbeddedKernel>& embedded_kernels();

}  // namespace xnorcl::detail
