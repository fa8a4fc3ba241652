// SPDX-License-Identifier: Apache-2.0
// The interface between the graph and its operations. Each op is one unit in src/ops/ (its kernel file of the
// same name in cl_kernels/): shape inference and validation, the host reference, and a plan that builds its
// device launcher. The graph executor knows ops only through this interface and the registry (registry.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/tuning.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/runtime.hpp"

namespace xnorcl::ops {

// A node with its inputs resolved: every input's type and dims, and the Constant behind it where the input
// is a constant (nullptr for activations).
struct NodeView {
  const Node* node = nullptr;
  std::vector<TensorInfo> inputs;
  std::vector<const Constant*> constants;

  // "node 'conv3' (BinaryConvolution)": the prefix of every message about this node.
  std::string where() const;

  // Attribute access; a missing required attribute, a value of another kind or an unknown attribute name
  // (check_attributes) throws InvalidArgument naming the node.
  bool has(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  std::int64_t integer(const std::string& name, std::int64_t fallback) const;
  double real(const std::string& name) const;  // an integer attribute is accepted too
  double real(const std::string& name, double fallback) const;
  std::string text(const std::string& name) const;
  std::string text(const std::string& name, const std::string& fallback) const;
  std::vector<std::int64_t> integers(const std::string& name) const;
  std::vector<std::int64_t> integers(const std::string& name, std::vector<std::int64_t> fallback) const;
  // A list of reals (integers accepted too).
  std::vector<double> reals(const std::string& name, std::vector<double> fallback) const;
  void check_attributes(const std::vector<std::string>& known) const;

  // Input checks: the node has between min and max inputs (max -1: no limit); input i is an activation /
  // a constant of the given type and rank (rank -1: any).
  void check_input_count(std::size_t min, std::size_t max) const;
  const TensorInfo& activation(std::size_t i, ElementType type, int rank = -1) const;
  const Constant& constant(std::size_t i, ElementType type, int rank = -1) const;
};

// One planned step on the device: the kernels of one node, or of a node and the nodes fused into it.
class DeviceStep {
 public:
  virtual ~DeviceStep() = default;
  // Enqueues on the runtime's queue. `inputs` are the step's activation inputs in order (the head node's
  // activation inputs, then each fused node's inputs other than the tensor it takes from the chain), each
  // a buffer of the tensor's bytes; `outputs` the last node's outputs. Returns the event of the last kernel.
  virtual cl::Event enqueue(const std::vector<const cl::Buffer*>& inputs,
                            const std::vector<const cl::Buffer*>& outputs,
                            const std::vector<cl::Event>& wait) = 0;
  // Device time per kernel of the last enqueue (waits for its events); empty without profiling.
  virtual std::vector<StageTime> stage_times() const = 0;
  virtual std::size_t weight_bytes() const = 0;  // device memory it holds (weights, tables, scratch)
  virtual std::string describe() const = 0;      // kernels and sizes, for GraphPlan
  // What the step's kernels can be tuned on (runtime/tuning.hpp): one point per tunable kernel, or none.
  virtual std::vector<detail::TuningPoint> tuning_points() const { return {}; }
};

class Op {
 public:
  virtual ~Op() = default;
  virtual const char* name() const = 0;
  // Validates the node's attributes and inputs and returns its outputs' types and dims.
  virtual std::vector<TensorInfo> infer(const NodeView& node) const = 0;
  // Host reference. `inputs` holds one entry per node input: the tensor for activations, nullptr where the
  // input is a constant (read it from node.constants). Binary results exact; float results computed in
  // double and rounded once to float.
  virtual std::vector<Tensor> reference(const NodeView& node,
                                        const std::vector<const Tensor*>& inputs) const = 0;
  // Whether this node's step can also compute `next`, the single consumer of the chain's last output (given
  // the nodes already fused into it, in order). Fusion never changes bits; a float epilogue may round once
  // where the separate ops round twice (an fma for a Multiply and an Add), within the float tolerance.
  virtual bool can_fuse(const NodeView& /*head*/, const std::vector<NodeView>& /*fused*/,
                        const NodeView& /*next*/) const {
    return false;
  }
  // Whether this node's step can also compute `side`, another consumer of the chain's last output (which
  // the step still writes for its other consumers), as a second output of the same launch on `runtime`: a
  // binarization whose bits the epilogue packs from the values it stores. The device matters here, unlike
  // for can_fuse: such a fusion pays only where the epilogue can assemble whole words cheaply.
  virtual bool can_fuse_side(const Runtime& /*runtime*/, const NodeView& /*head*/,
                             const std::vector<NodeView>& /*fused*/, const NodeView& /*side*/) const {
    return false;
  }
  // Builds the device step of `head` and the nodes fused into it (kernels, weights uploaded).
  virtual std::unique_ptr<DeviceStep> plan(const Runtime& runtime, const NodeView& head,
                                           const std::vector<NodeView>& fused) const = 0;
  // The same with a side node (can_fuse_side): the step's outputs are the chain's last output, then the
  // side node's.
  virtual std::unique_ptr<DeviceStep> plan_with_side(const Runtime& runtime, const NodeView& head,
                                                     const std::vector<NodeView>& fused,
                                                     const NodeView& side) const;
};

// The registry: every op by name (nullptr for an unknown name), and the names in order.
const Op* find_op(const std::string& name);
std::vector<std::string> op_names();

// Shared helpers for op units.
// The values of input `input` as one per channel of input 0 (axis 1), where that input is a Float32
// constant that numpy-broadcasts that way: a single value (every axis 1) or C values on the axis that
// right-aligns with axis 1. nullopt otherwise.
std::optional<std::vector<float>> per_channel_values(const NodeView& node, std::size_t input);
// Whether per_channel_values would succeed, without expanding a single value to every channel (validation
// must not allocate what a hostile file's dims claim).
bool per_channel_broadcast(const NodeView& node, std::size_t input);
std::int64_t product(const Dims& dims);
std::size_t tensor_bytes(const TensorInfo& info);  // float32 values or packed words
// A Bits tensor's 4-D logical shape ([N, C] is [N, C, 1, 1]).
Shape bits_shape(const Dims& dims);

}  // namespace xnorcl::ops
