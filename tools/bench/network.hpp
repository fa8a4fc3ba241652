// SPDX-License-Identifier: Apache-2.0
// xnorcl-bench network: the vehicle classifier (binary, xnorcl::Network) beside a float32 network of the same
// layer sequence and shapes (CLBlast and two small kernels) on the same device and queue.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench.hpp"

namespace xnorcl_bench {

// One device-time sample of the float network: which spec layer, which part (0: a convolution's Im2col or a
// whole other layer, 1: a convolution's Gemm), and its kernel.
struct FloatStageTime {
  std::size_t layer = 0;
  int part = 0;
  std::string kernel;
  double milliseconds = 0;
};

// The float32 equivalent of a NetworkSpec made of Convolution, Threshold, MaxPool and FullyConnected layers:
//   Convolution     CLBlast Im2col + Gemm per image, zero padding, weights the filter's bits as +-1 floats;
//                   the input thresholds of a binary convolution are not applied (a float network takes the
//                   pixels as they are).
//   Threshold       batch-norm + sign: out = fma(scale, y, bias) > 0 ? +1 : -1 with scale 1 and bias -t,
//                   t per channel the lower median of that layer's float input over the calibration batch
//                   (as vehicle_classifier calibrates the binary thresholds).
//   MaxPool         a float max-pool kernel (the spec's attributes).
//   FullyConnected  CLBlast Gemv per image, weights the filter's bits as +-1 floats (NCHW flatten order).
// Every launch goes to the runtime's in-order queue; the event of each is kept for the stage times.
class FloatNetwork {
 public:
  static bool available();  // built with CLBlast
  // x: the timed input, spec.input floats. calibration: [images, C, H, W] floats for the thresholds.
  FloatNetwork(const xnorcl::Runtime& runtime, const xnorcl::NetworkSpec& spec, const std::vector<float>& x,
               const std::vector<float>& calibration, const xnorcl::Shape& calibration_shape);
  ~FloatNetwork();
  FloatNetwork(const FloatNetwork&) = delete;
  FloatNetwork& operator=(const FloatNetwork&) = delete;

  // Enqueues the whole network; throws std::runtime_error naming a failed CLBlast status.
  void enqueue();
  // After the queue finished: the device time of every launch of the last enqueue (CLBlast's Gemm and Gemv
  // events cover their last kernel only).
  std::vector<FloatStageTime> last_stage_times() const;
  // Reads every layer's output and recomputes that layer on the host from the device's own input of it:
  // convolutions and FCs in double with relative max-norm error at most `tolerance`, batch-norm + sign and
  // max-pool bitwise. Returns "" or the first problem; `worst` gets the largest relative error seen.
  std::string check(double tolerance, double& worst) const;
  std::vector<float> read_output() const;

 private:
  struct Impl;
  Impl* impl_;
};

// Float MACs of the convolutions and FCs of a spec (N*C_OUT*OH*OW*C_IN*KH*KW and N*O*K), as the binary MACs.
std::int64_t network_macs(const xnorcl::NetworkSpec& spec);

// One row of the per-layer table (the paper's Table 2 analog).
struct NetworkRow {
  std::string name;         // "conv1 im2col", "pool1", "fc1", ...
  std::string description;  // shapes
  std::size_t layer = 0;    // spec layer index
  int part = 0;
  Stats floating, binary;  // per-repetition sums of the row's events, ms
  // Each kernel of the row, in launch order, with its per-repetition time (summed over images).
  std::vector<std::pair<std::string, Stats>> float_kernels, binary_kernels;
  double paper_float_us = 0, paper_binary_us = 0;  // GTX1080, Table 2 (0: no counterpart)
};

struct NetworkSide {
  std::string status = "ok";  // ok | WRONG | error | unavailable
  std::string message;
  Stats wall;    // enqueue -> finish
  Stats device;  // sum of the events per repetition
};

struct NetworkRun {
  RunInfo info;  // device, variant, options, peak (its layers stay empty)
  std::int64_t batch = 1;
  std::int64_t macs = 0;
  std::vector<NetworkRow> rows;
  NetworkSide binary, floating;
  double float_max_rel_error = 0;
  std::string equivalence;                          // what the float network is, in words
  double binary_ones_min = 0, binary_ones_max = 0;  // ones fraction over the packed layers (reference)
};

// Derived figures and the output (network_report.cpp).
double network_perfect_float_ms(const NetworkRun& run);  // 2 * MACs / FMA peak
struct NetworkTarget {
  std::string id, description;
  double measured = 0, required = 0;
  std::string status;  // PASS | MISS
  std::string note;
};
std::vector<NetworkTarget> evaluate_network_targets(const NetworkRun& run);
void print_network_report(const NetworkRun& run);
void write_network_json(const NetworkRun& run, const std::string& path);
void write_network_csv(const NetworkRun& run, const std::string& path);

}  // namespace xnorcl_bench
