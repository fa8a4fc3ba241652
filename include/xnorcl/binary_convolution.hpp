// OpenVINO BinaryConvolution-1 (xnor-popcount) on an OpenCL device.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xnorcl/filter.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/runtime.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

// The geometry a layer resolves to once attributes and shapes are validated (SPEC section 2).
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
  std::string build_options;      // the GEMM program's tile configuration
  int tile_m = 0, tile_n = 0;     // output channels x output positions per work-group
  int words_per_patch = 0;        // packed words per patch (K bits in the layout below, padded to words)
  int word_bits = 32;             // bits per packed word (32 or 64, per device architecture)
  bool channel_packed = false;    // K order (ky, kx, channel words) rather than dense (c, ky, kx)
  bool bit_rows = false;          // dense layout built from binarized bit rows (row_pack_*, then
                                  // im2col_pack_rows; dilation_x == 1, KW <= word_bits), else bit by bit
  std::int64_t patch_bits = 0;    // K = C_IN*KH*KW
  int chunks = 1;                 // pieces the work is split into to respect CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::vector<Launch> launches;   // for the first chunk
  std::size_t scratch_bytes = 0;  // device memory the object holds besides the caller's input and output
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

  // Checks attributes and shapes as OpenVINO does and resolves padding; throws InvalidArgument naming the
  // problem and the values. Needs no device.
  static ConvGeometry validate(const Attributes& attributes, const Shape& input_shape,
                               const Shape& filter_shape);

  // Validates, resolves padding, packs the filter into the device layout and plans the launches.
  BinaryConvolution(const Runtime& runtime, const Attributes& attributes, const Shape& input_shape,
                    const Filter& filter);
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

  // Host in, host out (blocking). x holds N*C*H*W values.
  std::vector<float> run(const float* x);
  std::vector<float> run(const std::uint8_t* x);
  // Into the caller's memory: y holds N*C_OUT*OH*OW floats; it is untouched if anything fails.
  void run(const float* x, float* y);
  void run(const std::uint8_t* x, float* y);
  // Device-resident, float32 in and out, on the runtime's queue. Returns the event of the last kernel.
  // Refused (InvalidArgument, nothing enqueued): a null buffer, one of another context or too small for its
  // shape, an input created CL_MEM_WRITE_ONLY, an output created CL_MEM_READ_ONLY (or CL_MEM_WRITE_ONLY
  // where the layer reads its output back: pad_value other than +-1 with pad taps), input and output
  // overlapping in one buffer, a null event in the wait list. If a launch fails (OpenCLError), the kernels
  // enqueued before it still run: the output's content is then unspecified; the input is never written.
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);

  // Device time per kernel of the last run()/enqueue() (waits for its events).
  std::vector<StageTime> last_stage_times() const;

 private:
  struct Impl;
  Impl& impl() const;  // throws Error on a moved-from object
  std::unique_ptr<Impl> impl_;
};

}  // namespace xnorcl
