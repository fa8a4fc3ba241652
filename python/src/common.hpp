// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the extension module: the binding entry points of each unit and the numpy array checks.
//
// Arrays cross the boundary without copies: an input must already be a C-contiguous numpy array of the
// expected dtype and shape (anything else is an xnorcl.InvalidArgument naming the expected and given values,
// never a silent conversion), and results are new numpy arrays that own their memory.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace xnorcl::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_convolution(nb::module_& m);
void bind_network(nb::module_& m);
void bind_graph(nb::module_& m);

enum class DType { Float32, UInt8, UInt32 };
std::string dtype_name(DType t);

// A checked, C-contiguous input array. Holds a reference to the Python object, so `data` stays valid (also
// while the GIL is released) for as long as the view lives.
struct ArrayView {
  nb::ndarray<nb::ro> array;
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;
  const void* data() const { return array.data(); }
  std::size_t size() const { return array.size(); }
};

// Refuses anything but a C-contiguous numpy array of one of the allowed dtypes. `name` is the argument's
// name in messages.
ArrayView array_view(nb::handle object, const char* name, std::initializer_list<DType> allowed);
// Refuses a view whose shape is not `expected`.
void require_shape(const ArrayView& view, const std::vector<std::int64_t>& expected, const char* name);

std::string shape_text(const std::vector<std::int64_t>& shape);  // "(1, 3, 224, 224)"
std::vector<std::int64_t> to_vector(const Shape& s);

// A numpy array that owns `values` (moved, not copied).
nb::object to_numpy(std::vector<float>&& values, const std::vector<std::int64_t>& shape);
nb::object to_numpy(std::vector<std::uint32_t>&& values, const std::vector<std::int64_t>& shape);
nb::object to_numpy(std::vector<std::uint8_t>&& values, const std::vector<std::int64_t>& shape);

// The shape of a packed tensor's words: [N, H, W, ceil(C/32)] for the logical NCHW shape.
std::vector<std::int64_t> packed_words_shape(const Shape& logical);

// Python arguments read with the checks and messages of the library (InvalidArgument naming the argument).
std::vector<std::int64_t> int_sequence(nb::handle object, const char* name, std::size_t count);
Shape shape_argument(nb::handle object, const char* name);
std::vector<float> float_sequence(nb::handle object, const char* name);
std::string lower(std::string s);

}  // namespace xnorcl::python
