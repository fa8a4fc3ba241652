// SPDX-License-Identifier: Apache-2.0
// Device quirks, kernel configurations and the variant rule: the one place that knows about architectures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xnorcl/opencl.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/runtime.hpp"
#include "xnorcl/shape.hpp"
#include "xnorcl/tuning.hpp"

namespace xnorcl::detail {

enum class Architecture { Unknown, Mali, Adreno, Nvidia, Amd, Intel, PoclCpu, Oclgrind };
const char* to_string(Architecture a);

struct DeviceProfile {
  Architecture architecture = Architecture::Unknown;
  DeviceInfo info;
  // The driver compiles a kernel's final code at its first launch and puts that code in the program
  // binaries it returns afterwards (PoCL: one work-group function per local size). The program cache then
  // stores such a program again once its kernels have run, so a warm start skips that compilation too.
  bool binary_grows_at_first_launch = false;
  // Appended to every program's build options on this device (and so part of its cache keys); not in the
  // device-independent tables of all_build_option_sets, which CI compiles with -Werror.
  std::string extra_build_options;
  // CL_DEVICE_SINGLE_FP_CONFIG has CL_FP_DENORM: the device keeps subnormal floats, so its float compares
  // order them exactly (a device that flushes them to zero compares them equal to 0).
  bool keeps_subnormals = false;
  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: the floats of one vector register (PoCL: 8 on AVX2, 16 on AVX-512).
  int native_float_vector_width = 1;
  // The kernels are built with -DNATIVE_POPCOUNT (DeviceInfo::native_popcount where
  // RuntimeOptions::native_popcount allows it); set by the Runtime, which may refuse the instruction.
  bool native_popcount = false;
};

DeviceProfile profile_device(const cl::Device& device, int platform_index = 0, int device_index = 0);

// Output channels per block of the Global variant's GEMM filter buffer (filter_row_words in
// src/ops/binary_convolution/filter_layout.hpp), given to the kernels as -DFILTER_BLOCK.
constexpr int kGemmFilterBlock = 8;

// One compiled configuration of cl_kernels/xnor_gemm.cl. A work-group of wg x wg work-items computes a
// tile of (wg*tm) output channels by (wg*tn) output positions; the Local variant stages kt words of K per
// step in __local memory.
struct GemmConfig {
  Variant variant = Variant::Global;
  int wg = 8;
  int tm = 4;
  int tn = 4;
  int kt = 8;
  // Bits per packed word (uint or ulong in the kernels, -DWORD_BITS): 64 where the device's fastest
  // xor-popcount is the scalar 64-bit one (PoCL on CPUs), 32 on GPUs. The packing program uses the same.
  int word_bits = 32;
  int word_bytes() const { return word_bits / 8; }
  int tile_m() const { return wg * tm; }
  int tile_n() const { return wg * tn; }
  std::size_t work_group_size() const { return static_cast<std::size_t>(wg) * wg; }
  // Whether xnor_gemm_fused assembles packed words in __local memory (FUSED_PACKS in xnor_gemm.cl): the Local
  // variant with tiles of whole 32-bit words of channels.
  bool packs_words_in_local() const { return variant == Variant::Local && tile_m() % 32 == 0; }
  std::size_t local_bytes()
      const;  // __local memory the program's kernels declare (the largest: xnor_gemm_fused)
  std::string build_options() const;
};

// Candidates for a variant, largest work-group first; the runtime builds the first that the device, the
// kernel and RuntimeOptions::max_work_group_size allow.
std::vector<GemmConfig> gemm_configs(Variant variant, const DeviceProfile& profile);

// Work-groups of a GEMM of `rows` output channels by `columns` output positions (every image's) in config c.
std::int64_t gemm_work_groups(const GemmConfig& c, std::int64_t rows, std::int64_t columns);
// Below this many work-groups per compute unit, layer_gemm_default halves a Local tile's output positions.
constexpr std::int64_t kGroupsPerComputeUnit = 4;
// The default configuration of one layer's GEMM: the runtime's (gemm_configs), except where measurements
// showed a better rule for the kind of output or the size of the grid (see device_profile.cpp). `rows`:
// the layer's output channels, `columns`: its output positions over all images (N*OH*OW).
GemmConfig layer_gemm_default(const GemmConfig& runtime_default, const DeviceProfile& profile,
                              std::size_t work_group_cap, bool stores_floats, std::int64_t rows,
                              std::int64_t columns);

// Tuning (docs/tuning.md). A GEMM configuration as the tuning file writes it: "wg=8 tm=4 tn=8 kt=8".
std::string to_text(const GemmConfig& c);
// The configuration `text` names, on base's variant and word size: nothing unless wg, tm, tn and kt are all
// given and in the searched ranges (wg 4-16, tm 1-8, tn 2-16, kt 8-32, powers of two, tm*tn <= 64).
std::optional<GemmConfig> parse_gemm_config(const std::string& text, const GemmConfig& base);
// Whether the device can run it: work-group size within `work_group_cap`, Local tiles within local memory.
bool gemm_config_fits(const GemmConfig& c, const DeviceProfile& profile, std::size_t work_group_cap);
// The configurations a search tries for one layer, `base` (the default rule) first, each fitting.
std::vector<GemmConfig> gemm_candidates(const GemmConfig& base, const DeviceProfile& profile,
                                        std::size_t work_group_cap, TuneSearch search);

// Output columns per work-item of the float convolutions (COLS in convolution.cl): 8 by default; 16 lets
// a CPU's compiler feed 16-lane FMAs from each tap's 8 weight loads, which pays on wide rows of few input
// channels (PoCL: the 7x7/2 stem 1.92 -> 1.64 ms) and loses on narrow rows of many (512x7x7: 2x slower), so
// the tuner chooses it per layer.
constexpr int kFloatConvColumns = 8;
std::vector<int> float_conv_column_candidates(TuneSearch search);
// Bands of pooled rows per work-item besides the default (4) that the tuner tries for a float convolution
// with its max-pool in the kernel (convolution_split_maxpool): none in the fast search; 8 (fewer rows
// computed twice) in the normal one; also 1 and 2 (more work-items, for devices with many cores) in the
// exhaustive one.
std::vector<int> max_pool_band_candidates(TuneSearch search);
// Output columns per work-item of convolution_lanes (LANE_COLS in convolution.cl), the float convolution
// with 16 output channels in vector lanes: 6 float16 accumulators and the loaded weights fill AVX2's 16
// vector registers.
constexpr int kFloatConvLaneColumns = 6;
// Output columns per work-item of convolution_split (SPLIT_COLS in convolution.cl): 16, the lanes of a
// float16, over 6 output channels (12 accumulator registers on AVX2).
constexpr int kFloatConvSplitColumns = 16;
// Whether the float convolutions run a vector-lane kernel by default: on CPU devices, whose compilers
// vectorize what a kernel body spells as vectors. Windowed shapes run convolution_split where it may run
// (finite weights: output columns in the lanes, the pads in a copy of the input, so no block checks bounds
// and no row's last block is mostly empty), else convolution_lanes (16 output channels in the lanes); 1x1
// shapes without pads convolution_1x1_split on output planes of 32 positions or more (positions in the lanes:
// one vector load of a channel's 16 inputs where the lanes kernel broadcasts 6 values from their own line,
// and whole-vector stores; PoCL, AVX-512, in one process: Bi-Real Net-18's 1x1 steps 1.6-2.1x as fast at
// 28x28, 1.4-1.5x at 14x14, 1.1x at 7x7; at a stride on a copy of the strided pixels, a binary ResNet-18's
// three 1x1/2 shortcuts 1.28-1.37x as fast together, 1.07-1.58x apiece, the copies included; AVX2 not
// measured), else convolution_1x1_lanes. PoCL (AVX2): convolution_lanes ran the 7x7/2 stem about 20% faster
// than 8x8 tiles and 3x3 layers 1.3x at 64x56x56 to 2.5x at 512x7x7; convolution_split, copy included, the
// float32 twin of the binary ResNet-18's 3x3 layers 1.05-1.13x faster than convolution_lanes at 56x56, 1.27x
// at 28x28, 2.1x at 14x14, 1.5x at 7x7, the stem about 1.07x (the twin's device time 88.6/86.7 -> 64.6/67.6
// ms); convolution_1x1_lanes a binary ResNet-18's 1x1/2 shortcuts 1.3-1.9x, most where the tiles gathered
// their pixels, Bi-Real Net-18's 1x1 ones up to 1.3x. GPUs keep the tiles: 96 float accumulators per
// work-item would cost them occupancy.
bool float_conv_lanes_by_default(const DeviceProfile& profile);
// Output rows per work-item of convolution_split by default (2: convolution_split_rows2), and likewise runs
// of 16 positions per work-item of convolution_1x1_split (2: convolution_1x1_split_runs2): 2 on CPU
// devices whose native float vector has 16 lanes (AVX-512: 32 registers hold two rows' 12 accumulators,
// and their 12 independent FMA chains keep both FMA units busy where 6 chains wait on the FMA latency),
// else 1 (AVX2's 16 registers of 8 floats would spill the second row). PoCL on an Intel Xeon with
// AVX-512, the two plans in turn in one process: the 7x7/2 stem 1.22x faster in a quiet minute (1.87 ->
// 1.53 ms), 1.7x while other work shared the cores.
int float_conv_split_rows(const DeviceProfile& profile);

// Whether the channel-packed layout's packing kernels (cl_kernels/im2col_pack.cl) run 16 pixels or output
// columns per work-item as vectors (CPU devices: the work-item loop wraps the kernel body, and vectors are
// what its compiler turns into vector code; PoCL packs a 1x64x56x56 input, both kernels, in 0.08 ms in
// runs and 0.39 ms a word per work-item) or one word per work-item (every other device: a GPU runs
// work-items side by side, and runs left it 16 times fewer of them, each with a long loop).
bool packs_in_vector_runs(const DeviceProfile& profile);

// Whether the device's float compares order every value exactly (it keeps subnormals), so that kernels that
// compare floats may compare them as floats rather than as order keys of their bits: the same answers, one
// instruction where the keys take several. Taken by the float max-pool over runs
// (maxpool_f32_runs_native_compare: PoCL, a 64x112x112 3x3/2 pool 0.59 -> 0.40 ms) and the binarization of
// channel-packed layouts in vector runs (channel_pack_f32_native_compare: PoCL, 64 x 56 x 56 channels 1.27x,
// 256 x 14 x 14 1.45x).
bool compares_floats_exactly(const DeviceProfile& profile);

// Work-group sizes for the one-dimensional kernels (packing, network layers), largest first.
std::vector<std::size_t> linear_work_group_sizes();
// The work-group sizes a search tries for a one-dimensional kernel: `default_size` (the size its program was
// built with at create()) first, then the others of linear_work_group_sizes() within `work_group_cap`. Fast
// tries 64, 32 and 16, normal down to 8, exhaustive every size.
std::vector<std::size_t> linear_work_group_candidates(TuneSearch search, std::size_t default_size,
                                                      std::size_t work_group_cap);
// Whether a tuned work-group size is one of linear_work_group_sizes() within `work_group_cap` (a tuning file
// may hold anything).
bool linear_work_group_fits(std::int64_t size, std::size_t work_group_cap);
// word_bits 0: a kernel file without packed words (the network layers'); else -DWORD_BITS (im2col_pack.cl).
std::string linear_build_options(std::size_t work_group_size, int word_bits = 0);

// The one-dimensional programs of the network layers, one entry each: its file, its kernels and where the
// runtime keeps it. Build options: linear_build_options plus, for variant-dependent files, -DLOCAL_VARIANT.
struct NetworkProgram {
  const char* file;
  std::vector<const char*> kernels;
  bool per_variant;  // -DLOCAL_VARIANT=0/1 from the variant in use
  // Whether work-items of a group add floats together (mat_mul, reduce_mean, softmax): the work-group size
  // then sets the order of the sums, another size rounds differently, and so it is never tuned.
  bool sums_across_work_group = false;
};
const std::vector<NetworkProgram>& network_programs();
const NetworkProgram& network_program(const std::string& file);  // Error for a file not in the table
std::string network_build_options(const NetworkProgram& program, Variant variant,
                                  std::size_t work_group_size);
// The largest work-group a network program is built with on this device: the Runtime takes the largest size
// up to this that fits every limit (work-group sizes are fixed per program, reqd_work_group_size).
std::size_t network_work_group_ceiling(const NetworkProgram& program, const DeviceProfile& profile);

// Whether the pools over float rows (maxpool_f32_runs, avg_pool_f32_runs) compute runs of 16 outputs per
// work-item as vector lanes: on the Global variant (CPUs and Mali), whose compilers vectorize only what a
// kernel body spells as vectors (PoCL ran a 64x112x112 3x3/2 max-pool at one output per work-item in 1.7
// ms, in runs in 0.78 ms), for output rows of a full run at least, and for narrower rows whose windows all
// lie inside the input row at stride 1 or 2 (the run's spare lanes read on into the next rows and are not
// stored, so every tap is still one vector load; a 2x2/2 average pool to 128x14x14 took 0.155 ms at one
// output per work-item). Narrow rows cut by a pad would load lane by lane, slower than one output per
// work-item (a 7-wide row: 0.044 -> 0.060 ms). The Local variant (GPUs) keeps one output per work-item, the
// most work-items.
constexpr std::int64_t kPoolRun = 16;  // outputs per run (POOL_RUN in binary_maxpool.cl and avg_pool.cl)
inline bool pools_in_runs(Variant variant, const PoolGeometry& g, const PoolAttributes& a) {
  const std::int64_t OW = g.output[3], stride = a.strides[1];
  const bool row_inside =
      (stride == 1 || stride == 2) && g.pads_begin[1] == 0 && (OW - 1) * stride + a.kernel[1] <= g.input[3];
  return variant == Variant::Global && (OW >= kPoolRun || row_inside);
}
// The work-items of a pool over outputs [N, C, OH, OW]: one per run of a row, or one per output.
inline std::int64_t pool_work_items(const Shape& output, bool runs) {
  return output[0] * output[1] * output[2] * (runs ? (output[3] + kPoolRun - 1) / kPoolRun : output[3]);
}

struct VariantChoice {
  Variant variant;
  std::string reason;
};
// Auto: Local only where local memory is on-chip (CL_LOCAL), the Local tiles fit in
// min(CL_DEVICE_LOCAL_MEM_SIZE, 32 KiB), and the device is not a Mali. A forced variant that cannot run
// throws.
VariantChoice choose_variant(Variant requested, const DeviceProfile& profile);

// Every (kernel file, build options) pair the runtime can emit, for the CI's clang check.
std::vector<std::pair<std::string, std::string>> all_build_option_sets();

}  // namespace xnorcl::detail
