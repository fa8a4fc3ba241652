// SPDX-License-Identifier: Apache-2.0
// The device, its queue and the compiled kernel programs.
//
// Thread safety: one Runtime (and its copies) may be used from many threads at once; programs are built
// during create() and only read afterwards. One BinaryConvolution may be used from one thread at a time;
// every BinaryConvolution owns its cl::Kernel objects, so different ones may run concurrently on one Runtime.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xnorcl/opencl.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

// What a Runtime does with tuned kernel configurations (docs/tuning.md).
enum class TuningMode {
  Use,             // steps whose shape class the tuning file holds run its configuration; others the default
  TuneOnFirstUse,  // as Use, and a Model with steps the file lacks tunes them (fast search) when it is built
  Ignore,          // every step runs the default rule; no tuning file is read
};

struct RuntimeOptions {
  // "P:D" (platform and device indices) or a case-insensitive substring of "<platform> / <device>".
  // Unset: XNORCL_DEVICE, else the first GPU, else accelerator, else CPU.
  std::optional<std::string> device;
  // Unset: XNORCL_VARIANT (auto|local|global), else Auto.
  std::optional<Variant> variant;
  // Program-binary cache directory; "off" disables it. Unset: XNORCL_CACHE_DIR, else the default.
  std::optional<std::string> cache_dir;
  // Upper bound on every launch's work-group size (below the device's and the kernel's own limits).
  // Unset: XNORCL_MAX_WORK_GROUP_SIZE, else no extra cap.
  std::optional<std::size_t> max_work_group_size;
  // Test and tuning hook: the packed word size, 32 (uint, the GPU default) or 64 (ulong, the PoCL default),
  // overriding the per-architecture choice of src/runtime/device_profile.cpp, so a CPU device can exercise
  // the GPUs' 32-bit path. Results are bitwise equal for both. Unset: XNORCL_WORD_BITS, else the
  // architecture's choice.
  std::optional<int> word_bits;
  // Whether the kernels count bits with the CPU's vector popcount instruction where the device has one
  // that its compiler does not use by itself (DeviceInfo::native_popcount). Results are bitwise equal
  // either way; false is the test hook for the portable code and an escape hatch; true on a device without
  // such an instruction is refused. Unset: XNORCL_NATIVE_POPCOUNT (on|off), else wherever the device has it.
  std::optional<bool> native_popcount;
  // Tuned configurations: Use (the default), TuneOnFirstUse or Ignore. Unset: XNORCL_TUNING
  // (use|tune|ignore), else Use.
  std::optional<TuningMode> tuning;
  // The tuning file to read and write. Unset: XNORCL_TUNING_FILE, else a file named after the device, driver
  // and library version in the program-cache directory (none when the cache is off). An app that ships a
  // file tuned on its target device copies it somewhere readable and names it here.
  std::optional<std::string> tuning_file;
  // Build messages (program builds, cache hits and misses); unset: silent. When create() compiles kernels
  // from source rather than loading them from the program cache, its first such message begins with
  // "compiling the OpenCL kernels" (apps may show that one: a first start takes seconds). Warnings (a
  // tuning file ignored) come here too, beginning with "warning: "; without a log they go to stderr.
  std::function<void(const std::string&)> log;
};

// One OpenCL device as the runtime sees it (for listings and for `xnorcl-bench devices`).
struct DeviceInfo {
  int platform_index = 0;
  int device_index = 0;
  std::string platform_name;
  std::string device_name;
  std::string device_version;
  std::string driver_version;
  std::string type;  // "GPU", "CPU", "ACCELERATOR", ...
  bool local_mem_is_local = false;
  std::size_t local_mem_size = 0;
  std::size_t max_work_group_size = 0;
  std::size_t max_mem_alloc_size = 0;
  std::size_t global_mem_size = 0;
  unsigned compute_units = 0;
  Variant auto_variant = Variant::Global;  // what Variant::Auto picks there
  // A vector popcount instruction the kernels can spell out in assembly, because the device's compiler
  // leaves it unused: PoCL on an x86-64 CPU with AVX-512 VPOPCNTDQ (Ice Lake, Zen 4 and later), for which
  // PoCL's distribution builds compile as for CPUs without it (9 instructions per 4 words instead of 1).
  bool native_popcount = false;
  std::string auto_reason;
  std::string label() const { return platform_name + " / " + device_name; }
};

// Every device of every platform, in platform and device order. Throws DeviceNotFound with no platform.
std::vector<DeviceInfo> list_devices();

namespace detail {
struct RuntimeState;
}

class Runtime {
 public:
  static Runtime create();
  static Runtime create(const RuntimeOptions& options);
  // For apps that own their OpenCL objects. A queue created without CL_QUEUE_PROFILING_ENABLE works, but
  // then per-stage timings are not available.
  static Runtime create(const cl::Context& context, const cl::Device& device, const cl::CommandQueue& queue,
                        const RuntimeOptions& options = {});

  std::string device_name() const;  // "<platform> / <device>"
  Variant variant() const;          // Local or Global, never Auto
  std::string variant_reason() const;
  cl::Context context() const;
  cl::CommandQueue queue() const;
  cl::Device device() const;
  const DeviceInfo& device_info() const;
  // Whether this Runtime's kernels use DeviceInfo::native_popcount (RuntimeOptions::native_popcount).
  bool native_popcount() const;
  bool profiling_enabled() const;

  // Internal state shared by copies; not part of the stable API.
  const std::shared_ptr<detail::RuntimeState>& state() const noexcept { return state_; }

 private:
  explicit Runtime(std::shared_ptr<detail::RuntimeState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::RuntimeState> state_;
};

}  // namespace xnorcl
