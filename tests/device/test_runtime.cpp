// SPDX-License-Identifier: Apache-2.0
// Runtime::create: device selection, the variant rule, options against the environment, apps' own OpenCL
// objects, and the shared-handle promise of include/xnorcl/runtime.hpp (its thread-safety promise is
// tested in test_threads.cpp).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "device_support.hpp"

namespace {

using xnorcl::Runtime;
using xnorcl::RuntimeOptions;
using xnorcl::Variant;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Sets (or, with nullptr, unsets) an environment variable for one scope, so that a test sees exactly the
// environment it states whatever the job exported, and leaves the process as it found it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) {
    if (value) {
      setenv(name_.c_str(), value, 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  std::string name_;
  std::optional<std::string> old_;
};

// The first device test call: fails the test without a device (or skips it in a job that declares none).
const Runtime& require_device() {
  return xnorcl::test::runtime_for(Variant::Auto);
}

bool is_pocl(const xnorcl::DeviceInfo& info) {
  return contains(lower(info.device_name), "pthread") || info.platform_name == "Portable Computing Language";
}

// Checks that the message of DeviceNotFound lists every device there is.
void require_lists_devices(const std::string& message) {
  INFO("message: " << message);
  for (const xnorcl::DeviceInfo& info : xnorcl::list_devices()) {
    CHECK(contains(message, info.device_name));
  }
}

// A small random layer with pad taps.
struct Layer {
  xnorcl::Shape x_shape;
  xnorcl::Shape f_shape;
  xnorcl::BinaryConvolution::Attributes attributes;
  std::vector<float> x;
  xnorcl::Filter filter;

  std::vector<float> reference() const {
    return xnorcl::reference_binary_convolution(x.data(), x_shape, filter, attributes);
  }
};

Layer make_layer(std::uint32_t seed) {
  constexpr std::int64_t channels = 8;
  const xnorcl::Shape x_shape{1, channels, 9, 7};
  const xnorcl::Shape f_shape{4, channels, 3, 3};
  xnorcl::BinaryConvolution::Attributes attributes;
  attributes.pads_begin = {1, 1};
  attributes.pads_end = {1, 1};
  attributes.pad_value = 0;
  std::mt19937 rng(seed);
  std::vector<float> x(static_cast<std::size_t>(channels * 9 * 7));
  for (float& value : x) value = static_cast<float>(rng() & 1u);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>((4 * channels * 3 * 3 + 7) / 8));
  for (std::uint8_t& byte : bytes) byte = static_cast<std::uint8_t>(rng());
  return {x_shape, f_shape, attributes, std::move(x),
          xnorcl::Filter::from_packed(bytes.data(), bytes.size(), f_shape, xnorcl::BitOrder::MsbFirst)};
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs a small layer on `runtime` and compares it bitwise with the reference. Also checks that the plan uses
// the runtime's variant and, where the queue profiles, that the packing and GEMM kernels ran.
void require_layer_matches_reference(const Runtime& runtime, std::uint32_t seed) {
  const Layer layer = make_layer(seed);
  xnorcl::BinaryConvolution conv(runtime, layer.attributes, layer.x_shape, layer.filter);
  REQUIRE(conv.plan().variant == runtime.variant());
  REQUIRE(bitwise_equal(conv.run(layer.x.data()), layer.reference()));
  if (runtime.profiling_enabled()) {
    const std::vector<xnorcl::StageTime> stages = conv.last_stage_times();
    auto ran = [&](const char* part) {
      return std::any_of(stages.begin(), stages.end(),
                         [&](const xnorcl::StageTime& s) { return contains(s.kernel, part); });
    };
    CHECK(ran("pack"));
    CHECK(ran("gemm"));
  }
}

}  // namespace

TEST_CASE("create() names the device and explains its variant", "[runtime]") {
  require_device();
  ScopedEnv no_device("XNORCL_DEVICE", nullptr);
  ScopedEnv no_variant("XNORCL_VARIANT", nullptr);
  const Runtime runtime = Runtime::create();
  const xnorcl::DeviceInfo& info = runtime.device_info();
  INFO(runtime.device_name() << ": " << runtime.variant_reason());
  CHECK(!info.device_name.empty());
  CHECK(runtime.device_name() == info.label());
  CHECK(contains(runtime.device_name(), info.device_name));
  CHECK(runtime.variant() != Variant::Auto);
  CHECK(runtime.variant() == info.auto_variant);
  CHECK(!runtime.variant_reason().empty());
  if (is_pocl(info)) {
    // PoCL's "local" memory is ordinary memory (CL_GLOBAL): staging tiles there only adds copies.
    CHECK(runtime.variant() == Variant::Global);
    CHECK(contains(runtime.variant_reason(), "CL_GLOBAL"));
  }
}

TEST_CASE("RuntimeOptions::variant Local forces Local", "[runtime]") {
  require_device();
  ScopedEnv no_variant("XNORCL_VARIANT", nullptr);
  RuntimeOptions options;
  options.variant = Variant::Local;
  const Runtime runtime = Runtime::create(options);
  CHECK(runtime.variant() == Variant::Local);
  require_layer_matches_reference(runtime, 1);
}

TEST_CASE("XNORCL_VARIANT=local forces Local", "[runtime]") {
  require_device();
  ScopedEnv variant("XNORCL_VARIANT", "local");
  CHECK(Runtime::create().variant() == Variant::Local);
}

TEST_CASE("RuntimeOptions beat the environment", "[runtime]") {
  require_device();
  {
    ScopedEnv variant("XNORCL_VARIANT", "global");
    RuntimeOptions options;
    options.variant = Variant::Local;
    CHECK(Runtime::create(options).variant() == Variant::Local);
  }
  {
    ScopedEnv device("XNORCL_DEVICE", "no such device anywhere");
    RuntimeOptions options;
    options.device = "0:0";
    CHECK(Runtime::create(options).device_info().platform_index == 0);
  }
}

TEST_CASE("XNORCL_DEVICE selects by platform and device index", "[runtime]") {
  require_device();
  ScopedEnv device("XNORCL_DEVICE", "0:0");
  const Runtime runtime = Runtime::create();
  CHECK(runtime.device_info().platform_index == 0);
  CHECK(runtime.device_info().device_index == 0);
  CHECK(runtime.device_name() == xnorcl::list_devices().front().label());
}

TEST_CASE("XNORCL_DEVICE selects by a case-insensitive substring of the label", "[runtime]") {
  const Runtime& any = require_device();
  // The device name in another case: upper case where the driver wrote lower, and the other way round.
  std::string name = any.device_info().device_name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::isupper(c) ? std::tolower(c) : std::toupper(c); });
  ScopedEnv device("XNORCL_DEVICE", name.c_str());
  const Runtime runtime = Runtime::create();
  CHECK(contains(lower(runtime.device_name()), lower(name)));
}

TEST_CASE("an XNORCL_DEVICE that matches nothing throws DeviceNotFound listing the devices", "[runtime]") {
  require_device();
  for (const char* value : {"no such device anywhere", "9:9"}) {
    INFO("XNORCL_DEVICE=" << value);
    ScopedEnv device("XNORCL_DEVICE", value);
    try {
      Runtime::create();
      FAIL("Runtime::create() accepted XNORCL_DEVICE=" << value);
    } catch (const xnorcl::DeviceNotFound& e) {
      require_lists_devices(e.what());
    }
  }
}

TEST_CASE("create(context, device, queue) uses the app's own OpenCL objects", "[runtime]") {
  const xnorcl::DeviceInfo& info = require_device().device_info();
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  std::vector<cl::Device> devices;
  platforms.at(static_cast<std::size_t>(info.platform_index)).getDevices(CL_DEVICE_TYPE_ALL, &devices);
  const cl::Device device = devices.at(static_cast<std::size_t>(info.device_index));
  const cl::Context context(device);

  SECTION("with a profiling queue") {
    const cl::CommandQueue queue(context, device, CL_QUEUE_PROFILING_ENABLE);
    const Runtime runtime = Runtime::create(context, device, queue);
    CHECK(runtime.context()() == context());
    CHECK(runtime.device()() == device());
    CHECK(runtime.queue()() == queue());
    CHECK(runtime.device_name() == info.label());
    CHECK(runtime.profiling_enabled());
    require_layer_matches_reference(runtime, 2);
  }
  SECTION("with a queue without profiling") {
    const cl::CommandQueue queue(context, device);
    const Runtime runtime = Runtime::create(context, device, queue);
    CHECK(runtime.queue()() == queue());
    CHECK(!runtime.profiling_enabled());
    require_layer_matches_reference(runtime, 3);
  }
}

TEST_CASE("copies of a Runtime share its device, queue and programs", "[runtime]") {
  const Runtime& runtime = require_device();
  const Runtime copy = runtime;
  CHECK(copy.state() == runtime.state());
  CHECK(copy.context()() == runtime.context()());
  CHECK(copy.queue()() == runtime.queue()());
  CHECK(copy.device()() == runtime.device()());
  CHECK(copy.variant() == runtime.variant());
}

TEST_CASE("a BinaryConvolution keeps its Runtime alive", "[runtime]") {
  require_device();
  const Layer layer = make_layer(4);
  std::optional<xnorcl::BinaryConvolution> conv;
  {
    const Runtime runtime = Runtime::create();
    conv.emplace(runtime, layer.attributes, layer.x_shape, layer.filter);
  }
  CHECK(bitwise_equal(conv->run(layer.x.data()), layer.reference()));
}

namespace {

void require_refused(const std::function<void()>& create, const std::vector<std::string>& parts) {
  try {
    create();
    FAIL("accepted");
  } catch (const xnorcl::InvalidArgument& e) {
    INFO(e.what());
    for (const auto& part : parts) CHECK(contains(e.what(), part));
  }
}

}  // namespace

TEST_CASE("settings are parsed strictly: empty, blank, signed, overflowing or unknown values are refused",
          "[runtime]") {
  require_device();
  const std::string huge = "18446744073709551616";  // 2^64
  const std::pair<const char*, std::vector<std::string>> cases[] = {
      {"XNORCL_MAX_WORK_GROUP_SIZE", {"-1", huge, "", " 64", "64 ", "0x40", "0"}},
      {"XNORCL_DEVICE", {"4294967296:0", "0:4294967296", "", " ", " 0:0"}},
      {"XNORCL_VARIANT", {"", "fast", "local "}},
      {"XNORCL_WORD_BITS", {"", "032", "64 "}},
      {"XNORCL_NATIVE_POPCOUNT", {"", "1", "yes", "on "}},
      {"XNORCL_CACHE_DIR", {""}},
  };
  for (const auto& [name, values] : cases) {
    for (const std::string& value : values) {
      INFO(name << "='" << value << "'");
      ScopedEnv env(name, value.c_str());
      require_refused([] { Runtime::create(); }, {name, "'" + value + "'", "it takes"});
    }
  }
  CHECK_NOTHROW(Runtime::create());  // the environment as it was: the defaults
}

TEST_CASE("XNORCL_NATIVE_POPCOUNT: off runs the portable code, on only where the device has the instruction",
          "[runtime]") {
  require_device();
  const bool has_it = [] {
    ScopedEnv unset("XNORCL_NATIVE_POPCOUNT", nullptr);
    const Runtime rt = Runtime::create();
    CHECK(rt.native_popcount() == rt.device_info().native_popcount);  // the default: wherever it is found
    return rt.device_info().native_popcount;
  }();
  {
    ScopedEnv env("XNORCL_NATIVE_POPCOUNT", "off");
    CHECK_FALSE(Runtime::create().native_popcount());
  }
  ScopedEnv env("XNORCL_NATIVE_POPCOUNT", "ON");
  RuntimeOptions asked;
  asked.native_popcount = true;
  if (has_it) {
    CHECK(Runtime::create().native_popcount());
    CHECK(Runtime::create(asked).native_popcount());
  } else {
    require_refused([] { Runtime::create(); }, {"XNORCL_NATIVE_POPCOUNT=on", "VPOPCNTDQ"});
    require_refused([&] { Runtime::create(asked); }, {"RuntimeOptions::native_popcount = true", "VPOPCNTDQ"});
  }
}

TEST_CASE("RuntimeOptions out of their domain are refused, naming what is valid", "[runtime]") {
  require_device();
  RuntimeOptions empty_device;
  empty_device.device = "";
  require_refused([&] { Runtime::create(empty_device); }, {"RuntimeOptions::device", "P:D"});
  RuntimeOptions blank_device;
  blank_device.device = " ";
  require_refused([&] { Runtime::create(blank_device); }, {"RuntimeOptions::device", "P:D"});
  RuntimeOptions bad_variant;
  bad_variant.variant = static_cast<xnorcl::Variant>(42);
  require_refused([&] { Runtime::create(bad_variant); }, {"RuntimeOptions::variant = 42", "Variant::Global"});
  RuntimeOptions no_cap;
  no_cap.max_work_group_size = 0;
  require_refused([&] { Runtime::create(no_cap); }, {"max_work_group_size = 0"});
}
