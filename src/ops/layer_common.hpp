// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the network layers (threshold_pack, binary_maxpool, binary_fc, network): shape checks,
// order keys, the enqueue checks and the one-dimensional launch with the program's fixed local size.
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/float_bits.hpp"
#include "runtime/cl_call.hpp"
#include "runtime/enqueue_checks.hpp"
#include "runtime/launch.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/packed.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl::detail {

inline std::int64_t ceil_to(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Every dimension positive and the element count within 2^31 - 1 (the kernels index work-items with int).
inline void check_layer_shape(const Shape& s, const std::string& what) {
  for (int i = 0; i < 4; ++i) {
    if (s[i] <= 0) {
      throw InvalidArgument(what + ": shape " + xnorcl::to_string(s) + " has a dimension below 1 (axis " +
                            std::to_string(i) + " = " + std::to_string(s[i]) + ")");
    }
    if (s[i] > INT_MAX) {
      throw InvalidArgument(what + ": shape " + xnorcl::to_string(s) + " axis " + std::to_string(i) +
                            " is above " + std::to_string(INT_MAX));
    }
  }
  std::int64_t n = 1;
  for (int i = 0; i < 4; ++i) {
    if (n > INT_MAX / s[i]) {
      throw InvalidArgument(what + ": shape " + xnorcl::to_string(s) + " holds more than " +
                            std::to_string(INT_MAX) + " elements, more than these kernels index");
    }
    n *= s[i];
  }
}

// What decides a pool launch's speed, as a tuning class: the kernel, the shapes and the window.
inline std::string pool_tuning_class(const char* kernel, const PoolGeometry& g, const PoolAttributes& a) {
  return std::string(kernel) + " " + xnorcl::to_string(g.input) + " -> " + xnorcl::to_string(g.output) +
         " kernel " + std::to_string(a.kernel[0]) + "x" + std::to_string(a.kernel[1]) + " stride " +
         std::to_string(a.strides[0]) + "x" + std::to_string(a.strides[1]) + " pads " +
         std::to_string(g.pads_begin[0]) + "," + std::to_string(g.pads_begin[1]);
}

inline std::int64_t element_count(const Shape& s) {
  return s[0] * s[1] * s[2] * s[3];
}

// The device time of a command in milliseconds, from its profiling events (waits for it to finish).
inline double event_milliseconds(const cl::Event& event) {
  event.wait();
  return static_cast<double>(event.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             event.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
         1e-6;
}

// Enqueues a 1-D kernel over `total` work-items (rounded up to the program's local size) or, with rows > 1,
// a 2-D range (global0 x rows, local (local_size, 1)).
inline cl::Event enqueue_linear(const cl::CommandQueue& queue, cl::Kernel& kernel, std::size_t global0,
                                std::size_t local_size, const std::vector<cl::Event>* wait, const char* name,
                                std::size_t rows = 1) {
  return cl_call(
      [&] {
        cl::Event e;
        const auto gate = launch_gate();
        const std::size_t global = static_cast<std::size_t>(
            ceil_to(static_cast<std::int64_t>(global0), static_cast<std::int64_t>(local_size)));
        if (rows == 1) {
          queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(global), cl::NDRange(local_size),
                                     wait, &e);
        } else {
          queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(global, rows),
                                     cl::NDRange(local_size, 1), wait, &e);
        }
        return e;
      },
      std::string("enqueueing ") + name);
}

// Sets kernel arguments in order (buffers and cl_int / cl_uint values).
template <class... Args>
void set_args(cl::Kernel& kernel, const char* name, const Args&... args) {
  cl_call(
      [&] {
        cl_uint i = 0;
        (kernel.setArg(i++, args), ...);
      },
      std::string("setting the arguments of ") + name);
}

inline const std::shared_ptr<RuntimeState>& runtime_state(const Runtime& runtime, const char* what) {
  const std::shared_ptr<RuntimeState>& s = runtime.state();
  if (!s) throw InvalidArgument(std::string(what) + " needs a Runtime made by Runtime::create");
  return s;
}

// Host in, host out for a layer: uploads `in` (in_count values), runs enqueue(input, output), reads
// out_count values back (blocking).
template <class Out, class In, class F>
std::vector<Out> run_on_device(const RuntimeState& s, const In* in, std::size_t in_count,
                               std::size_t out_count, F&& enqueue, const char* what) {
  if (!in) throw InvalidArgument(std::string(what) + ": the input pointer is null");
  std::vector<Out> out(out_count);
  cl_call(
      [&] {
        cl::Buffer input(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_count * sizeof(In),
                         const_cast<In*>(in));
        cl::Buffer output(s.context, CL_MEM_READ_WRITE, out_count * sizeof(Out));
        std::vector<cl::Event> done(1, enqueue(input, output));
        s.queue.enqueueReadBuffer(output, CL_TRUE, 0, out_count * sizeof(Out), out.data(), &done);
      },
      what);
  s.after_first_host_run();  // the program cache, on drivers that add code at first launch
  return out;
}

}  // namespace xnorcl::detail
