// SPDX-License-Identifier: Apache-2.0
// What the float graph ops (elementwise, activation, avg_pool, reduce_mean, softmax, concat, reshape,
// transpose) share: a DeviceStep made of one or more launches of a layer program with the program's fixed
// local size, device time per launch when the runtime profiles, and numpy-style shape helpers for their
// validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "xnorcl/opencl.hpp"

namespace xnorcl::ops {

class LinearStep : public DeviceStep {
 public:
  // With a tuning class (what, beside the file's name, decides the launch geometry: kernel and shapes), the
  // work-group size is the tuning table's for that class where it holds one; else the program's own.
  LinearStep(const Runtime& runtime, const std::string& file, std::string description,
             const std::optional<std::string>& tuning_class = std::nullopt);
  std::vector<StageTime> stage_times() const override;
  std::vector<detail::TuningPoint> tuning_points() const override;
  std::size_t weight_bytes() const override { return weight_bytes_; }
  std::string describe() const override { return description_; }

 protected:
  // A kernel of the step's program, checked for the program's local size.
  cl::Kernel kernel(const char* name) const;
  // Enqueues `kernel` over `items` work-items (rounded up to the local size) or, with rows > 1, a 2-D range
  // of `items` x rows; the first launch of an enqueue waits for `wait`, later ones follow in queue order.
  cl::Event launch(cl::Kernel& kernel, const char* name, std::size_t items,
                   const std::vector<cl::Event>& wait, std::size_t rows = 1);
  // Starts an enqueue: forgets the previous one's events.
  void begin() { events_.clear(); }
  // A read-only device copy of host floats, counted in weight_bytes().
  cl::Buffer upload(const std::vector<float>& values);
  // A cl_int argument from a count the op has checked against INT_MAX.
  static cl_int int_arg(std::int64_t value) { return static_cast<cl_int>(value); }
  std::size_t work_group() const { return work_group_; }
  const Runtime& runtime() const { return runtime_; }

 private:
  Runtime runtime_;
  cl::Program program_;
  std::size_t work_group_ = 1;
  std::string description_;
  std::size_t weight_bytes_ = 0;
  std::vector<std::pair<std::string, cl::Event>> events_;
  std::optional<detail::TuningPoint> tuning_;
};

// Throws InvalidArgument naming the node when a tensor has more elements than the kernels index with int.
void check_int_elements(const NodeView& node, const Dims& dims, const std::string& what);
// An axis attribute or axes value in [-rank, rank) as a non-negative axis.
std::int64_t normalize_axis(const NodeView& node, std::int64_t axis, std::size_t rank,
                            const std::string& what);
// The integer values of a Float32 constant input (axes, target shapes): each must be an integer.
std::vector<std::int64_t> integer_constant(const NodeView& node, std::size_t input);
// A boolean attribute as the IR writes it, "true" / "false", or an integer 1 / 0; `fallback` when absent,
// required when there is none.
bool boolean_attribute(const NodeView& node, const std::string& name, std::optional<bool> fallback);
// dims padded on the left with 1s to 4 axes (activations have at most 4).
std::vector<std::int64_t> dims4(const Dims& dims);

}  // namespace xnorcl::ops
