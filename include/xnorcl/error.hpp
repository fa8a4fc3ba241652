// SPDX-License-Identifier: Apache-2.0
// Every failure xnorcl reports is an xnorcl::Error; cl::Error never escapes the library.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace xnorcl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Attributes, shapes, filters or buffers that the operation refuses (found before any device work).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// No OpenCL platform or no device matching the request.
class DeviceNotFound : public Error {
 public:
  using Error::Error;
};

// An OpenCL call failed: names the call and the symbolic error (CL_INVALID_WORK_GROUP_SIZE, not -54).
class OpenCLError : public Error {
 public:
  OpenCLError(const std::string& call, std::int32_t code, const std::string& context = "");
  std::int32_t code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }

 private:
  std::string call_;
  std::int32_t code_;
};

// clBuildProgram failed; what() includes the build log.
class BuildError : public Error {
 public:
  BuildError(const std::string& message, std::string build_log)
      : Error(message + "\n--- build log ---\n" + build_log), build_log_(std::move(build_log)) {}
  const std::string& build_log() const noexcept { return build_log_; }

 private:
  std::string build_log_;
};

// "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL error -12345" for codes it does not know.
std::string cl_error_name(std::int32_t code);

}  // namespace xnorcl
