// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/layer_buffers.hpp"

#include "runtime/cl_call.hpp"

namespace xnorcl::detail {
namespace {

// A read-only buffer holding a copy of `v`. The CL_MEM_COPY_HOST_PTR copy only reads the host pointer.
template <class T>
cl::Buffer upload(const cl::Context& context, const std::vector<T>& v) {
  return cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(T),
                    const_cast<T*>(v.data()));
}

}  // namespace

std::uint64_t LayerTables::bytes() const {
  return filter_image.size() + threshold_keys.size() * 4 + wsum.size() * 4 + patch_bytes + packed_bytes +
         rules.bytes();
}

LayerBuffers create_buffers(const cl::Context& context, const LayerTables& t, Epilogue& epilogue) {
  LayerBuffers b;
  cl_call(
      [&] {
        b.filters = upload(context, t.filter_image);
        b.threshold_keys = upload(context, t.threshold_keys);
        if (!t.wsum.empty()) b.wsum = upload(context, t.wsum);
        b.patches = cl::Buffer(context, CL_MEM_READ_WRITE, static_cast<std::size_t>(t.patch_bytes));
        if (t.packed_bytes > 0) {
          b.packed = cl::Buffer(context, CL_MEM_READ_WRITE, static_cast<std::size_t>(t.packed_bytes));
        }
        if (!t.rules.scale.empty()) {
          epilogue.scale = upload(context, t.rules.scale);
          epilogue.bias = upload(context, t.rules.bias);
        }
        if (!t.rules.keys.empty()) {
          epilogue.keys = upload(context, t.rules.keys);
          epilogue.modes = upload(context, t.rules.modes);
        }
        if (!t.rules.int_lo.empty()) {
          epilogue.int_lo = upload(context, t.rules.int_lo);
          epilogue.int_count = upload(context, t.rules.int_count);
        }
      },
      "allocating the device buffers of a BinaryConvolution");
  return b;
}

}  // namespace xnorcl::detail
