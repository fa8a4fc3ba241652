// SPDX-License-Identifier: Apache-2.0
// An app using both xnorcl and OpenCL-CLHPP of its own, against an xnorcl built with XNORCL_DLOPEN_OPENCL and
// linked with no libOpenCL: every cl* call, the app's inline CLHPP ones included, goes through xnorcl's
// loader (.ci/android_loader.sh runs it).
//
//   dlopen_consumer              runs a kernel of its own on xnorcl's queue and a binary convolution;
//                                prints PASS and exits 0 when both give the expected results
//   dlopen_consumer --no-driver  for a search list where nothing loads: expects clGetPlatformIDs to report
//                                CL_PLATFORM_NOT_FOUND_KHR and Runtime::create to throw DeviceNotFound, whose
//                                message it prints (the script checks that it names every path tried)
#include <xnorcl/xnorcl.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

const char* const kSource = R"(
__kernel void affine(__global float* x) {
  const size_t i = get_global_id(0);
  x[i] = 2.0f * x[i] + 1.0f;
}
)";

// The app's own OpenCL: program, kernel, buffer and queue objects of OpenCL-CLHPP, on xnorcl's device.
bool own_kernel(const xnorcl::Runtime& runtime) {
  const std::size_t n = 256;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  cl::Program program(runtime.context(), kSource, /*build=*/true);
  cl::Kernel kernel(program, "affine");
  cl::Buffer buffer(runtime.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x.data());
  kernel.setArg(0, buffer);
  cl::CommandQueue queue = runtime.queue();
  queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(n), cl::NDRange(64));
  queue.enqueueReadBuffer(buffer, CL_TRUE, 0, n * sizeof(float), x.data());
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != 2.0f * static_cast<float>(i) + 1.0f) return false;
  }
  return true;
}

// xnorcl's own work on the same runtime: a device run bitwise equal to the host reference.
bool convolution(const xnorcl::Runtime& runtime) {
  const xnorcl::Shape x_shape{1, 2, 6, 5}, f_shape{3, 2, 3, 3};
  std::vector<float> x(2 * 6 * 5);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 3 == 0);
  const std::uint8_t bytes[] = {0x5a, 0xc3, 0x99, 0x0f, 0xf0, 0x3c, 0xa5};
  const auto filter = xnorcl::Filter::from_packed(bytes, sizeof bytes, f_shape, xnorcl::BitOrder::LsbFirst);
  xnorcl::BinaryConvolution::Attributes a;
  a.pads_begin = a.pads_end = {1, 1};
  xnorcl::BinaryConvolution conv(runtime, a, x_shape, filter);
  const auto y = conv.run(x.data());
  const auto r = xnorcl::reference_binary_convolution(x.data(), x_shape, filter, a);
  return y.size() == r.size() && std::memcmp(y.data(), r.data(), y.size() * sizeof(float)) == 0;
}

// Which OpenCL libraries the process has mapped: the loader's dlopen, since nothing was linked.
void print_mapped_opencl_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> seen;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos || line.find("OpenCL", slash) == std::string::npos) continue;
    const std::string path = line.substr(slash);
    bool known = false;
    for (const auto& s : seen) known = known || s == path;
    if (!known) seen.push_back(path);
  }
  for (const auto& path : seen) std::printf("mapped: %s\n", path.c_str());
}

int expect_no_driver() {
  std::vector<cl::Platform> platforms;
  cl_int err = CL_SUCCESS;
  try {
    err = cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    err = e.err();
  }
  std::printf("cl::Platform::get: %s\n", xnorcl::cl_error_name(err).c_str());
  if (err != CL_PLATFORM_NOT_FOUND_KHR) {
    std::printf("FAIL: expected CL_PLATFORM_NOT_FOUND_KHR without a driver\n");
    return 1;
  }
  try {
    xnorcl::Runtime::create();
    std::printf("FAIL: Runtime::create found a device without a driver\n");
    return 1;
  } catch (const xnorcl::DeviceNotFound& e) {
    std::printf("DeviceNotFound: %s\n", e.what());
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "--no-driver") return expect_no_driver();
    const auto runtime = xnorcl::Runtime::create();
    const bool own = own_kernel(runtime);
    const bool conv = convolution(runtime);
    std::printf("xnorcl %s on %s: own CLHPP kernel %s, binary convolution %s\n", xnorcl::version(),
                runtime.device_name().c_str(), own ? "ok" : "WRONG", conv ? "ok" : "WRONG");
    print_mapped_opencl_libraries();
    std::printf("%s\n", own && conv ? "PASS" : "FAIL");
    return own && conv ? 0 : 1;
  } catch (const cl::Error& e) {
    std::printf("FAIL: cl::Error %s: %s\n", e.what(), xnorcl::cl_error_name(e.err()).c_str());
  } catch (const xnorcl::Error& e) {
    std::printf("FAIL: xnorcl error: %s\n", e.what());
  }
  return 1;
}
