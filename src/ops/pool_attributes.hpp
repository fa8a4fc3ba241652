// SPDX-License-Identifier: Apache-2.0
// OpenVINO's window attributes as graph ops spell them (kernel, strides, pads_begin, pads_end, auto_pad,
// rounding_type), shared by MaxPool, AvgPool and the ops that fuse a MaxPool.
#pragma once

#include <string>

#include "ops/op.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl::ops {

// A two-value attribute (y, x) within int; `fallback` when absent unless required.
std::array<int, 2> int_pair(const NodeView& node, const std::string& name, std::array<int, 2> fallback,
                            bool required = false);
// "explicit" (the default), "same_upper", "same_lower", "valid" (case-insensitive; OpenVINO also writes
// "notset" for explicit).
AutoPad parse_auto_pad(const NodeView& node, const std::string& attribute);
// kernel (required), strides (default 1, 1), pads_begin/pads_end (default 0, 0), auto_pad, rounding_type
// ("floor" default, "ceil").
PoolAttributes pool_attributes(const NodeView& node);

}  // namespace xnorcl::ops
