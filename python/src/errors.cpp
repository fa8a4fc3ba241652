// SPDX-License-Identifier: Apache-2.0
// xnorcl.Error and its subclasses, mirroring the C++ hierarchy with the same messages. InvalidArgument is
// also a ValueError, so code that catches ValueError for bad arguments keeps working.
#include "common.hpp"

namespace xnorcl::python {

namespace {

struct ErrorTypes {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* device_not_found = nullptr;
  PyObject* opencl_error = nullptr;
  PyObject* build_error = nullptr;
};
ErrorTypes types;  // created once at import; the module keeps references

PyObject* new_type(nb::module_& m, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("xnorcl.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

// Raises an instance of `type` with extra attributes (OpenCLError.code, BuildError.build_log, ...).
void raise(PyObject* type, const char* message,
           const std::vector<std::pair<const char*, nb::object>>& extra) {
  nb::object exception = nb::borrow(type)(nb::str(message));
  for (const auto& [name, value] : extra) exception.attr(name) = value;
  PyErr_SetObject(type, exception.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const BuildError& e) {
    raise(types.build_error, e.what(), {{"build_log", nb::str(e.build_log().c_str())}});
  } catch (const OpenCLError& e) {
    raise(types.opencl_error, e.what(), {{"call", nb::str(e.call().c_str())}, {"code", nb::int_(e.code())}});
  } catch (const DeviceNotFound& e) {
    PyErr_SetString(types.device_not_found, e.what());
  } catch (const InvalidArgument& e) {
    PyErr_SetString(types.invalid_argument, e.what());
  } catch (const Error& e) {
    PyErr_SetString(types.error, e.what());
  }
  // Anything else propagates to nanobind's own translators.
}

}  // namespace

void bind_errors(nb::module_& m) {
  types.error = new_type(m, "Error", "Every failure xnorcl reports (C++ xnorcl::Error).", PyExc_RuntimeError);
  nb::object invalid_bases = nb::make_tuple(nb::handle(types.error), nb::handle(PyExc_ValueError));
  types.invalid_argument =
      new_type(m, "InvalidArgument",
               "Attributes, shapes, filters or arrays that xnorcl refuses, found before any device work.",
               invalid_bases.ptr());
  types.device_not_found =
      new_type(m, "DeviceNotFound", "No OpenCL platform, or no device matching the request.", types.error);
  types.opencl_error =
      new_type(m, "OpenCLError",
               "An OpenCL call failed; `call` names it and `code` is the OpenCL error code.", types.error);
  types.build_error =
      new_type(m, "BuildError", "Building a kernel program failed; `build_log` holds the compiler's log.",
               types.error);
  nb::register_exception_translator(translate);

  // Not every error can be provoked from Python on every machine (a failed OpenCL call, a failed build):
  // the tests raise each C++ type through this hook to check its translation.
  m.def(
      "_raise_error",
      [](const std::string& kind, const std::string& message) {
        if (kind == "InvalidArgument") throw InvalidArgument(message);
        if (kind == "DeviceNotFound") throw DeviceNotFound(message);
        if (kind == "OpenCLError") throw OpenCLError("clEnqueueNDRangeKernel", -54, message);
        if (kind == "BuildError") throw BuildError(message, "<kernel>:1:1: error: test log");
        throw Error(message);
      },
      nb::arg("kind"), nb::arg("message"));
}

}  // namespace xnorcl::python
