// What other ops need of FakeQuantize: its per-channel threshold rules (BinaryConvolution fuses a
// FakeQuantize that follows it into its packed output).
#pragma once

#include <vector>

#include "ops/op.hpp"
#include "xnorcl/packed.hpp"

namespace xnorcl::ops {

// One rule per channel of the node's input whose bit is OpenVINO's FakeQuantize(levels 2) value > 0
// (NaN gives 0 as there). Validates the range inputs.
std::vector<Threshold> fake_quantize_rules(const NodeView& node);

}  // namespace xnorcl::ops
