// SPDX-License-Identifier: Apache-2.0
// Min, quartiles, median and max of timing samples. Targets use medians: robust to the odd preempted
// repetition on a shared machine.
#include <algorithm>

#include "bench.hpp"

namespace xnorcl_bench {

Stats summarize(std::vector<double> samples) {
  Stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  // Linear interpolation between the closest ranks, as numpy's default percentile.
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(n - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, n - 1);
    return samples[lo] + (pos - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  s.median = quantile(0.5);
  s.q1 = quantile(0.25);
  s.q3 = quantile(0.75);
  return s;
}

}  // namespace xnorcl_bench
