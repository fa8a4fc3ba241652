// SPDX-License-Identifier: Apache-2.0
#include "runtime/enqueue_checks.hpp"

#include <string>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

// clGetMemObjectInfo, with a handle the driver does not know reported as the caller's mistake.
template <class T>
T mem_info(const std::string& where, const cl::Buffer& buffer, cl_mem_info name, const char* what) {
  T value{};
  const cl_int err = clGetMemObjectInfo(buffer(), name, sizeof value, &value, nullptr);
  if (err != CL_SUCCESS) {
    throw InvalidArgument(where + "the " + what + " buffer is not a valid OpenCL memory object (" +
                          "clGetMemObjectInfo: " + cl_error_name(err) + ")");
  }
  return value;
}

struct Extent {
  cl_mem root;          // the buffer itself, or the buffer a sub-buffer was made from
  std::uint64_t begin;  // bytes of root the kernels use: [begin, end)
  std::uint64_t end;
};

bool overlap(const Extent& a, const Extent& b) {
  return a.root == b.root && a.begin < b.end && b.begin < a.end;
}

Extent check_one(const std::string& where, const cl::Context& context, const EnqueueBuffer& b,
                 const char* what, cl_mem_flags refused, const std::string& why_refused) {
  if (!b.buffer()) throw InvalidArgument(where + "the " + what + " buffer is null");
  const auto type = mem_info<cl_mem_object_type>(where, b.buffer, CL_MEM_TYPE, what);
  if (type != CL_MEM_OBJECT_BUFFER) {
    throw InvalidArgument(where + "the " + what + " is an OpenCL memory object of type " +
                          std::to_string(type) + ", not a buffer (CL_MEM_OBJECT_BUFFER)");
  }
  if (mem_info<cl_context>(where, b.buffer, CL_MEM_CONTEXT, what) != context()) {
    throw InvalidArgument(
        where + "the " + what +
        " buffer belongs to another OpenCL context than the Runtime's; kernels can only use "
        "buffers of their own context");
  }
  const auto size = mem_info<std::size_t>(where, b.buffer, CL_MEM_SIZE, what);
  if (size < b.bytes) {
    throw InvalidArgument(where + "the " + what + " buffer holds " + std::to_string(size) + " bytes, the " +
                          what + " " + to_string(b.shape) + (b.packed ? " (packed words)" : " (float32)") +
                          " needs " + std::to_string(b.bytes));
  }
  const auto flags = mem_info<cl_mem_flags>(where, b.buffer, CL_MEM_FLAGS, what);
  if (flags & refused) throw InvalidArgument(where + "the " + what + " buffer " + why_refused);
  Extent e{b.buffer(), 0, 0};
  if (cl_mem parent = mem_info<cl_mem>(where, b.buffer, CL_MEM_ASSOCIATED_MEMOBJECT, what)) {
    e.root = parent;
    e.begin = mem_info<std::size_t>(where, b.buffer, CL_MEM_OFFSET, what);
  }
  e.end = e.begin + b.bytes;
  return e;
}

}  // namespace

void check_enqueue_arguments(const char* caller, const cl::Context& context, const EnqueueBuffer& input,
                             const EnqueueBuffer& output, bool output_is_read,
                             const std::vector<cl::Event>* wait) {
  const std::string where = std::string(caller) + ": ";
  const Extent in = check_one(where, context, input, "input", CL_MEM_WRITE_ONLY,
                              "was created CL_MEM_WRITE_ONLY, but the kernels read it");
  const Extent out =
      output_is_read
          ? check_one(where, context, output, "output", CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                      "was created CL_MEM_READ_ONLY or CL_MEM_WRITE_ONLY, but this layer's kernels write it "
                      "and read it back: use CL_MEM_READ_WRITE")
          : check_one(where, context, output, "output", CL_MEM_READ_ONLY,
                      "was created CL_MEM_READ_ONLY, but the kernels write it");
  // Work-items read input that others' outputs would already have overwritten (and a BinaryConvolution's
  // later chunks read the input after earlier ones wrote).
  if (overlap(in, out)) {
    throw InvalidArgument(
        where + "the input (bytes " + std::to_string(in.begin) + " to " + std::to_string(in.end) +
        ") and the output (bytes " + std::to_string(out.begin) + " to " + std::to_string(out.end) +
        ") overlap in one buffer; writing the output would overwrite input still to be read");
  }
  if (wait) {
    for (std::size_t i = 0; i < wait->size(); ++i) {
      if (!(*wait)[i]()) {
        throw InvalidArgument(where + "entry " + std::to_string(i) + " of the wait list (" +
                              std::to_string(wait->size()) + " events) is a null cl::Event");
      }
    }
  }
}

void check_outputs_apart(const char* caller, const cl::Context& context, const EnqueueBuffer& first,
                         const EnqueueBuffer& second) {
  const std::string where = std::string(caller) + ": ";
  const char* why = "was created CL_MEM_READ_ONLY, but the kernels write it";
  const Extent a = check_one(where, context, first, "output", CL_MEM_READ_ONLY, why);
  const Extent b = check_one(where, context, second, "bits", CL_MEM_READ_ONLY, why);
  if (overlap(a, b)) {
    throw InvalidArgument(where + "the output (bytes " + std::to_string(a.begin) + " to " +
                          std::to_string(a.end) + ") and the bits (bytes " + std::to_string(b.begin) +
                          " to " + std::to_string(b.end) +
                          ") overlap in one buffer; each would overwrite the other");
  }
}

}  // namespace xnorcl::detail
