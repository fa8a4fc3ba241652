// SPDX-License-Identifier: Apache-2.0
// The tools/bench/kernels/*.cl sources, compiled into xnorcl-bench by cmake/embed_kernels.cmake.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace xnorcl_bench {

struct EmbeddedKernel {
  const char* file_name;  // "peak.cl"
  const char* source;
  std::size_t size;
};

const std::vector<EmbeddedKernel>& embedded_kernels();

// The source of kernels/<name>; a name that is not embedded is a bug of the bench.
inline std::string kernel_source(const std::string& name) {
  for (const auto& k : embedded_kernels()) {
    if (name == k.file_name) return std::string(k.source, k.size);
  }
  throw std::logic_error("kernel source " + name + " is not embedded in xnorcl-bench");
}

}  // namespace xnorcl_bench
