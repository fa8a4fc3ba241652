// SPDX-License-Identifier: Apache-2.0
// Watches and corrupts the OpenCL calls of this test executable, with no hook inside the library.
//
// cl_intercept.cpp defines clCreateBuffer, clEnqueueNDRangeKernel and friends in the executable itself: the
// linker binds the library's calls (and OpenCL-CLHPP's) to them, and they forward to the ICD loader's own
// (dlsym RTLD_NEXT). So the tests can count what the library allocated and enqueued, track which buffers are
// still alive, and turn one chosen call into a real driver error: the driver itself is asked for more than
// the device allows and answers with its own error code, through the library's real error path.
#pragma once

#include <cstdint>

#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test::intercept {

enum class Fault {
  None,
  // clCreateBuffer asks for more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (and the global memory): the driver
  // answers CL_INVALID_BUFFER_SIZE.
  OversizedBuffer,
  // clEnqueueNDRangeKernel asks for one work-group larger than the kernel's CL_KERNEL_WORK_GROUP_SIZE: the
  // driver answers CL_INVALID_WORK_GROUP_SIZE.
  OversizedWorkGroup,
  // clEnqueueReadBuffer / clEnqueueWriteBuffer reach one byte past the buffer: CL_INVALID_VALUE.
  OversizedTransfer,
};

const char* to_string(Fault f);

// Calls made since the process started (pass-through ones and corrupted ones alike).
struct Counts {
  std::int64_t buffers_created = 0;   // clCreateBuffer
  std::int64_t kernels_enqueued = 0;  // clEnqueueNDRangeKernel
  std::int64_t transfers = 0;         // clEnqueueRead/Write/Copy/FillBuffer
  std::int64_t commands() const { return kernels_enqueued + transfers; }
};
Counts counts();

// Buffers made by clCreateBuffer that the process still holds a reference to (retains minus releases
// through the API; references the driver holds internally are not counted).
std::int64_t live_buffers();

// From now on, the call number `nth` (0-based) of the fault's kind is corrupted; every other call passes
// through unchanged. Only one fault is armed at a time.
void arm(Fault fault, int nth = 0);
void disarm();
// Whether the armed fault happened (the driver was asked the corrupted call).
bool fired();

// From now on clGetDeviceInfo reports this CL_DEVICE_MAX_MEM_ALLOC_SIZE (0: the driver's own again). Only
// what the library reads changes (a Runtime created meanwhile plans with it); the driver's limit stays.
void report_max_mem_alloc(std::uint64_t bytes);
class ReportedMaxAlloc {
 public:
  explicit ReportedMaxAlloc(std::uint64_t bytes) { report_max_mem_alloc(bytes); }
  ~ReportedMaxAlloc() { report_max_mem_alloc(0); }
  ReportedMaxAlloc(const ReportedMaxAlloc&) = delete;
  ReportedMaxAlloc& operator=(const ReportedMaxAlloc&) = delete;
};

// Arms a fault for the lifetime of the object.
class Armed {
 public:
  explicit Armed(Fault fault, int nth = 0) { arm(fault, nth); }
  ~Armed() { disarm(); }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;
};

// True when the calls of this executable really go through the interceptor (creates a buffer on the
// runtime's context and checks that it was counted): a test that asserts "nothing was allocated or
// enqueued" must first know that it would have seen it.
bool active(const Runtime& runtime);

}  // namespace xnorcl::test::intercept
