// Min, median and max of timing samples. Targets use medians: robust to the odd preempted repetition on a
// shared machine.
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
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return s;
}

}  // namespace xnorcl_bench
