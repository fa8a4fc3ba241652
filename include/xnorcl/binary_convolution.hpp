// SPDX-License-Identifier: Apache-2.0
// OpenVINO BinaryConvolution-1 (xnor-popcount) on an OpenCL device.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xnorcl/filter.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/packed.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/runtime.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

// The geometry a layer resolves to once attributes and shapes are validated (the README's "Semantics in
// short").
struct ConvGeometry {
  Shape input{};
  Shape filter{};
  Shape output{};
  std::array<int, 2> pads_begin{};
  std::array<int, 2> pads_end{};
  bool has_pad_taps = false;  // some output reads outside the input
};

// What a BinaryConvolution will enqueue.
struct Plan {
  struct Launch {
    std::string kernel;
    std::array<std::size_t, 2> global{};
    std::array<std::size_t, 2> local{};
  };
  Variant variant = Variant::Global;
  std::string build_options;          // the GEMM program's tile configuration
  int tile_m = 0, tile_n = 0;         // output channels x output positions per work-group
  int words_per_patch = 0;            // packed words per patch (K bits in the layout below, padded to words)
  int word_bits = 32;                 // bits per packed word (32 or 64, per device architecture)
  bool channel_packed = false;        // K order (ky, kx, channel words) rather than dense (c, ky, kx)
  bool bit_rows = false;              // dense layout built from binarized bit rows (row_pack_*, then
                                      // im2col_pack_rows; dilation_x == 1, KW <= word_bits), else bit by bit
  std::int64_t patch_bits = 0;        // K = C_IN*KH*KW
  bool input_packed = false;          // the input is packed words (Options::input_packed)
  std::string output = "float32";     // float32, or "scale_bias (<gemm kernel>)" / "packed (<gemm kernel>)"
  int chunks = 1;                     // pieces the work is split into to respect CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::vector<Launch> launches;       // for the first chunk
  std::size_t scratch_bytes = 0;      // device memory the object holds besides the caller's input and output
  std::string shape_class;            // the GEMM's tuning key (xnorcl-tune; docs/tuning.md)
  std::string configuration;          // the GEMM's configuration, "wg=8 tm=4 tn=8 kt=8"
  bool tuned = false;                 // configuration from the tuning file, else the default rule
  std::string default_configuration;  // the default rule's configuration for this layer
  std::string to_string() const;
};

// Per-kernel device time of the last run or enqueue (from profiling events; empty when the queue has no
// profiling). Filled when the events complete.
struct StageTime {
  std::string kernel;
  double milliseconds = 0;
};

class BinaryConvolution {
 public:
  struct Attributes {
    std::array<int, 2> strides{1, 1};
    std::array<int, 2> pads_begin{0, 0};
    std::array<int, 2> pads_end{0, 0};
    std::array<int, 2> dilations{1, 1};
    std::string mode = "xnor-popcount";
    float pad_value = 0;
    AutoPad auto_pad = AutoPad::Explicit;
    std::vector<float> input_thresholds;  // empty: every threshold is 0
  };

  // What the layer writes (chosen at construction, Options::output):
  //   Float (the default): Y as float32 NCHW.
  //   ScaleBias: float32 NCHW, fmaf(scale[o], Y, bias[o]) of the exact float Y (a folded batch-norm; one
  //     rounding, reference_scale_bias): scale and bias hold C_OUT finite values each.
  //   Packed: bits in the packed layout of xnorcl/packed.hpp (32-bit words [N][OH][OW][ceil(C_OUT/32)], bit
  //     o%32 LSB-first, tail bits 0): bit = threshold_bit(Y, thresholds[o]) of the exact float Y (a
  //     batch-norm followed by sign folds into one rule per channel: fold_batch_norm). thresholds holds C_OUT
  //     rules; the value of a Greater or Less rule must not be NaN.
  // Both are applied in the GEMM's epilogue, with no further pass over the output (Packed may also be
  // max-pooled there: Options::max_pool): kernel xnor_gemm_fused
  // (ScaleBias; Packed on the Local variant, whose work-groups assemble whole words in __local memory) or
  // xnor_gemm_bits (Packed otherwise: one work-item computes the 32 channels of a word). Plan::output and
  // Plan::launches say which.
  struct Output {
    enum class Kind { Float, ScaleBias, Packed };
    Kind kind = Kind::Float;
    std::vector<float> scale, bias;     // ScaleBias
    std::vector<Threshold> thresholds;  // Packed
    static Output float32() { return Output{}; }
    static Output scale_and_bias(std::vector<float> scale, std::vector<float> bias) {
      Output o;
      o.kind = Kind::ScaleBias;
      o.scale = std::move(scale);
      o.bias = std::move(bias);
      return o;
    }
    static Output packed(std::vector<Threshold> thresholds) {
      Output o;
      o.kind = Kind::Packed;
      o.thresholds = std::move(thresholds);
      return o;
    }
  };
  struct Options {
    // The input is packed bits (xnorcl/packed.hpp: 32-bit words [N][H][W][ceil(C_IN/32)] of the logical
    // shape input_shape, bit 1 = +1), e.g. the packed output of the layer before: the packing stage reads
    // the words (im2col_pack_units) instead of binarizing floats. Attributes::input_thresholds must then
    // be empty. Padding is unchanged (pad taps take pad_value). Such a layer always uses the channel-packed
    // K layout.
    bool input_packed = false;
    Output output;
    // With Output::Packed only: a binary max-pool (OpenVINO MaxPool windows, xnorcl/pool.hpp) of the
    // thresholded bits in the same launch: the max of +-1 values is the OR of their bits, so each output
    // word is the OR of the words of its window (conv -> threshold -> pool, as BinaryMaxPool after the
    // packed output, without storing the unpooled words). output_shape() is then the pooled shape. Runs
    // xnor_gemm_bits on both variants.
    std::optional<PoolAttributes> max_pool;
    // With Output::ScaleBias only: a residual shortcut, float32 NCHW of the output's shape, added after the
    // scale and bias in the same epilogue (y = fmaf(scale[o], Y, bias[o]) + shortcut, two roundings): no
    // separate pass over memory. The shortcut is a device buffer given to the three-buffer enqueue();
    // run() and the two-buffer enqueue() refuse such a layer.
    bool add_shortcut = false;
    // A clamp of the convolution's float result Y before anything else in the epilogue (the fused
    // activation of a Larq/LCE binary convolution, applied to the sum before its multiplier and bias):
    // Y' = Y < clamp_low ? clamp_low : (Y > clamp_high ? clamp_high : Y) (OpenVINO Clamp; a Relu is
    // clamp_low 0, RELU6 0..6, RELU_N1_TO_1 -1..1), then Y' goes out as the output choice says: Float
    // writes Y' (through xnor_gemm_fused), ScaleBias writes fmaf(scale[o], Y', bias[o]) (+ the shortcut),
    // Packed writes threshold_bit(Y', thresholds[o]) (the clamp is composed into each rule on the host:
    // clamp is monotone, so the bit stays one threshold of Y; nothing more is done per value). Exact: min
    // and max of floats, no rounding. Y is never NaN or -0 (an integer, or the pad fold's fmaf at a border
    // position), so a Relu (Y > 0 ? Y : 0) and the clamp to [0, +inf] agree bit for bit. The defaults
    // (-inf, +inf) mean no clamp; neither bound may be NaN, and clamp_low <= clamp_high.
    float clamp_low = -std::numeric_limits<float>::infinity();
    float clamp_high = std::numeric_limits<float>::infinity();
    // With Output::Float or ScaleBias (no max_pool): the bits of every value the layer stores (after the
    // clamp, scale, bias and shortcut) under one rule per output channel, threshold_bit(y, also_packed[o]),
    // written in the same epilogue to a second output in the packed layout (xnorcl/packed.hpp, words
    // [N][OH][OW][ceil(C_OUT/32)]): a layer whose float output feeds both a residual shortcut and a
    // binarization needs no thresholding pass. Empty (the default): none. C_OUT rules, values not NaN. Only
    // the enqueue() that takes a `bits` buffer runs such a layer. The Local variant assembles the words in
    // __local memory where its tile covers whole words; elsewhere a thresholding pass after the GEMM reads
    // the stored output back (so the output buffer must then be readable), with the same bits.
    std::vector<Threshold> also_packed{};
    bool clamped() const {
      return clamp_low != -std::numeric_limits<float>::infinity() ||
             clamp_high != std::numeric_limits<float>::infinity();
    }
  };

  // Checks attributes and shapes as OpenVINO does and resolves padding; throws InvalidArgument naming the
  // problem and the values. Needs no device.
  static ConvGeometry validate(const Attributes& attributes, const Shape& input_shape,
                               const Shape& filter_shape);

  // Validates, resolves padding, packs the filter into the device layout and plans the launches.
  BinaryConvolution(const Runtime& runtime, const Attributes& attributes, const Shape& input_shape,
                    const Filter& filter);
  // With input and output choices; throws InvalidArgument naming the problem and the values for scale, bias
  // or thresholds not of C_OUT entries, a NaN or infinite scale or bias, a NaN threshold value, or
  // input_thresholds given with a packed input.
  BinaryConvolution(const Runtime& runtime, const Attributes& attributes, const Shape& input_shape,
                    const Filter& filter, const Options& options);
  ~BinaryConvolution();
  BinaryConvolution(BinaryConvolution&&) noexcept;
  BinaryConvolution& operator=(BinaryConvolution&&) noexcept;
  BinaryConvolution(const BinaryConvolution&) = delete;
  BinaryConvolution& operator=(const BinaryConvolution&) = delete;

  Shape input_shape() const;
  Shape output_shape() const;
  std::array<int, 2> pads_begin() const;
  std::array<int, 2> pads_end() const;
  const Attributes& attributes() const;
  const Plan& plan() const;
  const Options& options() const;
  bool input_packed() const;
  bool output_packed() const;
  // Bytes of the whole input / output (float32 values or 32-bit packed words).
  std::size_t input_bytes() const;
  std::size_t output_bytes() const;

  // Host in, host out (blocking). x holds N*C*H*W values (float or uint8), or packed_word_count(input_shape)
  // words for a packed input. The input type must match Options::input_packed and the output type
  // Options::output (run() for float32 and ScaleBias output, run_packed() for packed output); a mismatch
  // throws InvalidArgument before any device work.
  std::vector<float> run(const float* x);
  std::vector<float> run(const std::uint8_t* x);
  std::vector<float> run(const std::uint32_t* x);
  std::vector<std::uint32_t> run_packed(const float* x);
  std::vector<std::uint32_t> run_packed(const std::uint8_t* x);
  std::vector<std::uint32_t> run_packed(const std::uint32_t* x);
  // Into the caller's memory (run_packed for packed output): y holds N*C_OUT*OH*OW floats or
  // packed_word_count(output_shape()) words; it is untouched if anything fails.
  void run(const float* x, float* y);
  void run(const std::uint8_t* x, float* y);
  void run(const std::uint32_t* x, float* y);
  void run_packed(const float* x, std::uint32_t* y);
  void run_packed(const std::uint8_t* x, std::uint32_t* y);
  void run_packed(const std::uint32_t* x, std::uint32_t* y);
  // Device-resident, on the runtime's queue: input float32 NCHW (or packed words with input_packed), output
  // float32 NCHW (or packed words with packed output); sizes input_bytes() and output_bytes(). Returns the
  // event of the last kernel. Refused (InvalidArgument, nothing enqueued): a null buffer, one of another
  // context or too small for its shape, an input created CL_MEM_WRITE_ONLY, an output created
  // CL_MEM_READ_ONLY, input and output overlapping in one buffer, a null event in the wait list (the kernels
  // only write the output: CL_MEM_WRITE_ONLY outputs are fine). If a launch
  // fails (OpenCLError), the kernels enqueued before it still run: the output's content is then unspecified;
  // the input is never written.
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);
  // With Options::add_shortcut: as above, and `shortcut` (float32 NCHW of output_shape(), read only) is
  // added to every output value. It is checked like the input and must not overlap the output.
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& shortcut, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);

  // With Options::also_packed: as the enqueues above (`shortcut` given exactly when the layer adds one,
  // else nullptr), and the packed bits of the output go to `bits` (packed_word_count(output_shape()) words,
  // checked like the output; it must overlap neither the output nor the inputs).
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer* shortcut, const cl::Buffer& output,
                    const cl::Buffer& bits, const std::vector<cl::Event>* wait = nullptr);
  // Device time per kernel of the last run()/enqueue() (waits for its events).
  std::vector<StageTime> last_stage_times() const;

 private:
  struct Impl;
  Impl& impl() const;  // throws Error on a moved-from object
  std::unique_ptr<Impl> impl_;
};

}  // namespace xnorcl
