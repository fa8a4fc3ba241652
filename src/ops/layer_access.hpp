// SPDX-License-Identifier: Apache-2.0
// What the graph's steps read from the network layers they wrap: the tuning point of the layer's kernel (its
// work-group size, tuned per launch geometry like a graph op's), which the public layer classes keep private.
#pragma once

#include "runtime/tuning.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl::detail {

struct LayerAccess {
  static TuningPoint tuning_point(const ThresholdPack& layer);
  static TuningPoint tuning_point(const BinaryMaxPool& layer);
  static TuningPoint tuning_point(const MaxPool& layer);
  static TuningPoint tuning_point(const BinaryFullyConnected& layer);
};

}  // namespace xnorcl::detail
