// SPDX-License-Identifier: Apache-2.0
// What every enqueue() of the library (BinaryConvolution, the layers, Network) requires of the caller's
// buffers and wait list, checked before anything is enqueued: a bad argument is an InvalidArgument naming it
// and its values, never a driver error halfway through the launches (by then some kernels would have run) and
// never a silently wrong answer.
#pragma once

#include <cstdint>
#include <vector>

#include "xnorcl/opencl.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl::detail {

struct EnqueueBuffer {
  const cl::Buffer& buffer;
  std::uint64_t bytes;  // what the shape needs (float32 values or packed words)
  Shape shape;
  bool packed = false;  // 32-bit packed words (xnorcl/packed.hpp) rather than float32
};

// input and output: non-null buffer objects of the runtime's context, large enough for their shapes, with
// access flags that allow what the kernels do (output_is_read: some kernel reads the output back; none does
// today: the pad fold is part of the GEMM's stores), not overlapping each other. wait: no null event.
// where: the caller, which starts every message ("ThresholdPack::enqueue").
void check_enqueue_arguments(const char* where, const cl::Context& context, const EnqueueBuffer& input,
                             const EnqueueBuffer& output, bool output_is_read,
                             const std::vector<cl::Event>* wait);

// Two outputs of one enqueue (a layer's float output and its packed bits): each checked as an output, and
// not overlapping each other.
void check_outputs_apart(const char* where, const cl::Context& context, const EnqueueBuffer& first,
                         const EnqueueBuffer& second);

}  // namespace xnorcl::detail
