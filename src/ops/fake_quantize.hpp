// SPDX-License-Identifier: Apache-2.0
// What other ops need of FakeQuantize: its per-channel threshold rules (BinaryConvolution fuses a
// FakeQuantize that follows it into its packed output).
#pragma once

#include <functional>
#include <vector>

#include "ops/op.hpp"
#include "xnorcl/packed.hpp"

namespace xnorcl::ops {

// One rule per channel of the node's input whose bit is OpenVINO's FakeQuantize(levels 2) value > 0
// (NaN gives 0 as there). Validates the range inputs.
std::vector<Threshold> fake_quantize_rules(const NodeView& node);
// The same bits for an input y that first went through a per-channel Multiply by scale[c] and an Add of
// bias[c] (each rounded to float, as the graph's ops do): one rule per channel on y itself. Exact: the bit
// is monotone in y (non-decreasing for scale > 0, non-increasing for scale < 0, constant for scale 0), so it
// is one threshold. Exact for finite y (a convolution's output; at +-inf a zero scale would give NaN).
std::vector<Threshold> fake_quantize_rules_after(const NodeView& node, const std::vector<float>& scale,
                                                 const std::vector<float>& bias);
// The rule whose bit is bit(x) for every non-NaN x, for a bit that is a monotone function of x (found by
// bisection over the float order); NaN gives 0.
Threshold monotone_rule(const std::function<bool(float)>& bit);

}  // namespace xnorcl::ops
