// SPDX-License-Identifier: Apache-2.0
#include "runtime/device_profile.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define XNORCL_X86_CPUID 1
#endif

#include "runtime/tuning.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool contains(const std::string& haystack, const char* needle) {
  return lower(haystack).find(needle) != std::string::npos;
}

std::string device_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  return "OTHER";
}

// Local tiles must fit in this much on-chip memory; more would cut occupancy on the small GPUs we target.
constexpr std::size_t kLocalMemoryBudget = 32 * 1024;

// Whether this process's CPU runs VPOPCNTQ/VPOPCNTD on 128-, 256- and 512-bit registers (AVX512F,
// AVX512VL, AVX512_VPOPCNTDQ) and the operating system saves those registers (XCR0: SSE, AVX, opmask and
// both halves of the upper ZMM state).
bool host_has_vector_popcount() {
#ifdef XNORCL_X86_CPUID
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  if ((xcr0 & 0xE6u) != 0xE6u) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool avx512f = ebx & (1u << 16), avx512vl = ebx & (1u << 31), vpopcntdq = ecx & (1u << 14);
  return avx512f && avx512vl && vpopcntdq;
#else
  return false;
#endif
}

// PoCL's CPU devices run on this process's CPU ("pthread-<cpu>" and "basic-<cpu>" in PoCL 3, "cpu-..."
// later); its other drivers (remote, CUDA, Level Zero) do not.
bool runs_on_host_cpu(const DeviceProfile& p) {
  const std::string name = lower(p.info.device_name);
  return p.architecture == Architecture::PoclCpu && p.info.type == "CPU" &&
         (name.rfind("pthread", 0) == 0 || name.rfind("basic", 0) == 0 || name.rfind("cpu", 0) == 0);
}

// Whether PoCL compiles for an AVX-512 CPU without VPOPCNTDQ (its target CPU ends CL_DEVICE_VERSION's
// "HSTR: <driver>-<triple>-<cpu>"): only there does `popcount` miss the instruction while the 512-bit vectors
// the kernels' assembly names exist. A PoCL that targets a CPU with the instruction emits it itself; one that
// targets a CPU without AVX-512 could not compile the assembly.
bool targets_avx512_without_vector_popcount(const DeviceProfile& p) {
  const std::string version = lower(p.info.device_version);
  for (const char* cpu : {"skylake-avx512", "skx", "cascadelake", "cooperlake", "cannonlake", "knl"}) {
    const std::string suffix = std::string("-") + cpu;
    if (version.size() >= suffix.size() &&
        version.compare(version.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
}

}  // namespace

const char* to_string(Architecture a) {
  switch (a) {
    case Architecture::Mali:
      return "Arm Mali";
    case Architecture::Adreno:
      return "Qualcomm Adreno";
    case Architecture::Nvidia:
      return "NVIDIA";
    case Architecture::Amd:
      return "AMD";
    case Architecture::Intel:
      return "Intel";
    case Architecture::PoclCpu:
      return "PoCL CPU";
    case Architecture::Oclgrind:
      return "Oclgrind";
    case Architecture::Unknown:
      break;
  }
  return "unknown";
}

DeviceProfile profile_device(const cl::Device& device, int platform_index, int device_index) {
  DeviceProfile p;
  DeviceInfo& i = p.info;
  cl::Platform platform(device.getInfo<CL_DEVICE_PLATFORM>());
  i.platform_index = platform_index;
  i.device_index = device_index;
  i.platform_name = platform.getInfo<CL_PLATFORM_NAME>();
  i.device_name = device.getInfo<CL_DEVICE_NAME>();
  i.device_version = device.getInfo<CL_DEVICE_VERSION>();
  i.driver_version = device.getInfo<CL_DRIVER_VERSION>();
  i.type = device_type_name(device.getInfo<CL_DEVICE_TYPE>());
  i.local_mem_is_local = device.getInfo<CL_DEVICE_LOCAL_MEM_TYPE>() == CL_LOCAL;
  p.keeps_subnormals = (device.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_DENORM) != 0;
  p.native_float_vector_width = static_cast<int>(device.getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>());
  i.local_mem_size = static_cast<std::size_t>(device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>());
  i.max_work_group_size = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  i.max_mem_alloc_size = static_cast<std::size_t>(device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>());
  i.global_mem_size = static_cast<std::size_t>(device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>());
  i.compute_units = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();

  const std::string vendor = device.getInfo<CL_DEVICE_VENDOR>();
  const std::string all = i.platform_name + " " + vendor + " " + i.device_name;
  if (contains(all, "mali")) {
    p.architecture = Architecture::Mali;
  } else if (contains(all, "adreno") || contains(all, "qualcomm")) {
    p.architecture = Architecture::Adreno;
  } else if (contains(all, "oclgrind")) {
    p.architecture = Architecture::Oclgrind;
  } else if (contains(all, "portable computing language") || contains(all, "pocl")) {
    p.architecture = Architecture::PoclCpu;
  } else if (contains(all, "nvidia")) {
    p.architecture = Architecture::Nvidia;
  } else if (contains(all, "advanced micro devices") || contains(all, "amd")) {
    p.architecture = Architecture::Amd;
  } else if (contains(all, "intel")) {
    p.architecture = Architecture::Intel;
  }
  p.binary_grows_at_first_launch = p.architecture == Architecture::PoclCpu;
  // PoCL's clang prints its warnings on the process's stderr ("41 warnings generated."). On a CPU without
  // AVX-512 they are all -Wpsabi: a 16-lane vector argument "changes the ABI". That matters only when code
  // compiled for different CPU features calls across it; a program and PoCL's kernel library are compiled
  // for the same CPU, so the code is right and the lines only alarm users. PoCL refuses -Wno-psabi; -w
  // (OpenCL's "inhibit all warnings") is standard. CI compiles every kernel with clang -Werror instead.
  if (p.architecture == Architecture::PoclCpu) p.extra_build_options = " -w";
  // PoCL's distribution builds compile for a few CPU classes (their "avx512" one as skylake-avx512, which has
  // no vector popcount); its build options cannot name another target, so the kernels spell the instruction
  // out (-DNATIVE_POPCOUNT, cl_kernels/xnor_gemm.cl; Runtime adds it unless told not to).
  i.native_popcount =
      runs_on_host_cpu(p) && targets_avx512_without_vector_popcount(p) && host_has_vector_popcount();
  const VariantChoice choice = choose_variant(Variant::Auto, p);
  i.auto_variant = choice.variant;
  i.auto_reason = choice.reason;
  return p;
}

std::size_t GemmConfig::local_bytes() const {
  if (variant != Variant::Local) return 0;
  const std::size_t tiles = static_cast<std::size_t>(kt) * static_cast<std::size_t>(tile_m() + tile_n()) *
                            static_cast<std::size_t>(word_bytes());
  // xnor_gemm_fused, built from the same program, also assembles packed output words in a byte per value
  // of its tile where the tile covers whole words (FUSED_PACKS in cl_kernels/xnor_gemm.cl).
  const std::size_t flags =
      packs_words_in_local() ? static_cast<std::size_t>(tile_m()) * static_cast<std::size_t>(tile_n()) : 0;
  return tiles + flags;
}

std::string GemmConfig::build_options() const {
  return "-cl-std=CL1.2 -DLOCAL_VARIANT=" + std::to_string(variant == Variant::Local ? 1 : 0) +
         " -DWG=" + std::to_string(wg) + " -DTM=" + std::to_string(tm) + " -DTN=" + std::to_string(tn) +
         " -DKT=" + std::to_string(kt) + " -DWORD_BITS=" + std::to_string(word_bits) +
         (variant == Variant::Global ? " -DFILTER_BLOCK=" + std::to_string(kGemmFilterBlock) : "");
}

std::vector<GemmConfig> gemm_configs(Variant variant, const DeviceProfile& profile) {
  // PoCL on a CPU: its scalar 64-bit popcount is the fastest xor-popcount it has (xnorcl-bench peak:
  // ulong ~1.5x uint), so words are 64-bit there; GPUs keep 32-bit words (native popcount width).
  const int word_bits = profile.architecture == Architecture::PoclCpu ? 64 : 32;
  // PoCL's register-tiled (Global) kernel: 4 filter words by 8 patch words per work-item. A CPU has the
  // registers for 32 accumulators and the wider block halves the filter loads per popcount and makes each
  // output row store 8 contiguous floats (xnorcl-bench layers, one run, TN 8 against 4: GEMM stage
  // 0.6-0.9x the time on the ResNet layers and conv2, ~0.6x on the spec's layer; TN 16 wastes columns on
  // the 7x7 layer). GPUs keep 4x4 (register pressure on Mali).
  const int tn = profile.architecture == Architecture::PoclCpu && variant == Variant::Global ? 8 : 4;
  std::vector<GemmConfig> configs;
  // Mali-like devices run the register-tiled kernel with small work-groups; larger groups only help
  // where tiles are shared through on-chip local memory.
  const int largest = variant == Variant::Local ? 16 : 8;
  for (int wg = largest; wg >= 1; wg /= 2) {
    GemmConfig c;
    c.variant = variant;
    c.wg = wg;
    c.word_bits = word_bits;
    c.tn = tn;
    configs.push_back(c);
  }
  return configs;
}

std::int64_t gemm_work_groups(const GemmConfig& c, std::int64_t rows, std::int64_t columns) {
  return ((rows + c.tile_m() - 1) / c.tile_m()) * ((columns + c.tile_n() - 1) / c.tile_n());
}

// Two rules, each measured with the tuner (xnorcl-bench network --tune fast):
// - PoCL's CPU Global variant: a layer that stores floats (float or scale-and-bias output, with or without a
//   shortcut) takes a taller register block, 8 filter words by 4 patch words. The tuner chose it for most
//   such step classes of Bi-Real Net-18 and the binary ResNet-18 on an AMD EPYC and an Intel Xeon (per step
//   1.06x to 1.20x in interleaved runs); packed-output layers kept 4 x 8 there. With the vector popcount
//   instruction (native_popcount) the block is 8 x 8: each filter word meets 8 patch words in one 512-bit
//   register, summed in such registers (cl_kernels/xnor_gemm.cl), half the instructions of 8 x 4 per word;
//   on an Intel Xeon with VPOPCNTDQ the fused GEMMs of Bi-Real Net-18 took 3.22 against 3.77 ms, of the
//   binary ResNet-18 1.60 against 2.09 ms (one process, the two plans in turn).
// - The Local variant: a GEMM whose grid at the default tile would give fewer than kGroupsPerComputeUnit
//   work-groups per compute unit takes tiles of half as many output positions, twice the work-groups. A
//   compute unit left with one work-group or none has nothing to run while that one waits for memory. On an
//   NVIDIA H200 (132 compute units) at batch 1 the tuner moved every binary convolution of both networks
//   from tn=4 to tn=2 (64x56x56: 49 work-groups of 64x64; 512x7x7: 8), per step 1.04x to 1.40x, the
//   networks 1.115 -> 0.906 and 1.077 -> 0.926 ms of device time.
GemmConfig layer_gemm_default(const GemmConfig& runtime_default, const DeviceProfile& profile,
                              std::size_t work_group_cap, bool stores_floats, std::int64_t rows,
                              std::int64_t columns) {
  GemmConfig c = runtime_default;
  if (profile.architecture == Architecture::PoclCpu && c.variant == Variant::Global && stores_floats &&
      c.tm == 4 && c.tn == 8) {
    c.tm = 8;
    c.tn = profile.native_popcount ? 8 : 4;
  } else if (c.variant == Variant::Local && c.tn > 2 &&
             gemm_work_groups(c, rows, columns) <
                 kGroupsPerComputeUnit * static_cast<std::int64_t>(profile.info.compute_units)) {
    c.tn /= 2;
  } else {
    return runtime_default;
  }
  return gemm_config_fits(c, profile, work_group_cap) ? c : runtime_default;
}

std::string to_text(const GemmConfig& c) {
  return "wg=" + std::to_string(c.wg) + " tm=" + std::to_string(c.tm) + " tn=" + std::to_string(c.tn) +
         " kt=" + std::to_string(c.kt);
}

namespace {
bool power_of_two_in(int v, int lo, int hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}
}  // namespace

std::optional<GemmConfig> parse_gemm_config(const std::string& text, const GemmConfig& base) {
  const auto wg = config_value(text, "wg"), tm = config_value(text, "tm"), tn = config_value(text, "tn"),
             kt = config_value(text, "kt");
  if (!wg || !tm || !tn || !kt) return std::nullopt;
  if (!power_of_two_in(*wg, 4, 16) || !power_of_two_in(*tm, 1, 8) || !power_of_two_in(*tn, 2, 16) ||
      !power_of_two_in(*kt, 8, 32) || *tm * *tn > 64)
    return std::nullopt;
  GemmConfig c = base;
  c.wg = *wg;
  c.tm = *tm;
  c.tn = *tn;
  c.kt = *kt;
  return c;
}

bool gemm_config_fits(const GemmConfig& c, const DeviceProfile& profile, std::size_t work_group_cap) {
  return c.work_group_size() <= work_group_cap && c.work_group_size() <= profile.info.max_work_group_size &&
         c.local_bytes() <= profile.info.local_mem_size;
}

// Fast: the register block's shape at the default work-group (the block decides how often each loaded word
// is reused); normal: also the work-group and, on Local, the K step; exhaustive: wider register blocks.
// Work-groups below 4x4 and K steps other than 8 and 16 words are left out: smaller ones only ever lost (a
// GPU's wave or a CPU's vector is wider), 32 words of a 128-channel tile alone fill 32 KiB of local memory.
// Every candidate of every search is tested against the reference on both variants and under Oclgrind.
std::vector<GemmConfig> gemm_candidates(const GemmConfig& base, const DeviceProfile& profile,
                                        std::size_t work_group_cap, TuneSearch search) {
  const bool local = base.variant == Variant::Local;
  std::vector<int> wgs{base.wg}, tms, tns, kts{base.kt};
  if (search == TuneSearch::Fast) {
    tms = {2, 4, 8};
    tns = local ? std::vector<int>{2, 4, 8} : std::vector<int>{4, 8, 16};
  } else {
    const bool all = search == TuneSearch::Exhaustive;
    // Local tiles are shared by a work-group through local memory: a 4x4 group (16 work-items) leaves most
    // of a GPU's wave idle and shares little, so Local searches 8x8 and 16x16 only.
    wgs = local ? std::vector<int>{8, 16} : std::vector<int>{4, 8, 16};
    tms = all ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{2, 4, 8};
    tns = all ? std::vector<int>{2, 4, 8, 16} : std::vector<int>{4, 8, 16};
    if (local) kts = {8, 16};
  }
  std::vector<GemmConfig> out{base};
  for (int wg : wgs)
    for (int tm : tms)
      for (int tn : tns)
        for (int kt : kts) {
          GemmConfig c = base;
          c.wg = wg, c.tm = tm, c.tn = tn, c.kt = kt;
          if (tm * tn > 64 || !gemm_config_fits(c, profile, work_group_cap)) continue;
          // Local tiles of exactly one word of channels (wg * tm == 32) are left out: on PoCL 3.1 their
          // fused packing wrote a wrong word in about 1 of 100 runs (a few bytes of the __local flags read
          // as other data), while Oclgrind finds no race or uninitialized read in the same launches. The
          // default rule never picks them unless max_work_group_size forces it.
          if (local && c.tile_m() == 32) continue;
          if (to_text(c) != to_text(base)) out.push_back(c);
        }
  return out;
}

bool packs_in_vector_runs(const DeviceProfile& profile) {
  return profile.info.type == "CPU";
}

bool compares_floats_exactly(const DeviceProfile& profile) {
  return profile.keeps_subnormals;
}

std::vector<int> max_pool_band_candidates(TuneSearch search) {
  if (search == TuneSearch::Fast) return {};
  return search == TuneSearch::Normal ? std::vector<int>{8} : std::vector<int>{1, 2, 8};
}

std::vector<int> float_conv_column_candidates(TuneSearch /*search*/) {
  return {kFloatConvColumns, 16};
}

bool float_conv_lanes_by_default(const DeviceProfile& profile) {
  return profile.info.type == "CPU";
}

int float_conv_split_rows(const DeviceProfile& profile) {
  return profile.info.type == "CPU" && profile.native_float_vector_width >= 16 ? 2 : 1;
}

std::vector<std::size_t> linear_work_group_sizes() {
  return {64, 32, 16, 8, 4, 2, 1};
}

std::vector<std::size_t> linear_work_group_candidates(TuneSearch search, std::size_t default_size,
                                                      std::size_t work_group_cap) {
  const std::size_t smallest = search == TuneSearch::Fast ? 16 : search == TuneSearch::Normal ? 8 : 1;
  std::vector<std::size_t> out{default_size};
  for (std::size_t size : linear_work_group_sizes())
    if (size >= smallest && size <= work_group_cap && size != default_size) out.push_back(size);
  return out;
}

bool linear_work_group_fits(std::int64_t size, std::size_t work_group_cap) {
  const std::vector<std::size_t> sizes = linear_work_group_sizes();
  return size > 0 && static_cast<std::size_t>(size) <= work_group_cap &&
         std::find(sizes.begin(), sizes.end(), static_cast<std::size_t>(size)) != sizes.end();
}

std::string linear_build_options(std::size_t work_group_size, int word_bits) {
  std::string options = "-cl-std=CL1.2 -DWG_SIZE=" + std::to_string(work_group_size);
  if (word_bits) options += " -DWORD_BITS=" + std::to_string(word_bits);
  return options;
}

const std::vector<NetworkProgram>& network_programs() {
  static const std::vector<NetworkProgram> programs = {
      {"threshold_pack.cl", {"threshold_pack"}, false},
      {"binary_maxpool.cl",
       {"binary_maxpool", "maxpool_f32", "maxpool_f32_runs", "maxpool_f32_runs_native_compare"},
       false},
      {"binary_fc.cl", {"binary_fc"}, true},
      {"convolution.cl", {"convolution", "convolution_1x1"}, false},
      {"group_convolution.cl", {"depthwise_convolution"}, false},
      {"mat_mul.cl", {"mat_mul"}, true, true},
      {"elementwise.cl", {"eltwise_same", "eltwise_broadcast", "eltwise_rows"}, false},
      {"activation.cl", {"activation_f32"}, false},
      {"avg_pool.cl", {"avg_pool_f32", "avg_pool_f32_runs"}, false},
      {"reduce_mean.cl", {"reduce_mean_f32", "reduce_mean_rows"}, false, true},
      {"softmax.cl", {"softmax_f32"}, false, true},
      {"concat.cl", {"concat_copy"}, false},
      {"transpose.cl", {"transpose_copy"}, false},
      {"image_to_tensor.cl", {"image_to_tensor"}, false},
  };
  return programs;
}

const NetworkProgram& network_program(const std::string& file) {
  for (const NetworkProgram& p : network_programs())
    if (file == p.file) return p;
  throw Error("no network program is built from " + file);
}

std::string network_build_options(const NetworkProgram& program, Variant variant,
                                  std::size_t work_group_size) {
  std::string options = linear_build_options(work_group_size);
  if (program.per_variant) options += variant == Variant::Local ? " -DLOCAL_VARIANT=1" : " -DLOCAL_VARIANT=0";
  return options;
}

// CPU devices build convolution.cl in work-groups of 1. PoCL hands whole work-groups to its threads, and the
// float convolutions have few work-items, each a large block of outputs: a 1x1 convolution to 512 x 7 x 7 has
// 172, the 7x7/2 stem with its max-pool 77 then (bands of 8 pooled rows; 154 since, in bands of 4), which
// groups of 8 made 10 coarse grains for 2 cores. The first step was from 64 (the other programs' size) to 8
// (docs/benchmarks.md); on an Intel Xeon (AVX-512, 2 cores), both plans in one process in turn, 1 against 8:
// the stem 2.3-3.4% less time, Bi-Real Net-18's 1x1 steps 4-17% less, the binary ResNet-18's strided 1x1
// steps from 6% less (stage 4) to 8% more (stage 2), the stem's input copy (same program) up to 0.01 ms more;
// device time 0.4-3.5% less.
std::size_t network_work_group_ceiling(const NetworkProgram& program, const DeviceProfile& profile) {
  const bool cpu_convolution = profile.info.type == "CPU" && std::string(program.file) == "convolution.cl";
  return cpu_convolution ? 1 : std::numeric_limits<std::size_t>::max();
}

std::vector<std::pair<std::string, std::string>> network_build_option_sets() {
  std::vector<std::pair<std::string, std::string>> sets;
  for (const NetworkProgram& p : network_programs()) {
    for (std::size_t wg : linear_work_group_sizes()) {
      if (p.per_variant) {
        for (Variant v : {Variant::Local, Variant::Global})
          sets.emplace_back(p.file, network_build_options(p, v, wg));
      } else {
        sets.emplace_back(p.file, network_build_options(p, Variant::Global, wg));
      }
    }
  }
  return sets;
}

VariantChoice choose_variant(Variant requested, const DeviceProfile& profile) {
  const DeviceInfo& i = profile.info;
  const std::size_t budget = std::min(i.local_mem_size, kLocalMemoryBudget);
  const GemmConfig smallest_local = gemm_configs(Variant::Local, profile).back();
  const GemmConfig largest_local = gemm_configs(Variant::Local, profile).front();
  const std::string mem =
      "CL_DEVICE_LOCAL_MEM_TYPE = " + std::string(i.local_mem_is_local ? "CL_LOCAL" : "CL_GLOBAL") +
      ", CL_DEVICE_LOCAL_MEM_SIZE = " + std::to_string(i.local_mem_size) + " bytes";

  if (requested == Variant::Global)
    return {Variant::Global, "forced Global (RuntimeOptions or XNORCL_VARIANT)"};
  if (requested == Variant::Local) {
    if (smallest_local.local_bytes() > i.local_mem_size) {
      throw Error("forced variant Local cannot run on " + i.label() + ": its smallest tiles need " +
                  std::to_string(smallest_local.local_bytes()) + " bytes of local memory, the device has " +
                  std::to_string(i.local_mem_size));
    }
    return {Variant::Local, "forced Local (RuntimeOptions or XNORCL_VARIANT)"};
  }
  if (profile.architecture == Architecture::Mali) {
    return {Variant::Global,
            "Auto chose Global: Mali GPUs keep __local memory in ordinary global memory (" + mem + ")"};
  }
  if (!i.local_mem_is_local) {
    return {Variant::Global, "Auto chose Global: the device reports " + mem +
                                 ", so staging tiles in __local memory would only add copies"};
  }
  if (largest_local.local_bytes() > budget) {
    return {Variant::Global, "Auto chose Global: the Local tiles need " +
                                 std::to_string(largest_local.local_bytes()) + " bytes, more than min(" +
                                 mem + ", 32 KiB)"};
  }
  return {Variant::Local, "Auto chose Local: the device reports " + mem + " and the tiles (" +
                              std::to_string(largest_local.local_bytes()) +
                              " bytes) fit in min(local size, 32 KiB)"};
}

std::vector<std::pair<std::string, std::string>> all_build_option_sets() {
  std::vector<std::pair<std::string, std::string>> sets = network_build_option_sets();
  auto add = [&](const char* file, const std::string& options) {
    const std::pair<std::string, std::string> set(file, options);
    if (std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(set);
  };
  // The float convolutions' tuned column counts.
  for (int columns : float_conv_column_candidates(TuneSearch::Exhaustive)) {
    if (columns == kFloatConvColumns) continue;
    for (std::size_t wg : linear_work_group_sizes())
      add("convolution.cl", network_build_options(network_program("convolution.cl"), Variant::Global, wg) +
                                " -DCOLS=" + std::to_string(columns));
  }
  for (Architecture a :
       {Architecture::Unknown, Architecture::Mali, Architecture::Adreno, Architecture::Nvidia,
        Architecture::Amd, Architecture::Intel, Architecture::PoclCpu, Architecture::Oclgrind}) {
    DeviceProfile profile;
    profile.architecture = a;
    // Room for every tuning candidate (a real device's limits only remove some).
    profile.info.max_work_group_size = 1024;
    profile.info.local_mem_size = std::size_t(1) << 20;
    for (Variant v : {Variant::Local, Variant::Global}) {
      std::vector<GemmConfig> configs = gemm_configs(v, profile);
      for (const GemmConfig& base : gemm_configs(v, profile))
        for (const GemmConfig& c : gemm_candidates(base, profile, 1024, TuneSearch::Exhaustive))
          configs.push_back(c);
      for (GemmConfig c : configs) {
        // Both word sizes: RuntimeOptions::word_bits (XNORCL_WORD_BITS) overrides the architecture's.
        for (int word_bits : {32, 64}) {
          c.word_bits = word_bits;
          add("xnor_gemm.cl", c.build_options());
          for (std::size_t wg : linear_work_group_sizes()) {
            add("im2col_pack.cl", linear_build_options(wg, c.word_bits));
          }
        }
      }
    }
  }
  return sets;
}

}  // namespace xnorcl::detail
