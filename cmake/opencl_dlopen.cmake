# SPDX-License-Identifier: Apache-2.0
# XNORCL_DLOPEN_OPENCL: the library defines the OpenCL entry points itself (src/runtime/opencl_loader.cpp) and loads
# the driver's libOpenCL.so with dlopen on first use, so neither it nor an app links libOpenCL. That is what
# Android needs (the NDK has no libOpenCL.so; each vendor ships its own), see docs/android.md. Building needs
# only the OpenCL headers: the Khronos C headers (CL/cl.h) and OpenCL-CLHPP (CL/opencl.hpp or CL/cl2.hpp).
# A toolchain whose find root excludes them (the NDK's) takes -DOpenCL_INCLUDE_DIR=<dir>, the same cache
# variable as CMake's FindOpenCL.
find_path(OpenCL_INCLUDE_DIR NAMES CL/cl.h OpenCL/cl.h DOC "Directory with the OpenCL C headers (CL/cl.h)")
find_path(XNORCL_CLHPP_INCLUDE_DIR NAMES CL/opencl.hpp CL/cl2.hpp HINTS "${OpenCL_INCLUDE_DIR}"
  DOC "Directory with the OpenCL C++ bindings (CL/opencl.hpp)")
if(NOT OpenCL_INCLUDE_DIR OR NOT XNORCL_CLHPP_INCLUDE_DIR)
  message(FATAL_ERROR "XNORCL_DLOPEN_OPENCL needs the OpenCL headers: CL/cl.h (${OpenCL_INCLUDE_DIR}) and "
    "CL/opencl.hpp (${XNORCL_CLHPP_INCLUDE_DIR}). Pass -DOpenCL_INCLUDE_DIR=<dir> and, if OpenCL-CLHPP is "
    "elsewhere, -DXNORCL_CLHPP_INCLUDE_DIR=<dir> (e.g. Khronos OpenCL-Headers and OpenCL-CLHPP checkouts).")
endif()
message(STATUS "OpenCL loaded at run time (XNORCL_DLOPEN_OPENCL); headers: ${OpenCL_INCLUDE_DIR}")

# What the exported xnorcl::xnorcl needs in place of OpenCL::OpenCL: the headers, no library. The paths are
# those of this build machine, as FindOpenCL's would be.
add_library(xnorcl_opencl_headers INTERFACE)
set_target_properties(xnorcl_opencl_headers PROPERTIES EXPORT_NAME opencl_headers)
set(XNORCL_OPENCL_INCLUDE_DIRS "${OpenCL_INCLUDE_DIR}" "${XNORCL_CLHPP_INCLUDE_DIR}")
list(REMOVE_DUPLICATES XNORCL_OPENCL_INCLUDE_DIRS)
target_include_directories(xnorcl_opencl_headers SYSTEM INTERFACE ${XNORCL_OPENCL_INCLUDE_DIRS})
install(TARGETS xnorcl_opencl_headers EXPORT xnorclTargets)

# pkg-config: dlopen instead of libOpenCL.
set(XNORCL_PC_REQUIRES_PRIVATE "")
set(XNORCL_PC_LIBS_PRIVATE "${CMAKE_DL_LIBS}")
if(XNORCL_PC_LIBS_PRIVATE)
  set(XNORCL_PC_LIBS_PRIVATE "-l${XNORCL_PC_LIBS_PRIVATE}")
endif()
