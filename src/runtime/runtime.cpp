// SPDX-License-Identifier: Apache-2.0
#include "xnorcl/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>

#include "core/file_io.hpp"
#include "runtime/cl_call.hpp"
#include "runtime/device_profile.hpp"
#include "runtime/embedded_kernels.hpp"
#include "runtime/knobs.hpp"
#include "runtime/launch_gate.hpp"
#include "runtime/opencl_loader.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl {
namespace {

using detail::cl_call;
using detail::RuntimeState;

// Set by the atexit handlers of watch_process_exit: a Runtime destroyed after one of them ran (a static one)
// must not query binaries any more (PoCL then compiles with an LLVM whose statics may be gone).
std::atomic<bool> process_exiting{false};
std::atomic<int> exit_handlers{0};
constexpr int kMaxExitHandlers = 4096;  // 32 bytes each in glibc's list

// Registers a handler that sets process_exiting; false once the process has registered kMaxExitHandlers.
// Called at every deferred store, not once per process: handlers run in the reverse order of their
// registration, interleaved with the destructors of statics, so one registered before a static holding a
// Runtime was constructed runs after that static's destructor, whose Runtime then compiled inside PoCL during
// exit and crashed in LLVM (a test's function-local map of Runtimes made after another Runtime's stores,
// PoCL's kernel cache cold: 4 processes in 6). A Runtime's deferred stores mostly come after its holder is
// constructed (programs built for layers and networks), and the handler of the last of them runs before the
// holder's destructor. The bound keeps a process that builds program after program from growing the exit
// list without end; a state that could not register stores nothing at its destruction.
bool watch_process_exit() {
  if (exit_handlers.load() >= kMaxExitHandlers || exit_handlers.fetch_add(1) >= kMaxExitHandlers)
    return false;
  return std::atexit([] { process_exiting.store(true); }) == 0;
}

const char* const kDeviceForms =
    "\"P:D\" (platform and device indices) or a case-insensitive substring of a device's \"<platform> / "
    "<device>\"";
const char* const kVariants = "auto, local or global";

Variant parse_variant(const std::string& text, const char* source) {
  return detail::parse_choice<Variant>(
      text, source, {{"auto", Variant::Auto}, {"local", Variant::Local}, {"global", Variant::Global}});
}

// A device request names something: not empty, not blank-padded (a blank would match every device), and
// P:D indices within range.
void check_device_request(const std::string& r, const char* source) {
  const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  if (r.empty() || blank(r.front()) || blank(r.back())) detail::refuse_setting(source, r, kDeviceForms);
  detail::parse_device_indices(r, source);  // indices out of range are refused here, naming the source
}

// The options the caller set win; unset fields come from the environment. Every value, from either, is
// checked here, before any device is touched.
RuntimeOptions with_environment(RuntimeOptions o) {
  if (o.device) {
    check_device_request(*o.device, "RuntimeOptions::device");
  } else {
    o.device = detail::knob_text("XNORCL_DEVICE", kDeviceForms);
    if (o.device) check_device_request(*o.device, "XNORCL_DEVICE");
  }
  if (o.variant) {
    const auto v = static_cast<int>(*o.variant);
    if (*o.variant != Variant::Auto && *o.variant != Variant::Local && *o.variant != Variant::Global) {
      throw InvalidArgument("RuntimeOptions::variant = " + std::to_string(v) +
                            " is not a Variant; use Variant::Auto, Variant::Local or Variant::Global");
    }
  } else if (auto v = detail::knob_text("XNORCL_VARIANT", kVariants)) {
    o.variant = parse_variant(*v, "XNORCL_VARIANT");
  }
  if (o.cache_dir && o.cache_dir->empty()) {
    throw InvalidArgument("RuntimeOptions::cache_dir is empty; give a directory, or \"off\" for no cache");
  }
  if (!o.cache_dir) o.cache_dir = detail::knob_text("XNORCL_CACHE_DIR", "a directory, or off for no cache");
  const std::uint64_t max_size = std::numeric_limits<std::size_t>::max();
  if (o.max_work_group_size && *o.max_work_group_size == 0) {
    throw InvalidArgument(
        "RuntimeOptions::max_work_group_size = 0; it takes a positive number of work-items");
  }
  if (!o.max_work_group_size) {
    if (auto v = detail::knob_text("XNORCL_MAX_WORK_GROUP_SIZE", "a positive number of work-items")) {
      o.max_work_group_size =
          static_cast<std::size_t>(detail::parse_positive(*v, "XNORCL_MAX_WORK_GROUP_SIZE", max_size));
    }
  }
  if (!o.word_bits) {
    if (auto v = detail::knob_text("XNORCL_WORD_BITS", "32 or 64"))
      o.word_bits = detail::parse_choice<int>(*v, "XNORCL_WORD_BITS", {{"32", 32}, {"64", 64}});
  }
  if (!o.native_popcount) {
    if (auto v = detail::knob_text("XNORCL_NATIVE_POPCOUNT", "on or off"))
      o.native_popcount =
          detail::parse_choice<bool>(*v, "XNORCL_NATIVE_POPCOUNT", {{"on", true}, {"off", false}});
  }
  if (!o.tuning) {
    if (auto v = detail::knob_text("XNORCL_TUNING", "use, tune or ignore"))
      o.tuning = detail::parse_choice<TuningMode>(
          *v, "XNORCL_TUNING",
          {{"use", TuningMode::Use}, {"tune", TuningMode::TuneOnFirstUse}, {"ignore", TuningMode::Ignore}});
  }
  if (o.tuning && *o.tuning != TuningMode::Use && *o.tuning != TuningMode::TuneOnFirstUse &&
      *o.tuning != TuningMode::Ignore) {
    throw InvalidArgument("RuntimeOptions::tuning = " + std::to_string(static_cast<int>(*o.tuning)) +
                          " is not a TuningMode; use Use, TuneOnFirstUse or Ignore");
  }
  if (o.tuning_file) {
    if (o.tuning_file->empty())
      throw InvalidArgument("RuntimeOptions::tuning_file is empty; give a file path, or leave it unset");
    detail::check_path(*o.tuning_file);
  } else {
    o.tuning_file = detail::knob_text("XNORCL_TUNING_FILE", "a file path");
    if (o.tuning_file) detail::check_path(*o.tuning_file);
  }
  if (o.word_bits && *o.word_bits != 32 && *o.word_bits != 64) {
    throw InvalidArgument("RuntimeOptions::word_bits = " + std::to_string(*o.word_bits) +
                          " is not valid; it takes 32 or 64");
  }
  return o;
}

struct FoundDevice {
  cl::Device device;
  detail::DeviceProfile profile;
};

std::vector<FoundDevice> all_devices() {
  std::vector<cl::Platform> platforms;
  cl_int err = CL_SUCCESS;
  try {
    err = cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    err = e.err();
  }
  if (err != CL_SUCCESS || platforms.empty()) {
    // Built with XNORCL_DLOPEN_OPENCL, the loader says which libraries it tried; otherwise this is empty.
    const std::string loader = detail::opencl_loader_report();
    throw DeviceNotFound(
        "no OpenCL platform found (clGetPlatformIDs: " + cl_error_name(err) +
        "). Install an OpenCL driver: on Debian or Ubuntu `apt-get install pocl-opencl-icd` runs OpenCL on "
        "the "
        "CPU; on a GPU install its vendor's driver. `clinfo -l` lists what the ICD loader finds." +
        (loader.empty() ? "" : "\n" + loader));
  }
  std::vector<FoundDevice> found;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    std::vector<cl::Device> devices;
    try {
      platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;  // a platform with no devices (CL_DEVICE_NOT_FOUND) is not an error
    }
    for (std::size_t d = 0; d < devices.size(); ++d) {
      found.push_back(
          {devices[d], detail::profile_device(devices[d], static_cast<int>(p), static_cast<int>(d))});
    }
  }
  if (found.empty()) {
    throw DeviceNotFound(
        "OpenCL platforms exist but none has a device. Install a driver, e.g. "
        "`apt-get install pocl-opencl-icd` for the CPU; `clinfo -l` lists what is found.");
  }
  return found;
}

std::string listing(const std::vector<FoundDevice>& devices) {
  std::ostringstream out;
  for (const auto& d : devices) {
    out << "\n  " << d.profile.info.platform_index << ":" << d.profile.info.device_index << "  "
        << d.profile.info.label() << " (" << d.profile.info.type << ")";
  }
  return out.str();
}

const FoundDevice& select_device(const std::vector<FoundDevice>& devices,
                                 const std::optional<std::string>& request) {
  if (request) {
    const std::string& r = *request;
    if (const auto indices = detail::parse_device_indices(r, "the device request")) {
      const auto [p, d] = *indices;
      for (const auto& f : devices) {
        if (f.profile.info.platform_index == p && f.profile.info.device_index == d) return f;
      }
      throw DeviceNotFound("device '" + r +
                           "' (platform:device) does not exist; available:" + listing(devices));
    }
    for (const auto& f : devices) {
      if (detail::lower_case(f.profile.info.label()).find(detail::lower_case(r)) != std::string::npos)
        return f;
    }
    throw DeviceNotFound("device '" + r +
                         "' matches no \"<platform> / <device>\" (case-insensitive substring) and " +
                         "is not P:D; available:" + listing(devices));
  }
  for (const char* type : {"GPU", "ACCELERATOR", "CPU"}) {
    for (const auto& f : devices) {
      if (f.profile.info.type == type) return f;
    }
  }
  return devices.front();
}

const detail::EmbeddedKernel& embedded(const std::string& file) {
  for (const auto& k : detail::embedded_kernels()) {
    if (file == k.file_name) return k;
  }
  throw Error("kernel source " + file + " is not embedded in the library");
}

void log(const RuntimeState& s, const std::string& message) {
  if (s.options.log) s.options.log(message);
}

struct BuiltProgram {
  cl::Program program;
  std::string cache_key;  // empty when the cache is off
  bool from_cache = false;
};

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// A cached binary still goes through clBuildProgram (drivers finish or verify it there) and must hold every
// kernel the runtime will create from it (a binary of another program builds fine); any failure just means
// the source is built instead, and stored over the entry.
std::optional<cl::Program> program_from_cache(const RuntimeState& s, const std::string& key,
                                              const std::string& options,
                                              const std::vector<const char*>& kernels) {
  auto binary = s.cache.load(key);
  if (!binary) return std::nullopt;
  cl_device_id device = s.device();
  const unsigned char* image = binary->data();
  std::size_t size = binary->size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program raw = clCreateProgramWithBinary(s.context(), 1, &device, &size, &image, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    log(s, "cached binary refused by clCreateProgramWithBinary (" +
               cl_error_name(err != CL_SUCCESS ? err : status) + "); building from source");
    if (raw) clReleaseProgram(raw);
    return std::nullopt;
  }
  cl::Program program(raw);  // takes ownership
  err = clBuildProgram(raw, 1, &device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    log(s, "cached binary refused by clBuildProgram (" + cl_error_name(err) + "); building from source");
    return std::nullopt;
  }
  std::string names;
  if (program.getInfo(CL_PROGRAM_KERNEL_NAMES, &names) != CL_SUCCESS) names.clear();
  names = ";" + names + ";";
  for (const char* kernel : kernels) {
    if (names.find(";" + std::string(kernel) + ";") == std::string::npos) {
      log(s, std::string("cached binary lacks the kernel ") + kernel + "; building from source");
      return std::nullopt;
    }
  }
  return program;
}

// Logged once per Runtime, before its first compilation from source, so that a slow first start says why.
void announce_compilation(const RuntimeState& s) {
  if (s.compile_announced) return;
  s.compile_announced = true;
  const std::string why = s.cache.enabled()
                              ? "not in the program cache (" + s.cache.directory() +
                                    ") for this device, driver and xnorcl version yet; later starts load them"
                              : "the program cache is off, so every start compiles them";
  log(s, "compiling the OpenCL kernels for " + s.profile.info.label() + ": " + why);
}

BuiltProgram build_program(const RuntimeState& s, const std::string& file, const std::string& base_options,
                           const std::vector<const char*>& kernels) {
  const std::string options = base_options + s.profile.extra_build_options;
  const detail::EmbeddedKernel& k = embedded(file);
  const std::string source(k.source, k.size);
  const auto start = std::chrono::steady_clock::now();
  BuiltProgram built;
  if (s.cache.enabled()) {
    built.cache_key = detail::ProgramCache::key_text(source, options, s.device);
    if (auto cached = program_from_cache(s, built.cache_key, options, kernels)) {
      built.program = *cached;
      built.from_cache = true;
      log(s, "loaded " + file + " " + options + " from the cache in " + std::to_string(elapsed_ms(start)) +
                 " ms");
      return built;
    }
  }
  announce_compilation(s);
  built.program = cl_call([&] { return cl::Program(s.context, source); }, "creating the program of " + file);
  try {
    built.program.build(std::vector<cl::Device>{s.device}, options.c_str());
  } catch (const cl::Error& e) {
    std::string build_log;
    try {
      build_log = built.program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(s.device);
    } catch (const cl::Error&) {
      build_log = "(the driver gave no build log)";
    }
    throw BuildError("building " + file + " with '" + options + "' for " + s.profile.info.label() +
                         " failed: " + cl_error_name(e.err()),
                     build_log);
  }
  log(s, "built " + file + " " + options + " from source in " + std::to_string(elapsed_ms(start)) + " ms");
  return built;
}

// The program's binary as the driver returns it now, or nothing (logged).
std::optional<std::vector<unsigned char>> program_binary(const RuntimeState& s, cl_program program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
      size == 0) {
    log(s, "the driver returned no program binary; nothing cached");
    return std::nullopt;
  }
  std::vector<unsigned char> binary(size);
  unsigned char* image = binary.data();
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof image, &image, nullptr) != CL_SUCCESS) {
    log(s, "clGetProgramInfo(CL_PROGRAM_BINARIES) failed; nothing cached");
    return std::nullopt;
  }
  return binary;
}

// Binaries are read only after the program's kernels exist: some drivers (Mali) compile lazily; others
// add code at first launch and are stored later (RuntimeState::deferred_stores).
void store_in_cache(const RuntimeState& s, const BuiltProgram& built) {
  if (built.cache_key.empty() || built.from_cache) return;
  if (s.profile.binary_grows_at_first_launch) {
    const std::lock_guard<std::mutex> lock(s.deferred_mutex);  // tuned programs are built after create()
    s.watches_exit = s.watches_exit && watch_process_exit();
    if (s.deferred_stores.empty()) detail::deferred_stores_pending(+1);
    s.deferred_stores.push_back({built.program, built.cache_key});
    return;
  }
  if (const auto binary = program_binary(s, built.program())) s.cache.store(built.cache_key, *binary);
}

// Whether every named kernel of the program accepts work-groups of `size` work-items on this device, within
// its local memory as the compiler counts it (Oclgrind counted a tuned GEMM's tiles twice: 34 KiB where the
// tiles are 17 KiB, and refused the launch).
bool kernels_accept(const RuntimeState& s, const cl::Program& program, const std::vector<const char*>& names,
                    std::size_t size) {
  for (const char* name : names) {
    cl::Kernel kernel(program, name);
    if (kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(s.device) < size) return false;
    if (kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(s.device) > s.profile.info.local_mem_size)
      return false;
  }
  return true;
}

// Builds the largest work-group configuration of a one-dimensional kernel file that fits every limit.
void build_linear(RuntimeState& s, const std::string& file, const std::vector<const char*>& kernels,
                  int word_bits, cl::Program& program, std::size_t& work_group) {
  for (std::size_t size : detail::linear_work_group_sizes()) {
    if (size > s.work_group_cap) continue;
    const BuiltProgram candidate =
        build_program(s, file, detail::linear_build_options(size, word_bits), kernels);
    if (kernels_accept(s, candidate.program, kernels, size)) {
      store_in_cache(s, candidate);
      program = candidate.program;
      work_group = size;
      return;
    }
    log(s, file + ": a kernel refuses work-groups of " + std::to_string(size) + "; trying smaller");
  }
  throw Error("no work-group size of " + file + " fits the limit of " + std::to_string(s.work_group_cap) +
              " work-items on " + s.profile.info.label());
}

void build_gemm(RuntimeState& s) {
  for (detail::GemmConfig c : detail::gemm_configs(s.variant, s.profile)) {
    if (s.options.word_bits) c.word_bits = *s.options.word_bits;  // test and tuning hook
    if (c.work_group_size() > s.work_group_cap || c.local_bytes() > s.profile.info.local_mem_size) continue;
    const std::vector<const char*> kernels = {"xnor_gemm", "xnor_gemm_fused", "xnor_gemm_bits"};
    const BuiltProgram candidate = build_program(s, "xnor_gemm.cl", c.build_options(), kernels);
    if (kernels_accept(s, candidate.program, kernels, c.work_group_size())) {
      store_in_cache(s, candidate);
      s.xnor_gemm = candidate.program;
      s.gemm = c;
      return;
    }
    log(s, "xnor_gemm.cl: the kernel refuses work-groups of " + std::to_string(c.work_group_size()) +
               "; trying smaller");
  }
  throw Error("no " + to_string(s.variant) + " configuration of xnor_gemm.cl fits the work-group limit of " +
              std::to_string(s.work_group_cap) + " work-items on " + s.profile.info.label());
}

// The network layers' programs (device_profile's network_programs() table): for each, the largest
// work-group size that fits every limit, as build_linear does, with the table's build options.
void build_network_programs(RuntimeState& s) {
  for (const detail::NetworkProgram& p : detail::network_programs()) {
    bool built = false;
    for (std::size_t size : detail::linear_work_group_sizes()) {
      if (size > s.work_group_cap || size > detail::network_work_group_ceiling(p, s.profile)) continue;
      const BuiltProgram candidate =
          build_program(s, p.file, detail::network_build_options(p, s.variant, size), p.kernels);
      if (kernels_accept(s, candidate.program, p.kernels, size)) {
        store_in_cache(s, candidate);
        s.linear_programs[p.file] = {candidate.program, size};
        built = true;
        break;
      }
      log(s, std::string(p.file) + ": a kernel refuses work-groups of " + std::to_string(size) +
                 "; trying smaller");
    }
    if (!built) {
      throw Error(std::string("no work-group size of ") + p.file + " fits the limit of " +
                  std::to_string(s.work_group_cap) + " work-items on " + s.profile.info.label());
    }
  }
}

std::shared_ptr<RuntimeState> make_state(const cl::Context& context, const cl::Device& device,
                                         const cl::CommandQueue& queue, detail::DeviceProfile profile,
                                         const RuntimeOptions& options, bool variant_from_caller,
                                         bool native_popcount_from_caller) {
  auto s = std::make_shared<RuntimeState>();
  s->context = context;
  s->device = device;
  s->queue = queue;
  s->profile = std::move(profile);
  s->options = options;
  const detail::VariantChoice choice =
      detail::choose_variant(options.variant.value_or(Variant::Auto), s->profile);
  s->variant = choice.variant;
  s->variant_reason = choice.reason;
  if (options.variant && *options.variant != Variant::Auto) {
    s->variant_reason = "forced " + to_string(choice.variant) + " by " +
                        (variant_from_caller ? "RuntimeOptions::variant" : "XNORCL_VARIANT");
  }
  if (options.native_popcount.value_or(false) && !s->profile.info.native_popcount) {
    throw InvalidArgument(
        std::string(native_popcount_from_caller ? "RuntimeOptions::native_popcount = true"
                                                : "XNORCL_NATIVE_POPCOUNT=on") +
        " asks for the vector popcount instruction, but " + s->profile.info.label() +
        " has none that xnorcl can use: it spells out AVX-512 VPOPCNTDQ only for a PoCL CPU device on an "
        "x86-64 processor with AVX-512 F, VL and VPOPCNTDQ whose PoCL compiles for an AVX-512 CPU without "
        "that instruction (CL_DEVICE_VERSION here: '" +
        s->profile.info.device_version + "'); leave it unset to use it wherever it is found");
  }
  s->profile.native_popcount = s->profile.info.native_popcount && options.native_popcount.value_or(true);
  if (s->profile.native_popcount) s->profile.extra_build_options += " -DNATIVE_POPCOUNT=1";
  s->profiling = (queue.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE) != 0;
  const std::string cache_dir = options.cache_dir.value_or(detail::default_cache_directory());
  s->cache = detail::ProgramCache(cache_dir == "off" ? "" : cache_dir, options.log);
  s->work_group_cap = s->profile.info.max_work_group_size;
  if (options.max_work_group_size)
    s->work_group_cap = std::min(s->work_group_cap, *options.max_work_group_size);
  build_network_programs(*s);  // the network layers' programs (threshold_pack, binary_maxpool, binary_fc)
  // Every program of the variant in use is built now, once per Runtime, never per layer.
  // The GEMM first: its configuration fixes the word size the packing program is built for.
  build_gemm(*s);
  build_linear(
      *s, "im2col_pack.cl",
      {"im2col_pack_f32", "im2col_pack_u8", "row_pack_f32", "row_pack_u8", "im2col_pack_rows",
       "channel_pack_f32", "channel_pack_f32_native_compare", "channel_pack_u8", "im2col_pack_words",
       "channel_pack_pixel_f32", "channel_pack_pixel_u8", "im2col_pack_word", "im2col_pack_units",
       "channel_pack_patches_f32", "channel_pack_patches_f32_native_compare", "channel_pack_patches_u8"},
      s->gemm.word_bits, s->im2col_pack, s->pack_work_group);
  s->pack_in_runs = detail::packs_in_vector_runs(s->profile);
  s->floats_compare_exactly = detail::compares_floats_exactly(s->profile);
  s->tuning_mode = options.tuning.value_or(TuningMode::Use);
  detail::load_tuning(*s);
  return s;
}

// A moved-from Runtime holds no state: using it is the caller's mistake, reported, not a null dereference.
const RuntimeState& held(const std::shared_ptr<RuntimeState>& state) {
  if (!state) throw Error("this Runtime was moved from and holds no device");
  return *state;
}

}  // namespace

namespace detail {

const RuntimeState::LinearProgram& RuntimeState::linear_program(const std::string& file) const {
  const auto it = linear_programs.find(file);
  if (it == linear_programs.end()) throw Error("the runtime has built no program from " + file);
  return it->second;
}

std::optional<RuntimeState::LinearProgram> RuntimeState::program_variant(
    const std::string& file, const std::string& options, const std::vector<const char*>& kernels,
    std::size_t work_group) const {
  const std::lock_guard<std::mutex> lock(program_variants_mutex_);
  const std::string key = file + " " + options + " " + std::to_string(work_group);
  if (const auto it = program_variants_.find(key); it != program_variants_.end()) return it->second;
  std::optional<LinearProgram> built;
  if (work_group <= work_group_cap) {
    const BuiltProgram candidate = build_program(*this, file, options, kernels);
    if (kernels_accept(*this, candidate.program, kernels, work_group)) {
      store_in_cache(*this, candidate);
      built = LinearProgram{candidate.program, work_group};
    }
  }
  program_variants_[key] = built;
  return built;
}

// With no launch starting (the gate) and none of this Runtime's in flight (the queue finished): PoCL must not
// serialise a program while its kernels run. Other threads' launches wait here once, for the first run only.
void RuntimeState::store_deferred() const noexcept {
  std::vector<DeferredStore> stores;
  try {
    const auto gate = store_gate();
    const std::lock_guard<std::mutex> lock(deferred_mutex);
    stores.swap(deferred_stores);
    if (stores.empty()) return;
    queue.finish();
    for (const DeferredStore& d : stores) {
      if (const auto binary = program_binary(*this, d.program())) cache.store(d.key, *binary);
    }
  } catch (...) {
    // The cache is an optimisation: a failure here must not fail a finished run or escape a destructor.
  }
  if (!stores.empty()) deferred_stores_pending(-1);
}

RuntimeState::~RuntimeState() {
  if (deferred_stores.empty()) return;
  if (process_exiting.load() || !watches_exit) {
    deferred_stores_pending(-1);
    return;
  }
  store_deferred();
}

}  // namespace detail

std::vector<DeviceInfo> list_devices() {
  return cl_call([] {
    std::vector<DeviceInfo> infos;
    for (const auto& f : all_devices()) infos.push_back(f.profile.info);
    return infos;
  });
}

Runtime Runtime::create() {
  return create(RuntimeOptions{});
}

Runtime Runtime::create(const RuntimeOptions& requested) {
  return cl_call([&] {
    const RuntimeOptions options = with_environment(requested);
    const auto devices = all_devices();
    const FoundDevice& chosen = select_device(devices, options.device);
    cl::Context context(chosen.device);
    cl::CommandQueue queue(context, chosen.device, CL_QUEUE_PROFILING_ENABLE);
    return Runtime(make_state(context, chosen.device, queue, chosen.profile, options,
                              requested.variant.has_value(), requested.native_popcount.has_value()));
  });
}

Runtime Runtime::create(const cl::Context& context, const cl::Device& device, const cl::CommandQueue& queue,
                        const RuntimeOptions& requested) {
  return cl_call([&] {
    const RuntimeOptions options = with_environment(requested);
    return Runtime(make_state(context, device, queue, detail::profile_device(device), options,
                              requested.variant.has_value(), requested.native_popcount.has_value()));
  });
}

std::string Runtime::device_name() const {
  return held(state_).profile.info.label();
}
Variant Runtime::variant() const {
  return held(state_).variant;
}
std::string Runtime::variant_reason() const {
  return held(state_).variant_reason;
}
cl::Context Runtime::context() const {
  return held(state_).context;
}
cl::CommandQueue Runtime::queue() const {
  return held(state_).queue;
}
cl::Device Runtime::device() const {
  return held(state_).device;
}
const DeviceInfo& Runtime::device_info() const {
  return held(state_).profile.info;
}
bool Runtime::native_popcount() const {
  return held(state_).profile.native_popcount;
}
bool Runtime::profiling_enabled() const {
  return held(state_).profiling;
}

}  // namespace xnorcl
