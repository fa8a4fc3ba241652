// SPDX-License-Identifier: Apache-2.0
// OpenCL-CLHPP configuration shared by xnorcl and every app that includes it.
//
// The library and the app must see OpenCL-CLHPP compiled the same way (its classes are inline), so the
// macros are set here only when the app has not set them, and any different choice is refused at compile
// time instead of failing at run time.
#pragma once

#if defined(CL_HPP_) && !defined(CL_HPP_ENABLE_EXCEPTIONS)
#error "xnorcl: include <xnorcl/xnorcl.hpp> before <CL/opencl.hpp>, or define CL_HPP_ENABLE_EXCEPTIONS"
#endif

#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_ENABLE_EXCEPTIONS
#endif

#if defined(__has_include)
#if __has_include(<CL/opencl.hpp>)
#include <CL/opencl.hpp>
#else
#include <CL/cl2.hpp>
#endif
#else
#include <CL/opencl.hpp>
#endif

static_assert(CL_HPP_TARGET_OPENCL_VERSION == 120,
              "xnorcl is built with CL_HPP_TARGET_OPENCL_VERSION 120; an app must not set another value");
static_assert(CL_HPP_MINIMUM_OPENCL_VERSION == 120,
              "xnorcl is built with CL_HPP_MINIMUM_OPENCL_VERSION 120; an app must not set another value");
