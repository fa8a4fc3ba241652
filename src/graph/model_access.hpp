// SPDX-License-Identifier: Apache-2.0
// The tuner's view of a Model: each step's tuning points and its device time in the last run.
#pragma once

#include <vector>

#include "runtime/tuning.hpp"
#include "xnorcl/graph.hpp"

namespace xnorcl::detail {

struct ModelAccess {
  static std::vector<std::vector<TuningPoint>> tuning_points(const Model& model);  // per step
  static std::vector<double> step_milliseconds(const Model& model);                // per step, last run
};

// True on a thread while it runs tune(): the Models it builds do not tune on first use themselves.
bool tuning_in_progress();

}  // namespace xnorcl::detail
