// SPDX-License-Identifier: Apache-2.0
// numpy arrays in and out, and the plain Python arguments (sequences of ints and floats).
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>

#include "common.hpp"

namespace xnorcl::python {

namespace {

bool dtype_is(const nb::dlpack::dtype& d, DType t) {
  switch (t) {
    case DType::Float32:
      return d == nb::dtype<float>();
    case DType::UInt8:
      return d == nb::dtype<std::uint8_t>();
    case DType::UInt32:
      return d == nb::dtype<std::uint32_t>();
  }
  return false;
}

std::string python_type_name(nb::handle object) {
  return nb::cast<std::string>(nb::str(object.type().attr("__name__")));
}

std::string allowed_text(std::initializer_list<DType> allowed) {
  std::string text;
  for (DType t : allowed) text += (text.empty() ? "" : " or ") + dtype_name(t);
  return text;
}

// numpy's name of the array's dtype ("float64", ">f4"), which says more than DLPack's code and bits.
std::string given_dtype(nb::handle object) {
  if (!nb::hasattr(object, "dtype")) return "unknown";
  nb::object dtype = object.attr("dtype");
  PyObject* text = PyObject_Str(dtype.ptr());
  if (!text) {
    PyErr_Clear();
    return "unknown";
  }
  return nb::cast<std::string>(nb::steal<nb::str>(text));
}

bool c_contiguous(const nb::ndarray<nb::ro>& a) {
  std::int64_t expected = 1;
  for (std::size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<std::int64_t>(a.shape(i));
  }
  return true;
}

template <typename T>
nb::object owned_array(std::vector<T>&& values, const std::vector<std::int64_t>& shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  std::vector<std::size_t> dims(shape.begin(), shape.end());
  return nb::ndarray<nb::numpy, T>(owned->data(), dims.size(), dims.data(), owner).cast();
}

}  // namespace

std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::UInt8:
      return "uint8";
    case DType::UInt32:
      return "uint32";
  }
  return "?";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::vector<std::int64_t> to_vector(const Shape& s) {
  return {s[0], s[1], s[2], s[3]};
}

ArrayView array_view(nb::handle object, const char* name, std::initializer_list<DType> allowed) {
  const std::string expected = "a C-contiguous numpy.ndarray of " + allowed_text(allowed);
  ArrayView view;
  // No conversion: a list or an array of another dtype is refused, not copied into something else.
  if (!nb::try_cast(object, view.array, false)) {
    throw InvalidArgument(std::string(name) + ": expected " + expected + ", got " + python_type_name(object) +
                          (nb::hasattr(object, "dtype") ? " of dtype " + given_dtype(object) : ""));
  }
  if (view.array.device_type() != nb::device::cpu::value) {
    throw InvalidArgument(std::string(name) + ": expected " + expected + " in host memory, got an array on " +
                          "another device");
  }
  bool known = false;
  for (DType t : allowed) {
    if (dtype_is(view.array.dtype(), t)) {
      view.dtype = t;
      known = true;
    }
  }
  if (!known) {
    throw InvalidArgument(std::string(name) + ": expected dtype " + allowed_text(allowed) + ", got " +
                          given_dtype(object));
  }
  for (std::size_t i = 0; i < view.array.ndim(); ++i)
    view.shape.push_back(static_cast<std::int64_t>(view.array.shape(i)));
  if (!c_contiguous(view.array)) {
    throw InvalidArgument(std::string(name) + ": expected " + expected + ", got a non-contiguous array " +
                          "of shape " + shape_text(view.shape) + " (use numpy.ascontiguousarray)");
  }
  return view;
}

void require_shape(const ArrayView& view, const std::vector<std::int64_t>& expected, const char* name) {
  if (view.shape != expected) {
    throw InvalidArgument(std::string(name) + ": expected shape " + shape_text(expected) + ", got " +
                          shape_text(view.shape));
  }
}

nb::object to_numpy(std::vector<float>&& values, const std::vector<std::int64_t>& shape) {
  return owned_array(std::move(values), shape);
}

nb::object to_numpy(std::vector<std::uint32_t>&& values, const std::vector<std::int64_t>& shape) {
  return owned_array(std::move(values), shape);
}

nb::object to_numpy(std::vector<std::uint8_t>&& values, const std::vector<std::int64_t>& shape) {
  return owned_array(std::move(values), shape);
}

std::vector<std::int64_t> packed_words_shape(const Shape& logical) {
  return {logical[0], logical[2], logical[3], packed_words_per_pixel(logical[1])};
}

std::vector<std::int64_t> int_sequence(nb::handle object, const char* name, std::size_t count) {
  const std::string expected = std::to_string(count) + " integers";
  if (!nb::isinstance<nb::sequence>(object) || nb::isinstance<nb::str>(object) || nb::len(object) != count) {
    throw InvalidArgument(std::string(name) + ": expected " + expected + ", got " +
                          nb::cast<std::string>(nb::repr(object)));
  }
  std::vector<std::int64_t> values;
  for (nb::handle item : object) {
    // Python's bool is an int; True as a stride is almost certainly a mistake.
    std::int64_t v = 0;
    if (nb::isinstance<nb::bool_>(item) || !nb::try_cast(item, v)) {
      throw InvalidArgument(std::string(name) + ": expected " + expected + " (64-bit), got " +
                            nb::cast<std::string>(nb::repr(object)));
    }
    values.push_back(v);
  }
  return values;
}

Shape shape_argument(nb::handle object, const char* name) {
  const std::vector<std::int64_t> v = int_sequence(object, name, 4);
  return {v[0], v[1], v[2], v[3]};
}

std::vector<float> float_sequence(nb::handle object, const char* name) {
  if (nb::isinstance<nb::ndarray<>>(object)) {
    const ArrayView view = array_view(object, name, {DType::Float32});
    if (view.shape.size() != 1) {
      throw InvalidArgument(std::string(name) + ": expected a 1-D array, got shape " +
                            shape_text(view.shape));
    }
    const float* p = static_cast<const float*>(view.data());
    return std::vector<float>(p, p + view.size());
  }
  if (!nb::isinstance<nb::sequence>(object) || nb::isinstance<nb::str>(object)) {
    throw InvalidArgument(std::string(name) +
                          ": expected a sequence of numbers or a 1-D float32 array, got " +
                          python_type_name(object));
  }
  std::vector<float> values;
  for (nb::handle item : object) {
    double v = 0;
    if (nb::isinstance<nb::bool_>(item) || !nb::try_cast(item, v)) {
      throw InvalidArgument(std::string(name) + ": expected numbers, got " +
                            nb::cast<std::string>(nb::repr(item)));
    }
    values.push_back(static_cast<float>(v));
  }
  return values;
}

}  // namespace xnorcl::python
