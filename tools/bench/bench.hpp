// SPDX-License-Identifier: Apache-2.0
// xnorcl-bench: the types its parts share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl_bench {

// Bad command-line input: main prints the message and the usage, and exits with status 2.
using UsageError = xnorcl_cli::UsageError;

// ---- command line -----------------------------------------------------------------------------------------

// Whether --model names a network built in code rather than a file.
inline bool builtin_model(const std::string& model) {
  return model == "vehicle" || model == "bireal18" || model == "resnet18";
}

struct Options {
  std::string command;                // devices | peak | layers | network | startup
  std::optional<std::string> device;  // --device (else XNORCL_DEVICE, else the library's default)
  xnorcl::Variant variant = xnorcl::Variant::Auto;
  bool variant_given = false;  // --variant given (else XNORCL_VARIANT may apply)
  int warmup = 3;
  int reps = 20;
  float pad_value = 0;
  std::vector<std::string> layer_specs;  // --layer (repeatable); empty: the default set
  std::string json_path, csv_path;
  bool quick = false;
  bool quiet_check = false;                // layers, network: wait for a quiet machine before measuring
  int startup_runs = 3;                    // startup: fresh processes per cache state
  int batch = 1;                           // network: images per run
  std::string model = "vehicle";           // network: vehicle | bireal18 | resnet18 | a .xnn graph file
  bool batch_given = false;                // network: --batch was given (a model file keeps its own)
  std::optional<xnorcl::TuneSearch> tune;  // network: tune the model before measuring
};

// Appended to the build options of the bench's own kernels (peak.cl): OpenCL's standard
// "no warnings". PoCL prints its compiler's warnings on stderr ("24 warnings generated.": on a CPU without
// AVX-512, 16-lane vector arguments "change the ABI", which is harmless inside one program); they would read
// as a problem of the run. The library does the same on PoCL (src/runtime/device_profile.cpp).
constexpr const char* kNoWarnings = " -w";

// ---- statistics ------------------------------------------------------------------------------------------

struct Stats {
  double min = 0, median = 0, max = 0;
  double q1 = 0, q3 = 0;  // lower and upper quartiles (the noise verdict's spread)
  std::size_t count = 0;
};
Stats summarize(std::vector<double> samples);  // samples in milliseconds; empty gives count 0

// ---- peak ------------------------------------------------------------------------------------------------

struct PeakEntry {
  std::string type;       // "uint4", "float16", ...
  bool available = true;  // false when the device cannot build it (e.g. no 64-bit integers)
  std::string note;       // why not available
  double ops_per_s = 0;   // binary MACs (bits) per second, or flops per second
  double best_ms = 0;     // fastest of the repetitions
  std::size_t work_items = 0;
  int iterations = 0;
  std::string kernel;  // the kernel of the best figure: "acc8" or "block4x4" (tools/bench/kernels/peak.cl)
  std::vector<std::pair<std::string, double>> kernels;  // every kernel tried for this type, ops per second
};

struct Peak {
  std::vector<PeakEntry> xor_popcount;  // uint ... ulong4
  std::vector<PeakEntry> fma;           // float ... float16
  double binary_ops_per_s = 0;          // max over xor_popcount
  std::string binary_type;
  double float_flops_per_s = 0;  // max over fma
  std::string float_type;
  int measurements = 1;  // sets of 5 launches per type that the figures are the best of
};

// Measures the peak rates on the runtime's device and queue. quick: shorter kernels (CI smoke only).
Peak measure_peak(const xnorcl::Runtime& runtime, bool quick, bool progress);
// Per type, the better of two measurements (the layers run measures before and after: other processes on a
// shared machine lower a single measurement, which would inflate every "% of peak").
Peak best_of(const Peak& a, const Peak& b);
// --quiet-check: measures the peaks until two measurements in a row agree within kPeakDriftLimit (both
// rates), for at most two minutes; says on stderr how it went.
void wait_for_quiet(const xnorcl::Runtime& runtime);

// ---- noise ------------------------------------------------------------------------------------------------
// Whether a run's timings can be trusted (noise.cpp): on a shared machine other processes slow some
// repetitions and some peak measurements, which moved targets between PASS and MISS within one process. A
// noisy run is reported with its targets not judged.

// A run is noisy when its peak rates measured before and after the layers differ by more than this fraction
// of the lower one...
constexpr double kPeakDriftLimit = 0.15;
// ...or when the middle half of a timed series (upper over lower quartile) spans more than this factor. The
// quartiles ignore the odd preempted repetition, as the medians the targets use do.
constexpr double kSpreadLimit = 2.0;

struct PeakRates {
  double binary_ops_per_s = 0;   // xor-popcount peak
  double float_flops_per_s = 0;  // FMA peak
};
PeakRates rates_of(const Peak& peak);

struct TimedSeries {
  std::string name;  // "resnet_64x56 binary v=0 device"
  Stats stats;
};

struct NoiseVerdict {
  bool judged = false;  // false: a --quick run, or the peak measured only once
  bool noisy = false;
  std::string why_not_judged;
  std::vector<std::string> reasons;  // one per peak or series beyond its limit, with the figures
  double peak_drift = 0;             // the larger of the two peaks' drifts (fraction)
  double worst_spread = 0;           // the largest quartile ratio of any series
};

// (larger - smaller) / smaller; 0 when either is not positive.
double drift(double a, double b);
// Upper over lower quartile; 0 for fewer than 4 samples or a non-positive lower quartile.
double quartile_spread(const Stats& s);

// The exit status of a run that measured and checked everything but was noisy (targets not judged).
constexpr int kExitNoisy = 3;

NoiseVerdict judge_noise(const PeakRates& before, const PeakRates& after,
                         const std::vector<TimedSeries>& series);
NoiseVerdict not_judged(const std::string& why);

// The order in which `networks` networks run in repetition `rep` of `network`'s timing: the binary network,
// its float32 twin and, where some steps are tuned, the binary network in its default configurations
// (indices 0, 1, 2). The first and the last swap places every other repetition, so that each of the two
// binary networks follows the twin, whose larger buffers leave the caches cold, as often as the other: in
// a fixed order the default configurations always ran right after the twin, and steps whose tuning had
// kept the default, the same kernels in both networks, read 0.90-1.13x of each other's times.
std::vector<std::size_t> turn_order(int rep, std::size_t networks);

// ---- layers ----------------------------------------------------------------------------------------------

// One layer: the single descriptor both the checks and the timings use.
struct Layer {
  std::string name;        // "resnet_64x56x56"
  std::string origin;      // "paper conv2", "example", "resnet", "custom"
  xnorcl::Shape input{};   // N,C,H,W
  xnorcl::Shape filter{};  // C_OUT,C_IN,KH,KW
  std::array<int, 2> strides{1, 1};
  std::array<int, 2> pads{0, 0};  // symmetric: begin == end (CLBlast's im2col pads both sides alike)
  std::array<int, 2> dilations{1, 1};

  xnorcl::BinaryConvolution::Attributes attributes(float pad_value) const;
  xnorcl::Shape output() const;  // from xnorcl's own shape inference
  std::int64_t macs() const;     // N*C_OUT*OH*OW*C_IN*KH*KW
  std::string describe() const;  // "1x64x56x56 64@3x3 s1 p1 d1"
};

std::vector<Layer> default_layers();
// "1x64x56x56:64x3x3:s1:p1[:d2]" (the s, p and d parts optional, each a number or YxX). Throws UsageError.
Layer parse_layer(const std::string& spec);

// ---- results ---------------------------------------------------------------------------------------------

struct BinaryResult {
  float pad_value = 0;
  std::string status = "ok";  // ok | WRONG | error
  std::string message;        // what went wrong
  xnorcl::Plan plan;
  Stats wall;    // enqueue -> finish
  Stats device;  // sum of the stage events
  Stats packing, gemm, epilogue;
  std::vector<std::string> kernels;  // every kernel name seen in the stage events
};

struct FloatResult {
  std::string status = "unavailable";  // ok | WRONG | error | unavailable
  std::string message;
  double max_rel_error = 0;    // before timing, against the host float convolution
  std::string implementation;  // what the library chose, where it says (oneDNN: "jit:avx512_core", ...)
  Stats wall;                  // enqueue -> finish of Im2col + Gemm
  Stats im2col, gemm;          // their events (Gemm's event is its last kernel)
};

struct LayerResult {
  Layer layer;
  xnorcl::Shape output{};
  std::vector<BinaryResult> binary;  // binary[0]: --pad-value; then +1 and, on the example layer, 0 and 0.5
  FloatResult floating;
  // oneDNN on the host CPU, measured when the device is a CPU (else "unavailable"); wall times only. Its
  // message names the implementation oneDNN chose.
  FloatResult onednn;
};

struct RunInfo {
  std::string library_version, device, platform, driver, device_version;
  std::string variant, variant_reason, requested_variant;
  bool native_popcount = false;  // the kernels count bits with the CPU's vector instruction (Runtime)
  Options options;
  Peak peak;
  std::vector<LayerResult> layers;
  std::vector<std::string> invalid;  // reasons the run is invalid (a stage above 100% of peak)
  NoiseVerdict noise;
};

// The seed of the vehicle classifier's weights that `network` times (the device tests' seed).
constexpr std::uint64_t kVehicleSeed = 2024;

// The float32 twin of a binary graph (float_twin.cpp): the same layers and shapes with float ops, for
// `network` to time beside it. BinaryConvolution -> Convolution with +-1 weights and zero padding;
// FakeQuantize -> Add(-input_low) + Relu (a batch-norm shift and the activation);
// BinaryFullyConnected -> (Reshape to [N, K]) + MatMul with +-1 weights; every other node as it is.
xnorcl::Graph float_twin(const xnorcl::Graph& binary);

// ---- parts -----------------------------------------------------------------------------------------------

// The runtime of a measurement; `tuning` overrides RuntimeOptions::tuning (the default-configuration twin
// of a tuned model runs with TuningMode::Ignore).
xnorcl::Runtime make_runtime(const Options& o, std::optional<xnorcl::TuningMode> tuning = std::nullopt);
int run_devices(const Options& o);
// Prints how the kernels count bits where the device has a vector popcount instruction for them (nothing
// elsewhere): the figures of such a CPU differ by that choice.
void print_popcount_note(const xnorcl::Runtime& rt);
int run_graph_network(const Options& o);  // network (graph_network.cpp)
int run_peak(const Options& o);
int run_layers(const Options& o);
int run_startup(const Options& o, const char* argv0);
int run_first_output(const Options& o);  // hidden: the child process of `startup`

// The CLBlast float32 convolution of a layer (zero padding), on the runtime's context and queue.
class FloatBaseline {
 public:
  static bool available();  // built with CLBlast
  FloatBaseline(const xnorcl::Runtime& runtime, const Layer& layer, const std::vector<float>& x,
                const std::vector<float>& w);
  ~FloatBaseline();
  FloatBaseline(const FloatBaseline&) = delete;
  FloatBaseline& operator=(const FloatBaseline&) = delete;
  // Enqueues Im2col + Gemm for every image; throws std::runtime_error naming a failed CLBlast status.
  void enqueue();
  // Waits, then the device times (ms) of the last enqueue: Im2col and Gemm, summed over images.
  void stage_times(double& im2col_ms, double& gemm_ms);
  std::vector<float> read_output();

 private:
  struct Impl;
  Impl* impl_;
};

// The oneDNN float32 convolution of a layer on the host CPU (the stretch target; optional, Debian
// libdnnl-dev): layouts of oneDNN's choice, inputs reordered once at construction, run() times the primitive.
class OnednnBaseline {
 public:
  static bool available();  // built with oneDNN
  static std::string version();
  OnednnBaseline(const Layer& layer, const std::vector<float>& x, const std::vector<float>& w);
  ~OnednnBaseline();
  OnednnBaseline(const OnednnBaseline&) = delete;
  OnednnBaseline& operator=(const OnednnBaseline&) = delete;
  std::string implementation() const;  // oneDNN's name of the kernel it chose, e.g. "jit:avx512_core"
  void run();                          // blocking
  std::vector<float> read_output();    // NCHW

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Host float convolution in double (zero padding), for checking the baseline.
std::vector<float> host_float_convolution(const Layer& layer, const std::vector<float>& x,
                                          const std::vector<float>& w);

// Report: the tables on stdout, JSON and CSV files.
void print_layer_table(const RunInfo& run, const LayerResult& r);
void print_summary(const RunInfo& run);
void print_peak_table(const Peak& peak);
void print_noise(const NoiseVerdict& noise);
// A stage above 100% of the peak: RUN INVALID (a failure), or in a --quick smoke run only a note.
bool invalid_run(const RunInfo& run);
void print_invalid(const RunInfo& run);
void write_json(const RunInfo& run, const std::string& path);
void write_csv(const RunInfo& run, const std::string& path);

// Derived figures, shared by the table, the JSON and the targets.
double perfect_float_ms(const Layer& layer, const Peak& peak);  // 2*MACs / FMA peak
double gemm_percent_of_peak(const Layer& layer, const BinaryResult& b, const Peak& peak);
// The binary time that the headline, G binMAC/s and the pad_value ratios use: the median device time (the sum
// of the stage events), like the perfect float convolution it is compared with, which is a device figure;
// the wall median when the queue has no profiling. Wall time adds the host's wake-up after clFinish, which a
// loaded machine stretches (it is printed beside, and the CLBlast speed-up compares wall with wall, since
// CLBlast's Gemm event covers only its last kernel).
double binary_ms(const BinaryResult& b);
double gbinmac_per_s(const Layer& layer, const BinaryResult& b);

struct Target {
  std::string id, description, layer;
  double measured = 0, required = 0;
  std::string unit;    // "x", "%", ...
  std::string status;  // PASS | MISS | N/A | kNotJudged
  std::string note;
};
constexpr const char* kNotJudged = "not judged";  // a noisy run's targets
std::vector<Target> evaluate_targets(const RunInfo& run);

}  // namespace xnorcl_bench
