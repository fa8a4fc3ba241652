// SPDX-License-Identifier: Apache-2.0
// The OpenCL entry points this executable defines itself (see cl_intercept.hpp). Each forwards to the next
// definition, the ICD loader's, found with dlsym(RTLD_NEXT); armed, it first bends one argument so that the
// driver refuses the call with its own error.
#include "cl_intercept.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace xnorcl::test::intercept {
namespace {

std::atomic<std::int64_t> g_buffers{0}, g_kernels{0}, g_transfers{0};
std::atomic<int> g_fault{static_cast<int>(Fault::None)};
std::atomic<int> g_countdown{0};  // calls of the armed kind to let through before the corrupted one
std::atomic<bool> g_fired{false};
std::atomic<cl_ulong> g_reported_max_alloc{0};  // 0: the driver's own CL_DEVICE_MAX_MEM_ALLOC_SIZE

std::mutex g_live_mutex;
std::map<cl_mem, std::int64_t>& live_references() {
  static std::map<cl_mem, std::int64_t> references;  // buffer -> references held through the API
  return references;
}

// The next definition of an OpenCL function (the ICD loader's); aborts if there is none, since every call
// would then silently do nothing.
template <class F>
F next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "cl_intercept: no next definition of %s: %s\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

// Whether this call of `kind` is the one to corrupt (consumes the countdown).
bool take(Fault kind) {
  if (g_fault.load() != static_cast<int>(kind)) return false;
  if (g_countdown.fetch_sub(1) != 0) return false;
  g_fault.store(static_cast<int>(Fault::None));
  g_fired.store(true);
  return true;
}

cl_device_id first_device(cl_context context) {
  cl_device_id device = nullptr;
  clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr);
  return device;
}

// More than any buffer the device can hold: above CL_DEVICE_MAX_MEM_ALLOC_SIZE and the global memory.
std::size_t oversized_buffer(cl_context context) {
  cl_device_id device = first_device(context);
  cl_ulong max_alloc = 0, global = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
  clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, nullptr);
  return static_cast<std::size_t>(std::max(max_alloc, global) * 2 + 4096);
}

std::size_t buffer_size(cl_mem buffer) {
  std::size_t size = 0;
  clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, nullptr);
  return size;
}

}  // namespace

const char* to_string(Fault f) {
  switch (f) {
    case Fault::None:
      return "none";
    case Fault::OversizedBuffer:
      return "oversized buffer";
    case Fault::OversizedWorkGroup:
      return "oversized work-group";
    case Fault::OversizedTransfer:
      return "oversized transfer";
  }
  return "?";
}

Counts counts() {
  Counts c;
  c.buffers_created = g_buffers.load();
  c.kernels_enqueued = g_kernels.load();
  c.transfers = g_transfers.load();
  return c;
}

std::int64_t live_buffers() {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return static_cast<std::int64_t>(live_references().size());
}

void arm(Fault fault, int nth) {
  g_fired.store(false);
  g_countdown.store(nth);
  g_fault.store(static_cast<int>(fault));
}

void disarm() {
  g_fault.store(static_cast<int>(Fault::None));
}

bool fired() {
  return g_fired.load();
}

void report_max_mem_alloc(std::uint64_t bytes) {
  g_reported_max_alloc.store(bytes);
}

bool active(const Runtime& runtime) {
  const std::int64_t before = counts().buffers_created;
  const std::int64_t live = live_buffers();
  {
    cl::Buffer probe(runtime.context(), CL_MEM_READ_WRITE, 64);
    if (counts().buffers_created != before + 1 || live_buffers() != live + 1) return false;
  }
  return live_buffers() == live;
}

}  // namespace xnorcl::test::intercept

using namespace xnorcl::test::intercept;

extern "C" {

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info name, size_t size, void* value, size_t* size_ret) {
  static const auto real = next<decltype(&clGetDeviceInfo)>("clGetDeviceInfo");
  const cl_int err = real(device, name, size, value, size_ret);
  const cl_ulong reported = g_reported_max_alloc.load();
  if (err == CL_SUCCESS && name == CL_DEVICE_MAX_MEM_ALLOC_SIZE && reported && value &&
      size >= sizeof(cl_ulong)) {
    *static_cast<cl_ulong*>(value) = reported;
  }
  return err;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,
                      cl_int* errcode_ret) {
  static const auto real = next<decltype(&clCreateBuffer)>("clCreateBuffer");
  ++g_buffers;
  if (take(Fault::OversizedBuffer)) size = oversized_buffer(context);
  cl_int err = CL_SUCCESS;
  cl_mem buffer = real(context, flags, size, host_ptr, &err);
  if (errcode_ret) *errcode_ret = err;
  if (buffer) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    live_references()[buffer] = 1;
  }
  return buffer;
}

cl_int clRetainMemObject(cl_mem memobj) {
  static const auto real = next<decltype(&clRetainMemObject)>("clRetainMemObject");
  const cl_int err = real(memobj);
  if (err == CL_SUCCESS) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    auto it = live_references().find(memobj);
    if (it != live_references().end()) ++it->second;
  }
  return err;
}

cl_int clReleaseMemObject(cl_mem memobj) {
  static const auto real = next<decltype(&clReleaseMemObject)>("clReleaseMemObject");
  {
    // Before the real release: once it frees the object, a new buffer may get the same handle.
    std::lock_guard<std::mutex> lock(g_live_mutex);
    auto it = live_references().find(memobj);
    if (it != live_references().end() && --it->second == 0) live_references().erase(it);
  }
  return real(memobj);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                              const size_t* global_work_offset, const size_t* global_work_size,
                              const size_t* local_work_size, cl_uint num_events_in_wait_list,
                              const cl_event* event_wait_list, cl_event* event) {
  static const auto real = next<decltype(&clEnqueueNDRangeKernel)>("clEnqueueNDRangeKernel");
  ++g_kernels;
  if (take(Fault::OversizedWorkGroup)) {
    // One work-group of (limit x 2) work-items: each dimension within CL_DEVICE_MAX_WORK_ITEM_SIZES, the
    // product above the kernel's CL_KERNEL_WORK_GROUP_SIZE, the global size a multiple of it.
    cl_device_id device = nullptr;
    clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr);
    size_t limit = 0;
    clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, nullptr);
    size_t items[3] = {0, 0, 0};
    clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr);
    size_t local[3] = {std::min(limit, items[0]), 2, 1};
    if (local[0] * local[1] <= limit) local[1] = limit / local[0] + 1;
    return real(queue, kernel, std::max<cl_uint>(work_dim, 2), nullptr, local, local, num_events_in_wait_list,
                event_wait_list, event);
  }
  return real(queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
              num_events_in_wait_list, event_wait_list, event);
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking_read, size_t offset,
                           size_t size, void* ptr, cl_uint num_events_in_wait_list,
                           const cl_event* event_wait_list, cl_event* event) {
  static const auto real = next<decltype(&clEnqueueReadBuffer)>("clEnqueueReadBuffer");
  ++g_transfers;
  if (take(Fault::OversizedTransfer)) size = buffer_size(buffer) - offset + 1;
  return real(queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list, event_wait_list,
              event);
}

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking_write, size_t offset,
                            size_t size, const void* ptr, cl_uint num_events_in_wait_list,
                            const cl_event* event_wait_list, cl_event* event) {
  static const auto real = next<decltype(&clEnqueueWriteBuffer)>("clEnqueueWriteBuffer");
  ++g_transfers;
  if (take(Fault::OversizedTransfer)) size = buffer_size(buffer) - offset + 1;
  return real(queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list, event_wait_list,
              event);
}

cl_int clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,
                           size_t dst_offset, size_t size, cl_uint num_events_in_wait_list,
                           const cl_event* event_wait_list, cl_event* event) {
  static const auto real = next<decltype(&clEnqueueCopyBuffer)>("clEnqueueCopyBuffer");
  ++g_transfers;
  return real(queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events_in_wait_list,
              event_wait_list, event);
}

cl_int clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer, const void* pattern, size_t pattern_size,
                           size_t offset, size_t size, cl_uint num_events_in_wait_list,
                           const cl_event* event_wait_list, cl_event* event) {
  static const auto real = next<decltype(&clEnqueueFillBuffer)>("clEnqueueFillBuffer");
  ++g_transfers;
  return real(queue, buffer, pattern, pattern_size, offset, size, num_events_in_wait_list, event_wait_list,
              event);
}

}  // extern "C"
