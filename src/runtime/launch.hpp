// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the kernel launchers.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/cl_call.hpp"
#include "runtime/launch_gate.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/opencl.hpp"

namespace xnorcl::detail {

// Creates a kernel object of its own from a runtime's program and refuses it if the device cannot run it with
// work-groups of `local_size` work-items (CL_KERNEL_WORK_GROUP_SIZE; register-heavy kernels on Mali get less
// than the device maximum). A launch never exceeds that size.
inline cl::Kernel make_kernel(const cl::Program& program, const char* name, const cl::Device& device,
                              std::size_t local_size) {
  cl::Kernel kernel =
      cl_call([&] { return cl::Kernel(program, name); }, std::string("clCreateKernel ") + name);
  const std::size_t limit =
      cl_call([&] { return kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device); },
              std::string("CL_KERNEL_WORK_GROUP_SIZE of ") + name);
  if (limit < local_size) {
    throw Error(std::string("kernel ") + name + " accepts work-groups of at most " + std::to_string(limit) +
                " work-items on this device, but its program was built for " + std::to_string(local_size));
  }
  return kernel;
}

}  // namespace xnorcl::detail
