// SPDX-License-Identifier: Apache-2.0
// The OpenCL entry points of a build that loads libOpenCL.so at run time (CMake option XNORCL_DLOPEN_OPENCL;
// see opencl_loader.hpp). Compiled only with that option.
//
// Every function below has the name and signature of the OpenCL 1.0-1.2 function (cl.h and cl_gl.h; the
// compiler checks each against the header's declaration) and calls the driver's function of that name,
// looked up once, on first use. Without a driver it fails the way OpenCL fails: clGetPlatformIDs reports
// CL_PLATFORM_NOT_FOUND_KHR, as the ICD loader does when it finds no driver, and xnorcl's Runtime::create
// then throws DeviceNotFound with opencl_loader_report(). Every other function returns CL_INVALID_OPERATION
// (or stores it in errcode_ret and returns null): no OpenCL object can exist without a platform, so those are
// reached only when a driver lacks that one function (an OpenCL 1.1 driver asked for a 1.2 function).
#define CL_TARGET_OPENCL_VERSION 120
// Deprecated functions are entry points too (apps and older CLHPP call them); defining them must not warn.
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/opencl_loader.hpp"

namespace xnorcl::detail {
namespace {

struct Attempt {
  std::string path;
  std::string error;
};

struct Driver {
  void* handle = nullptr;  // never closed: OpenCL objects and driver threads outlive any point to do it
  std::string path;
  std::vector<Attempt> failed;
  bool from_environment = false;
};

// Where the OpenCL library may be, in order. "libOpenCL.so" finds what the dynamic linker finds: an app's own
// copy, Android's public libraries, or Linux's development symlink. Then the places vendors put it on Android
// (lib64 for 64-bit processes, lib for 32-bit ones) and the names Pixel and Android Automotive devices use.
// On Linux the ICD loader's run-time name libOpenCL.so.1 comes second: without -dev packages it is all there
// is. XNORCL_OPENCL_LIBRARY_PATHS (colon-separated) replaces the whole list; it exists for tests and for
// diagnosing a device, and is not a setting an app should need.
std::vector<std::string> candidates(bool& from_environment) {
  const char* list = std::getenv("XNORCL_OPENCL_LIBRARY_PATHS");
  from_environment = list && *list;
  if (from_environment) {
    std::vector<std::string> paths;
    std::string text = list;
    for (std::size_t begin = 0, end; begin <= text.size(); begin = end + 1) {
      end = text.find(':', begin);
      if (end == std::string::npos) end = text.size();
      if (end > begin) paths.push_back(text.substr(begin, end - begin));
    }
    return paths;
  }
  const std::string lib = sizeof(void*) == 8 ? "lib64" : "lib";
  std::vector<std::string> paths = {"libOpenCL.so"};
#ifndef __ANDROID__
  paths.push_back("libOpenCL.so.1");
#endif
  for (const char* dir : {"/system/vendor/", "/vendor/", "/system/"})
    paths.push_back(dir + lib + "/libOpenCL.so");
  paths.push_back("libOpenCL-pixel.so");
  paths.push_back("libOpenCL-car.so");
  return paths;
}

// dlerror() without the leading "<path>: " when that repeats the path tried (it names the file it found
// otherwise, which is worth keeping).
std::string last_dlerror(const std::string& path) {
  const char* e = dlerror();
  std::string error = e ? e : "dlopen failed";
  if (error.rfind(path + ": ", 0) == 0) error.erase(0, path.size() + 2);
  return error;
}

Driver load() {
  Driver d;
  for (const std::string& path : candidates(d.from_environment)) {
    // RTLD_LOCAL: the driver's symbols must not take the place of ours (or the reverse) for anyone else.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      d.failed.push_back({path, last_dlerror(path)});
      continue;
    }
    void* entry = dlsym(handle, "clGetPlatformIDs");
    // A library that resolves to these very functions (libxnorcl itself, say) would call itself forever.
    const bool is_ours = entry == reinterpret_cast<void*>(&::clGetPlatformIDs);
    if (!entry || is_ours) {
      d.failed.push_back({path, is_ours ? "it is xnorcl's own forwarding library, not a driver"
                                        : "it loaded but has no clGetPlatformIDs"});
      dlclose(handle);
      continue;
    }
    d.handle = handle;
    d.path = path;
    break;
  }
  return d;
}

// Loaded once, by whichever thread calls OpenCL first (a function-local static is initialised thread-safely).
const Driver& driver() {
  static const Driver d = load();
  return d;
}

template <typename Fn>
Fn driver_function(const char* name) {
  const Driver& d = driver();
  return d.handle ? reinterpret_cast<Fn>(dlsym(d.handle, name)) : nullptr;
}

// The result of a function the driver does not have (see the top of this file).
template <typename Ret, typename... Args>
Ret unavailable([[maybe_unused]] Args... args) {
  constexpr cl_int error = CL_INVALID_OPERATION;
  if constexpr (std::is_pointer_v<Ret>) {
    // Functions that create an object report through their last argument, errcode_ret.
    if constexpr (sizeof...(Args) > 0) {
      using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
      if constexpr (std::is_same_v<Last, cl_int*>) {
        if (cl_int* errcode_ret = std::get<sizeof...(Args) - 1>(std::tie(args...))) *errcode_ret = error;
      }
    }
    return nullptr;
  } else {
    return error;
  }
}

}  // namespace

std::string opencl_loader_report() {
  const Driver& d = driver();
  if (d.handle) return "OpenCL library loaded at run time (XNORCL_DLOPEN_OPENCL): " + d.path;
  std::string report =
      "xnorcl loads the OpenCL library at run time (built with XNORCL_DLOPEN_OPENCL) and none loaded; tried";
  report += d.from_environment ? " (the list in XNORCL_OPENCL_LIBRARY_PATHS):" : ":";
  for (const Attempt& a : d.failed) report += "\n  " + a.path + ": " + a.error;
#ifdef __ANDROID__
  report +=
      "\nAn app targeting Android 12 (API 31) or later must request the library in its manifest: "
      "<uses-native-library android:name=\"libOpenCL.so\" android:required=\"false\"/>, and the same for "
      "libOpenCL-pixel.so and libOpenCL-car.so (docs/android.md).";
#endif
  return report;
}

}  // namespace xnorcl::detail

// Exported whatever the library's default symbol visibility: apps link these in place of libOpenCL's.
#define XNORCL_CL_EXPORT __attribute__((visibility("default")))

// Defines the entry point `name`, calling the driver's function of that name (resolved on first use).
#define XNORCL_FORWARD(RET, name, PARAMS, ARGS)                                              \
  extern "C" XNORCL_CL_EXPORT RET CL_API_CALL name PARAMS {                                  \
    static const auto driver_fn = xnorcl::detail::driver_function<decltype(&::name)>(#name); \
    return driver_fn ? driver_fn ARGS : xnorcl::detail::unavailable<RET> ARGS;               \
  }

// The one function that must work without a driver: it says there is no platform.
extern "C" XNORCL_CL_EXPORT cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries,
                                                                cl_platform_id* platforms,
                                                                cl_uint* num_platforms) {
  static const auto driver_fn =
      xnorcl::detail::driver_function<decltype(&::clGetPlatformIDs)>("clGetPlatformIDs");
  if (driver_fn) return driver_fn(num_entries, platforms, num_platforms);
  if (num_platforms) *num_platforms = 0;
  return CL_PLATFORM_NOT_FOUND_KHR;
}

// OpenCL 1.0-1.2 (cl.h, the deprecated functions included), then OpenGL sharing (cl_gl.h), in header order.
// Generated from the headers once; OpenCL 1.2 does not change.
XNORCL_FORWARD(cl_int, clGetPlatformInfo,
               (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size,
                void* param_value, size_t* param_value_size_ret),
               (platform, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clGetDeviceIDs,
               (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                cl_device_id* devices, cl_uint* num_devices),
               (platform, device_type, num_entries, devices, num_devices))
XNORCL_FORWARD(cl_int, clGetDeviceInfo,
               (cl_device_id device, cl_device_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (device, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clCreateSubDevices,
               (cl_device_id in_device, const cl_device_partition_property* properties, cl_uint num_devices,
                cl_device_id* out_devices, cl_uint* num_devices_ret),
               (in_device, properties, num_devices, out_devices, num_devices_ret))
XNORCL_FORWARD(cl_int, clRetainDevice, (cl_device_id device), (device))
XNORCL_FORWARD(cl_int, clReleaseDevice, (cl_device_id device), (device))
XNORCL_FORWARD(cl_context, clCreateContext,
               (const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,
                void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*), void* user_data,
                cl_int* errcode_ret),
               (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))
XNORCL_FORWARD(cl_context, clCreateContextFromType,
               (const cl_context_properties* properties, cl_device_type device_type,
                void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*), void* user_data,
                cl_int* errcode_ret),
               (properties, device_type, pfn_notify, user_data, errcode_ret))
XNORCL_FORWARD(cl_int, clRetainContext, (cl_context context), (context))
XNORCL_FORWARD(cl_int, clReleaseContext, (cl_context context), (context))
XNORCL_FORWARD(cl_int, clGetContextInfo,
               (cl_context context, cl_context_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (context, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clRetainCommandQueue, (cl_command_queue command_queue), (command_queue))
XNORCL_FORWARD(cl_int, clReleaseCommandQueue, (cl_command_queue command_queue), (command_queue))
XNORCL_FORWARD(cl_int, clGetCommandQueueInfo,
               (cl_command_queue command_queue, cl_command_queue_info param_name, size_t param_value_size,
                void* param_value, size_t* param_value_size_ret),
               (command_queue, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_mem, clCreateBuffer,
               (cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret),
               (context, flags, size, host_ptr, errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateSubBuffer,
               (cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type,
                const void* buffer_create_info, cl_int* errcode_ret),
               (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateImage,
               (cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                const cl_image_desc* image_desc, void* host_ptr, cl_int* errcode_ret),
               (context, flags, image_format, image_desc, host_ptr, errcode_ret))
XNORCL_FORWARD(cl_int, clRetainMemObject, (cl_mem memobj), (memobj))
XNORCL_FORWARD(cl_int, clReleaseMemObject, (cl_mem memobj), (memobj))
XNORCL_FORWARD(cl_int, clGetSupportedImageFormats,
               (cl_context context, cl_mem_flags flags, cl_mem_object_type image_type, cl_uint num_entries,
                cl_image_format* image_formats, cl_uint* num_image_formats),
               (context, flags, image_type, num_entries, image_formats, num_image_formats))
XNORCL_FORWARD(cl_int, clGetMemObjectInfo,
               (cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (memobj, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clGetImageInfo,
               (cl_mem image, cl_image_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (image, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clSetMemObjectDestructorCallback,
               (cl_mem memobj, void(CL_CALLBACK* pfn_notify)(cl_mem, void*), void* user_data),
               (memobj, pfn_notify, user_data))
XNORCL_FORWARD(cl_int, clRetainSampler, (cl_sampler sampler), (sampler))
XNORCL_FORWARD(cl_int, clReleaseSampler, (cl_sampler sampler), (sampler))
XNORCL_FORWARD(cl_int, clGetSamplerInfo,
               (cl_sampler sampler, cl_sampler_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (sampler, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_program, clCreateProgramWithSource,
               (cl_context context, cl_uint count, const char** strings, const size_t* lengths,
                cl_int* errcode_ret),
               (context, count, strings, lengths, errcode_ret))
XNORCL_FORWARD(cl_program, clCreateProgramWithBinary,
               (cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                const size_t* lengths, const unsigned char** binaries, cl_int* binary_status,
                cl_int* errcode_ret),
               (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret))
XNORCL_FORWARD(cl_program, clCreateProgramWithBuiltInKernels,
               (cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                const char* kernel_names, cl_int* errcode_ret),
               (context, num_devices, device_list, kernel_names, errcode_ret))
XNORCL_FORWARD(cl_int, clRetainProgram, (cl_program program), (program))
XNORCL_FORWARD(cl_int, clReleaseProgram, (cl_program program), (program))
XNORCL_FORWARD(cl_int, clBuildProgram,
               (cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data),
               (program, num_devices, device_list, options, pfn_notify, user_data))
XNORCL_FORWARD(cl_int, clCompileProgram,
               (cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                cl_uint num_input_headers, const cl_program* input_headers, const char** header_include_names,
                void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data),
               (program, num_devices, device_list, options, num_input_headers, input_headers,
                header_include_names, pfn_notify, user_data))
XNORCL_FORWARD(cl_program, clLinkProgram,
               (cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                cl_uint num_input_programs, const cl_program* input_programs,
                void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data, cl_int* errcode_ret),
               (context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                user_data, errcode_ret))
XNORCL_FORWARD(cl_int, clUnloadPlatformCompiler, (cl_platform_id platform), (platform))
XNORCL_FORWARD(cl_int, clGetProgramInfo,
               (cl_program program, cl_program_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (program, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clGetProgramBuildInfo,
               (cl_program program, cl_device_id device, cl_program_build_info param_name,
                size_t param_value_size, void* param_value, size_t* param_value_size_ret),
               (program, device, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_kernel, clCreateKernel, (cl_program program, const char* kernel_name, cl_int* errcode_ret),
               (program, kernel_name, errcode_ret))
XNORCL_FORWARD(cl_int, clCreateKernelsInProgram,
               (cl_program program, cl_uint num_kernels, cl_kernel* kernels, cl_uint* num_kernels_ret),
               (program, num_kernels, kernels, num_kernels_ret))
XNORCL_FORWARD(cl_int, clRetainKernel, (cl_kernel kernel), (kernel))
XNORCL_FORWARD(cl_int, clReleaseKernel, (cl_kernel kernel), (kernel))
XNORCL_FORWARD(cl_int, clSetKernelArg,
               (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void* arg_value),
               (kernel, arg_index, arg_size, arg_value))
XNORCL_FORWARD(cl_int, clGetKernelInfo,
               (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (kernel, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clGetKernelArgInfo,
               (cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name, size_t param_value_size,
                void* param_value, size_t* param_value_size_ret),
               (kernel, arg_indx, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clGetKernelWorkGroupInfo,
               (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name,
                size_t param_value_size, void* param_value, size_t* param_value_size_ret),
               (kernel, device, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clWaitForEvents, (cl_uint num_events, const cl_event* event_list),
               (num_events, event_list))
XNORCL_FORWARD(cl_int, clGetEventInfo,
               (cl_event event, cl_event_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (event, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_event, clCreateUserEvent, (cl_context context, cl_int* errcode_ret), (context, errcode_ret))
XNORCL_FORWARD(cl_int, clRetainEvent, (cl_event event), (event))
XNORCL_FORWARD(cl_int, clReleaseEvent, (cl_event event), (event))
XNORCL_FORWARD(cl_int, clSetUserEventStatus, (cl_event event, cl_int execution_status),
               (event, execution_status))
XNORCL_FORWARD(cl_int, clSetEventCallback,
               (cl_event event, cl_int command_exec_callback_type,
                void(CL_CALLBACK* pfn_notify)(cl_event, cl_int, void*), void* user_data),
               (event, command_exec_callback_type, pfn_notify, user_data))
XNORCL_FORWARD(cl_int, clGetEventProfilingInfo,
               (cl_event event, cl_profiling_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (event, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clFlush, (cl_command_queue command_queue), (command_queue))
XNORCL_FORWARD(cl_int, clFinish, (cl_command_queue command_queue), (command_queue))
XNORCL_FORWARD(cl_int, clEnqueueReadBuffer,
               (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset,
                size_t size, void* ptr, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                cl_event* event),
               (command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueReadBufferRect,
               (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                const size_t* buffer_origin, const size_t* host_origin, const size_t* region,
                size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                size_t host_slice_pitch, void* ptr, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,
                buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueWriteBuffer,
               (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset,
                size_t size, const void* ptr, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueWriteBufferRect,
               (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                const size_t* buffer_origin, const size_t* host_origin, const size_t* region,
                size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                size_t host_slice_pitch, const void* ptr, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch,
                buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueFillBuffer,
               (cl_command_queue command_queue, cl_mem buffer, const void* pattern, size_t pattern_size,
                size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                cl_event* event),
               (command_queue, buffer, pattern, pattern_size, offset, size, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueCopyBuffer,
               (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,
                size_t dst_offset, size_t size, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueCopyBufferRect,
               (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                const size_t* src_origin, const size_t* dst_origin, const size_t* region,
                size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch,
                src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events_in_wait_list, event_wait_list,
                event))
XNORCL_FORWARD(cl_int, clEnqueueReadImage,
               (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read, const size_t* origin,
                const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr,
                num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueWriteImage,
               (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write, const size_t* origin,
                const size_t* region, size_t input_row_pitch, size_t input_slice_pitch, const void* ptr,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, image, blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr,
                num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueFillImage,
               (cl_command_queue command_queue, cl_mem image, const void* fill_color, const size_t* origin,
                const size_t* region, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                cl_event* event),
               (command_queue, image, fill_color, origin, region, num_events_in_wait_list, event_wait_list,
                event))
XNORCL_FORWARD(cl_int, clEnqueueCopyImage,
               (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image, const size_t* src_origin,
                const size_t* dst_origin, const size_t* region, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, src_image, dst_image, src_origin, dst_origin, region, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueCopyImageToBuffer,
               (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer, const size_t* src_origin,
                const size_t* region, size_t dst_offset, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueCopyBufferToImage,
               (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset,
                const size_t* dst_origin, const size_t* region, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, num_events_in_wait_list,
                event_wait_list, event))
XNORCL_FORWARD(void*, clEnqueueMapBuffer,
               (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map, cl_map_flags map_flags,
                size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                cl_event* event, cl_int* errcode_ret),
               (command_queue, buffer, blocking_map, map_flags, offset, size, num_events_in_wait_list,
                event_wait_list, event, errcode_ret))
XNORCL_FORWARD(void*, clEnqueueMapImage,
               (cl_command_queue command_queue, cl_mem image, cl_bool blocking_map, cl_map_flags map_flags,
                const size_t* origin, const size_t* region, size_t* image_row_pitch,
                size_t* image_slice_pitch, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                cl_event* event, cl_int* errcode_ret),
               (command_queue, image, blocking_map, map_flags, origin, region, image_row_pitch,
                image_slice_pitch, num_events_in_wait_list, event_wait_list, event, errcode_ret))
XNORCL_FORWARD(cl_int, clEnqueueUnmapMemObject,
               (cl_command_queue command_queue, cl_mem memobj, void* mapped_ptr,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueMigrateMemObjects,
               (cl_command_queue command_queue, cl_uint num_mem_objects, const cl_mem* mem_objects,
                cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, num_mem_objects, mem_objects, flags, num_events_in_wait_list, event_wait_list,
                event))
XNORCL_FORWARD(cl_int, clEnqueueNDRangeKernel,
               (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                const size_t* global_work_offset, const size_t* global_work_size,
                const size_t* local_work_size, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueNativeKernel,
               (cl_command_queue command_queue, void(CL_CALLBACK* user_func)(void*), void* args,
                size_t cb_args, cl_uint num_mem_objects, const cl_mem* mem_list, const void** args_mem_loc,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
                num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueMarkerWithWaitList,
               (cl_command_queue command_queue, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueBarrierWithWaitList,
               (cl_command_queue command_queue, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(void*, clGetExtensionFunctionAddressForPlatform,
               (cl_platform_id platform, const char* func_name), (platform, func_name))
XNORCL_FORWARD(cl_int, clSetCommandQueueProperty,
               (cl_command_queue command_queue, cl_command_queue_properties properties, cl_bool enable,
                cl_command_queue_properties* old_properties),
               (command_queue, properties, enable, old_properties))
XNORCL_FORWARD(cl_mem, clCreateImage2D,
               (cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                size_t image_width, size_t image_height, size_t image_row_pitch, void* host_ptr,
                cl_int* errcode_ret),
               (context, flags, image_format, image_width, image_height, image_row_pitch, host_ptr,
                errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateImage3D,
               (cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                size_t image_width, size_t image_height, size_t image_depth, size_t image_row_pitch,
                size_t image_slice_pitch, void* host_ptr, cl_int* errcode_ret),
               (context, flags, image_format, image_width, image_height, image_depth, image_row_pitch,
                image_slice_pitch, host_ptr, errcode_ret))
XNORCL_FORWARD(cl_int, clEnqueueMarker, (cl_command_queue command_queue, cl_event* event),
               (command_queue, event))
XNORCL_FORWARD(cl_int, clEnqueueWaitForEvents,
               (cl_command_queue command_queue, cl_uint num_events, const cl_event* event_list),
               (command_queue, num_events, event_list))
XNORCL_FORWARD(cl_int, clEnqueueBarrier, (cl_command_queue command_queue), (command_queue))
XNORCL_FORWARD(cl_int, clUnloadCompiler, (), ())
XNORCL_FORWARD(void*, clGetExtensionFunctionAddress, (const char* func_name), (func_name))
XNORCL_FORWARD(cl_command_queue, clCreateCommandQueue,
               (cl_context context, cl_device_id device, cl_command_queue_properties properties,
                cl_int* errcode_ret),
               (context, device, properties, errcode_ret))
XNORCL_FORWARD(cl_sampler, clCreateSampler,
               (cl_context context, cl_bool normalized_coords, cl_addressing_mode addressing_mode,
                cl_filter_mode filter_mode, cl_int* errcode_ret),
               (context, normalized_coords, addressing_mode, filter_mode, errcode_ret))
XNORCL_FORWARD(cl_int, clEnqueueTask,
               (cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list,
                const cl_event* event_wait_list, cl_event* event),
               (command_queue, kernel, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_mem, clCreateFromGLBuffer,
               (cl_context context, cl_mem_flags flags, cl_GLuint bufobj, cl_int* errcode_ret),
               (context, flags, bufobj, errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateFromGLTexture,
               (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel,
                cl_GLuint texture, cl_int* errcode_ret),
               (context, flags, target, miplevel, texture, errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateFromGLRenderbuffer,
               (cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer, cl_int* errcode_ret),
               (context, flags, renderbuffer, errcode_ret))
XNORCL_FORWARD(cl_int, clGetGLObjectInfo,
               (cl_mem memobj, cl_gl_object_type* gl_object_type, cl_GLuint* gl_object_name),
               (memobj, gl_object_type, gl_object_name))
XNORCL_FORWARD(cl_int, clGetGLTextureInfo,
               (cl_mem memobj, cl_gl_texture_info param_name, size_t param_value_size, void* param_value,
                size_t* param_value_size_ret),
               (memobj, param_name, param_value_size, param_value, param_value_size_ret))
XNORCL_FORWARD(cl_int, clEnqueueAcquireGLObjects,
               (cl_command_queue command_queue, cl_uint num_objects, const cl_mem* mem_objects,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, num_objects, mem_objects, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_int, clEnqueueReleaseGLObjects,
               (cl_command_queue command_queue, cl_uint num_objects, const cl_mem* mem_objects,
                cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),
               (command_queue, num_objects, mem_objects, num_events_in_wait_list, event_wait_list, event))
XNORCL_FORWARD(cl_mem, clCreateFromGLTexture2D,
               (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel,
                cl_GLuint texture, cl_int* errcode_ret),
               (context, flags, target, miplevel, texture, errcode_ret))
XNORCL_FORWARD(cl_mem, clCreateFromGLTexture3D,
               (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel,
                cl_GLuint texture, cl_int* errcode_ret),
               (context, flags, target, miplevel, texture, errcode_ret))
