// SPDX-License-Identifier: Apache-2.0
// What other ops need of the BinaryConvolution op: a FakeQuantize whose bits only a convolution reads runs
// inside that convolution's step (fake_quantize.cpp), and asks the convolution what else the step absorbs.
#pragma once

#include <memory>
#include <vector>

#include "ops/op.hpp"

namespace xnorcl::ops {

const Op& binary_convolution_op();

// The step of `conv` and the nodes fused after it (and `side`, or nullptr). With input_thresholds, `conv`'s
// input is a FakeQuantize's bits and the step reads that FakeQuantize's float input instead: the packing
// binarizes each value as x > input_thresholds[c], as the FakeQuantize would have. Empty: the convolution's
// own input, as its op plans it.
std::unique_ptr<DeviceStep> plan_thresholded_convolution(const Runtime& runtime, const NodeView& conv,
                                                         const std::vector<NodeView>& fused,
                                                         const NodeView* side,
                                                         std::vector<float> input_thresholds);

}  // namespace xnorcl::ops
