// SPDX-License-Identifier: Apache-2.0
// xnorcl-demo: the smallest end-to-end program. Runs the README example's layer (X 1x3x224x224, F 64x3x5x5,
// pads 2/2, pad_value 0) on the OpenCL device, times it, and checks it bitwise against the host reference.
// Exit code 0 only when every device run equals the reference.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cli.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

// Median wall time in milliseconds of `repetitions` calls of f.
double median_ms(int repetitions, const std::function<void()>& f) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const auto stop = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const char* const kUsage =
    "usage: xnorcl-demo [-h | --help | --version]\n"
    "\n"
    "Runs one binary convolution (X 1x3x224x224, F 64x3x5x5, pads 2/2, pad_value 0) on the OpenCL device\n"
    "(XNORCL_DEVICE's, else the first GPU, accelerator or CPU), times it, and checks every run bitwise\n"
    "against the host reference. Exit status 0 when all of them are equal.\n";

int demo() {
  xnorcl::RuntimeOptions options;
  options.log = xnorcl_cli::compile_notice("xnorcl-demo");
  xnorcl::Runtime runtime = xnorcl::Runtime::create(options);
  std::printf("device:  %s\nvariant: %s (%s)\n", runtime.device_name().c_str(),
              xnorcl::to_string(runtime.variant()).c_str(), runtime.variant_reason().c_str());

  const xnorcl::Shape x_shape{1, 3, 224, 224};
  const xnorcl::Shape f_shape{64, 3, 5, 5};
  xnorcl::BinaryConvolution::Attributes attributes;
  attributes.pads_begin = {2, 2};
  attributes.pads_end = {2, 2};
  attributes.pad_value = 0;

  // Raw engine output rather than a distribution: the same data on every standard library.
  std::mt19937 rng(2024);
  std::vector<float> x(static_cast<std::size_t>(x_shape[0] * x_shape[1] * x_shape[2] * x_shape[3]));
  for (float& value : x) value = static_cast<float>(rng() & 1u);
  std::vector<std::uint8_t> filter_bytes(
      static_cast<std::size_t>(f_shape[0] * f_shape[1] * f_shape[2] * f_shape[3] + 7) / 8);
  for (std::uint8_t& byte : filter_bytes) byte = static_cast<std::uint8_t>(rng());
  const xnorcl::Filter filter = xnorcl::Filter::from_packed(filter_bytes.data(), filter_bytes.size(), f_shape,
                                                            xnorcl::BitOrder::MsbFirst);

  xnorcl::BinaryConvolution conv(runtime, attributes, x_shape, filter);
  std::printf("layer:   X %s, F %s, pads 2/2, pad_value 0 -> Y %s\n", xnorcl::to_string(x_shape).c_str(),
              xnorcl::to_string(f_shape).c_str(), xnorcl::to_string(conv.output_shape()).c_str());
  std::printf("plan:    %s\n", conv.plan().to_string().c_str());

  constexpr int kDeviceRepetitions = 7;
  constexpr int kReferenceRepetitions = 3;
  conv.run(x.data());  // warm-up: first-launch costs are not what we time
  std::vector<std::vector<float>> device_outputs;
  const double device_ms =
      median_ms(kDeviceRepetitions, [&] { device_outputs.push_back(conv.run(x.data())); });
  std::vector<float> reference;
  const double reference_ms = median_ms(kReferenceRepetitions, [&] {
    reference = xnorcl::reference_binary_convolution(x.data(), x_shape, filter, attributes);
  });
  std::printf("device (BinaryConvolution::run, host in and out): %.3f ms median of %d\n", device_ms,
              kDeviceRepetitions);
  std::printf("host reference:                                   %.3f ms median of %d\n", reference_ms,
              kReferenceRepetitions);

  // Every repetition is checked, not just the first: a later run must not differ.
  const bool pass = std::all_of(device_outputs.begin(), device_outputs.end(),
                                [&](const std::vector<float>& y) { return bitwise_equal(y, reference); });
  std::printf("%s: %d device runs %s the reference bitwise\n", pass ? "PASS" : "FAIL", kDeviceRepetitions,
              pass ? "equal" : "do not all equal");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string arg = argv[1];
    if (argc == 2 && (arg == "-h" || arg == "--help")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (argc == 2 && arg == "--version") {
      std::printf("%s\n", xnorcl_cli::version_line("xnorcl-demo").c_str());
      return 0;
    }
    const std::string problem = argc > 2                 ? "one option at most"
                                : arg.rfind('-', 0) == 0 ? "unknown option '" + arg + "'"
                                                         : "unexpected argument '" + arg + "'";
    std::fprintf(stderr, "xnorcl-demo: %s\nRun 'xnorcl-demo --help' for the options.\n", problem.c_str());
    return 2;
  }
  try {
    return demo();
  } catch (const xnorcl::Error& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
