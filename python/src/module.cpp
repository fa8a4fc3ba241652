// SPDX-License-Identifier: Apache-2.0
// xnorcl._xnorcl: the C++ library for Python. The package xnorcl (python/xnorcl/__init__.py) re-exports it.
#include "common.hpp"

NB_MODULE(_xnorcl, m) {
  m.doc() = "xnorcl's C++ library: binary (xnor-popcount) convolutions on OpenCL devices";
  m.attr("__version__") = xnorcl::version();
  xnorcl::python::bind_errors(m);
  xnorcl::python::bind_runtime(m);
  xnorcl::python::bind_convolution(m);
  xnorcl::python::bind_network(m);
  xnorcl::python::bind_graph(m);
}
