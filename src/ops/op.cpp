// SPDX-License-Identifier: Apache-2.0
// NodeView's attribute and input checks, shared by every op unit so that their messages read alike.
#include "ops/op.hpp"

#include <algorithm>

#include "xnorcl/error.hpp"
#include "xnorcl/packed.hpp"

namespace xnorcl::ops {

namespace {

const char* kind_name(const AttributeValue& v) {
  switch (v.index()) {
    case 0:
      return "an integer";
    case 1:
      return "a number";
    case 2:
      return "a string";
    case 3:
      return "a list of integers";
    default:
      return "a list of numbers";
  }
}

}  // namespace

std::unique_ptr<DeviceStep> Op::plan_with_side(const Runtime& /*runtime*/, const NodeView& head,
                                               const std::vector<NodeView>& /*fused*/,
                                               const NodeView& side) const {
  // The planner asks can_fuse_side first; reaching this is a planner bug, not bad input.
  throw Error(head.where() + ": cannot compute " + side.where() + " in its step");
}

std::string NodeView::where() const {
  return "node '" + node->name + "' (" + node->op + ")";
}

bool NodeView::has(const std::string& name) const {
  return node->attributes.count(name) != 0;
}

namespace {

template <class T>
const T& attribute_as(const NodeView& v, const std::string& name, const char* wanted) {
  const auto it = v.node->attributes.find(name);
  if (it == v.node->attributes.end())
    throw InvalidArgument(v.where() + ": the attribute '" + name + "' is required");
  if (const T* value = std::get_if<T>(&it->second)) return *value;
  throw InvalidArgument(v.where() + ": the attribute '" + name + "' must be " + wanted + ", it is " +
                        kind_name(it->second));
}

}  // namespace

std::int64_t NodeView::integer(const std::string& name) const {
  return attribute_as<std::int64_t>(*this, name, "an integer");
}
std::int64_t NodeView::integer(const std::string& name, std::int64_t fallback) const {
  return has(name) ? integer(name) : fallback;
}
double NodeView::real(const std::string& name) const {
  const auto it = node->attributes.find(name);
  if (it != node->attributes.end()) {
    if (const std::int64_t* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  }
  return attribute_as<double>(*this, name, "a number");
}
double NodeView::real(const std::string& name, double fallback) const {
  return has(name) ? real(name) : fallback;
}
std::string NodeView::text(const std::string& name) const {
  return attribute_as<std::string>(*this, name, "a string");
}
std::string NodeView::text(const std::string& name, const std::string& fallback) const {
  return has(name) ? text(name) : fallback;
}
std::vector<std::int64_t> NodeView::integers(const std::string& name) const {
  return attribute_as<std::vector<std::int64_t>>(*this, name, "a list of integers");
}
std::vector<std::int64_t> NodeView::integers(const std::string& name,
                                             std::vector<std::int64_t> fallback) const {
  return has(name) ? integers(name) : fallback;
}

std::vector<double> NodeView::reals(const std::string& name, std::vector<double> fallback) const {
  if (!has(name)) return fallback;
  const AttributeValue& value = node->attributes.at(name);
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&value))
    return std::vector<double>(i->begin(), i->end());
  return attribute_as<std::vector<double>>(*this, name, "a list of numbers");
}

void NodeView::check_attributes(const std::vector<std::string>& known) const {
  for (const auto& [name, value] : node->attributes) {
    (void)value;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InvalidArgument(where() + ": unsupported attribute '" + name + "' (it takes " +
                            (list.empty() ? std::string("none") : list) + ")");
    }
  }
}

void NodeView::check_input_count(std::size_t min, std::size_t max) const {
  const std::size_t n = inputs.size();
  if (n < min || (max != static_cast<std::size_t>(-1) && n > max)) {
    const std::string wanted = min == max ? std::to_string(min)
                               : max == static_cast<std::size_t>(-1)
                                   ? "at least " + std::to_string(min)
                                   : std::to_string(min) + " to " + std::to_string(max);
    throw InvalidArgument(where() + ": takes " + wanted + " inputs, it has " + std::to_string(n));
  }
}

namespace {

void check_rank(const NodeView& v, std::size_t i, const Dims& dims, int rank) {
  if (rank >= 0 && dims.size() != static_cast<std::size_t>(rank)) {
    throw InvalidArgument(v.where() + ": input " + std::to_string(i) + " ('" + v.node->inputs[i] +
                          "') must be " + std::to_string(rank) + "-D, it is " + to_string(dims));
  }
}

}  // namespace

const TensorInfo& NodeView::activation(std::size_t i, ElementType type, int rank) const {
  if (constants[i]) {
    throw InvalidArgument(where() + ": input " + std::to_string(i) + " ('" + node->inputs[i] +
                          "') must be a computed tensor, not a constant");
  }
  if (inputs[i].type != type) {
    throw InvalidArgument(where() + ": input " + std::to_string(i) + " ('" + node->inputs[i] + "') must be " +
                          to_string(type) + ", it is " + to_string(inputs[i].type) +
                          (type == ElementType::Float32 ? " (packed bits feed only binary ops)"
                           : type == ElementType::Bits  ? " (binarize it with FakeQuantize levels 2 first)"
                                                        : " (a graph input of type u8)"));
  }
  check_rank(*this, i, inputs[i].dims, rank);
  return inputs[i];
}

const Constant& NodeView::constant(std::size_t i, ElementType type, int rank) const {
  if (!constants[i]) {
    throw InvalidArgument(where() + ": input " + std::to_string(i) + " ('" + node->inputs[i] +
                          "') must be a constant");
  }
  if (constants[i]->type != type) {
    throw InvalidArgument(where() + ": constant input " + std::to_string(i) + " ('" + node->inputs[i] +
                          "') must be " + to_string(type) + ", it is " + to_string(constants[i]->type));
  }
  check_rank(*this, i, constants[i]->dims, rank);
  return *constants[i];
}

bool per_channel_broadcast(const NodeView& v, std::size_t input) {
  const Constant* c = v.constants[input];
  const Dims& x = v.inputs[0].dims;
  if (!c || c->type != ElementType::Float32 || c->dims.size() > x.size() || x.size() < 2) return false;
  for (std::size_t i = 0; i < c->dims.size(); ++i) {
    const std::size_t axis = x.size() - c->dims.size() + i;
    if (c->dims[i] != 1 && !(axis == 1 && c->dims[i] == x[1])) return false;
  }
  return true;
}

std::optional<std::vector<float>> per_channel_values(const NodeView& v, std::size_t input) {
  if (!per_channel_broadcast(v, input)) return std::nullopt;
  const Constant* c = v.constants[input];
  if (c->values.size() == 1)
    return std::vector<float>(static_cast<std::size_t>(v.inputs[0].dims[1]), c->values[0]);
  return c->values;
}

std::int64_t product(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

Shape bits_shape(const Dims& dims) {
  Shape s{1, 1, 1, 1};
  for (std::size_t i = 0; i < dims.size() && i < 4; ++i) s[i] = dims[i];
  return s;
}

std::size_t tensor_bytes(const TensorInfo& info) {
  if (info.type == ElementType::UInt8) return static_cast<std::size_t>((product(info.dims) + 3) / 4) * 4;
  const std::int64_t n =
      info.type == ElementType::Bits ? packed_word_count(bits_shape(info.dims)) : product(info.dims);
  return static_cast<std::size_t>(n) * 4;
}

}  // namespace xnorcl::ops
