// SPDX-License-Identifier: Apache-2.0
// Transpose (OpenVINO Transpose-1) of a Float32 activation of 1 to 4 axes: output axis i is input axis
// order[i], so out.dims[i] = in.dims[order[i]]. The order is the second input, a Float32 constant (1-D)
// holding integer values, or, with a single input, the attribute `order`: exactly one of them. An empty
// order (the attribute {}) reverses the axes, as in OpenVINO; any other order must be a permutation of
// 0..rank-1. Packed bits are refused: their word layout depends on the channel axis.
//
// The device step first simplifies the permutation: axes of size 1 are dropped and input axes that stay
// neighbours in the output are merged (NHWC -> NCHW is a 3-D [N, HW, C] -> [N, C, HW]). What stays in
// row-major order is a byte copy (clEnqueueCopyBuffer, as Reshape); anything else is one launch of
// transpose_copy (transpose.cl), a work-item per output value reading the input through strides. The host
// reference walks the full, unsimplified order. Both copy values bitwise.
#include <algorithm>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

using Ints = std::vector<std::int64_t>;

std::string braces(const Ints& values) {
  std::string text;
  for (std::int64_t p : values) text += (text.empty() ? "" : ", ") + std::to_string(p);
  return "{" + text + "}";
}

// The node's permutation of its input's axes (an empty order resolved to the reversed axes), validated.
Ints permutation(const NodeView& v) {
  v.check_input_count(1, 2);
  const Dims& x = v.activation(0, ElementType::Float32).dims;
  if (v.inputs.size() == 2 && v.has("order"))
    throw InvalidArgument(v.where() + ": give the order as input 1 or as the attribute 'order', not both");
  if (v.inputs.size() == 1 && !v.has("order"))
    throw InvalidArgument(v.where() + ": the order is required, as input 1 or as the attribute 'order'");
  const Ints given = v.inputs.size() == 2 ? integer_constant(v, 1) : v.integers("order");
  const auto rank = static_cast<std::int64_t>(x.size());
  if (given.empty()) {
    Ints reversed;
    for (std::int64_t k = rank - 1; k >= 0; --k) reversed.push_back(k);
    return reversed;
  }
  const std::string what = v.where() + ": order " + braces(given) + " for input " + to_string(x) +
                           " is not a permutation of 0.." + std::to_string(rank - 1);
  if (static_cast<std::int64_t>(given.size()) != rank)
    throw InvalidArgument(what + ": it has " + std::to_string(given.size()) + " values, the input " +
                          std::to_string(rank) + " axes");
  std::vector<bool> seen(x.size(), false);
  for (std::int64_t p : given) {
    if (p < 0 || p >= rank)
      throw InvalidArgument(what + ": axis " + std::to_string(p) + " is outside 0.." +
                            std::to_string(rank - 1));
    if (seen[static_cast<std::size_t>(p)])
      throw InvalidArgument(what + ": axis " + std::to_string(p) + " appears more than once");
    seen[static_cast<std::size_t>(p)] = true;
  }
  return given;
}

Dims permuted(const Dims& x, const Ints& order) {
  Dims out;
  for (std::int64_t p : order) out.push_back(x[static_cast<std::size_t>(p)]);
  return out;
}

// The launch of transpose_copy: output dims (4, padded on the left with 1s) and, per output axis, the stride
// of the input axis it reads (in values). rank 0 or 1 after simplification: a plain copy.
struct Launch {
  std::size_t rank = 0;  // of the simplified permutation
  Ints out_dims;         // 4 values
  Ints strides;          // 4 values
};

// Drops size-1 axes, then merges input axes that follow one another in the order too.
Launch simplify(const Dims& x, const Ints& order) {
  // The kept input axes, renumbered in input order.
  std::vector<std::int64_t> renumber(x.size(), -1);
  Dims kept;
  for (std::size_t k = 0; k < x.size(); ++k)
    if (x[k] > 1) {
      renumber[k] = static_cast<std::int64_t>(kept.size());
      kept.push_back(x[k]);
    }
  Ints perm;
  for (std::int64_t p : order)
    if (renumber[static_cast<std::size_t>(p)] >= 0) perm.push_back(renumber[static_cast<std::size_t>(p)]);
  // Runs of consecutive input axes in the output order become one axis each.
  std::vector<Ints> groups;  // in output order, each a run of input axes
  for (std::int64_t p : perm) {
    if (!groups.empty() && groups.back().back() + 1 == p)
      groups.back().push_back(p);
    else
      groups.push_back({p});
  }
  // The groups' input order, their sizes and row-major strides there.
  std::vector<std::size_t> by_input(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) by_input[g] = g;
  std::sort(by_input.begin(), by_input.end(),
            [&](std::size_t a, std::size_t b) { return groups[a].front() < groups[b].front(); });
  std::vector<std::int64_t> size(groups.size(), 1), stride(groups.size(), 1);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::int64_t p : groups[g]) size[g] *= kept[static_cast<std::size_t>(p)];
  std::int64_t s = 1;
  for (std::size_t i = groups.size(); i-- > 0;) {
    stride[by_input[i]] = s;
    s *= size[by_input[i]];
  }
  Launch l;
  l.rank = groups.size();
  l.out_dims.assign(4 - groups.size(), 1);
  l.strides.assign(4 - groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    l.out_dims.push_back(size[g]);
    l.strides.push_back(stride[g]);
  }
  return l;
}

class TransposeStep final : public LinearStep {
 public:
  TransposeStep(const Runtime& rt, const NodeView& v, const Ints& order, const Launch& l)
      : LinearStep(rt, "transpose.cl", description(v, order, l),
                   l.rank > 1 ? std::optional<std::string>(description(v, order, l)) : std::nullopt),
        l_(l),
        values_(product(v.inputs[0].dims)),
        kernel_(l.rank > 1 ? kernel("transpose_copy") : cl::Kernel()) {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    if (l_.rank <= 1) {
      // Row-major order unchanged: the bytes as they are.
      return detail::cl_call(
          [&] {
            cl::Event e;
            runtime().state()->queue.enqueueCopyBuffer(*in[0], *out[0], 0, 0,
                                                       static_cast<std::size_t>(values_) * 4,
                                                       wait.empty() ? nullptr : &wait, &e);
            return e;
          },
          "enqueueing the copy of a Transpose");
    }
    detail::set_args(kernel_, "transpose_copy", *in[0], *out[0], int_arg(l_.out_dims[1]),
                     int_arg(l_.out_dims[2]), int_arg(l_.out_dims[3]), int_arg(l_.strides[0]),
                     int_arg(l_.strides[1]), int_arg(l_.strides[2]), int_arg(l_.strides[3]),
                     int_arg(values_));
    return launch(kernel_, "transpose_copy", static_cast<std::size_t>(values_), wait);
  }

 private:
  static std::string description(const NodeView& v, const Ints& order, const Launch& l) {
    const Dims& x = v.inputs[0].dims;
    const std::string what = braces(order) + " " + to_string(x) + " -> " + to_string(permuted(x, order));
    if (l.rank <= 1)
      return "copy " + std::to_string(product(x) * 4) + " bytes (transpose " + what + " keeps the order)";
    Dims dims(l.out_dims.end() - static_cast<std::ptrdiff_t>(l.rank), l.out_dims.end());
    return "transpose_copy " + what + " (as " + to_string(dims) + ")";
  }

  Launch l_;
  std::int64_t values_;
  cl::Kernel kernel_;
};

class TransposeOp final : public Op {
 public:
  const char* name() const override { return "Transpose"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"order"});
    const Ints order = permutation(v);  // checks the inputs first
    return {{permuted(v.inputs[0].dims, order), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Ints order = permutation(v);
    const Dims& x = in[0]->dims;
    const std::size_t rank = x.size();
    Ints in_stride(rank, 1);
    for (std::size_t k = rank - 1; k-- > 0;) in_stride[k] = in_stride[k + 1] * x[k + 1];
    Tensor out;
    out.dims = permuted(x, order);
    out.values.resize(in[0]->values.size());
    Ints index(rank, 0);  // of the output value, row-major
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      std::int64_t source = 0;
      for (std::size_t k = 0; k < rank; ++k)
        source += index[k] * in_stride[static_cast<std::size_t>(order[k])];
      out.values[i] = in[0]->values[static_cast<std::size_t>(source)];
      for (std::size_t k = rank; k-- > 0;) {
        if (++index[k] < out.dims[k]) break;
        index[k] = 0;
      }
    }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    const Ints order = permutation(v);
    return std::make_unique<TransposeStep>(rt, v, order, simplify(v.inputs[0].dims, order));
  }
};

}  // namespace

const Op& transpose_op() {
  static const TransposeOp op;
  return op;
}

}  // namespace xnorcl::ops
