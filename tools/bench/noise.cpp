// SPDX-License-Identifier: Apache-2.0
#include "bench.hpp"

#include <algorithm>
#include <cstdio>

namespace xnorcl_bench {

namespace {

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * fraction);
  return buf;
}

std::string factor(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x);
  return buf;
}

std::string rate(double per_s, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", per_s * 1e-9, unit);
  return buf;
}

}  // namespace

PeakRates rates_of(const Peak& peak) {
  return {peak.binary_ops_per_s, peak.float_flops_per_s};
}

double drift(double a, double b) {
  if (!(a > 0) || !(b > 0)) return 0;
  return std::max(a, b) / std::min(a, b) - 1;
}

double quartile_spread(const Stats& s) {
  if (s.count < 4 || !(s.q1 > 0)) return 0;
  return s.q3 / s.q1;
}

std::vector<std::size_t> turn_order(int rep, std::size_t networks) {
  std::vector<std::size_t> order(networks);
  for (std::size_t i = 0; i < networks; ++i) order[i] = i;
  if (networks == 3 && rep % 2 == 1) std::swap(order[0], order[2]);
  return order;
}

NoiseVerdict not_judged(const std::string& why) {
  NoiseVerdict v;
  v.why_not_judged = why;
  return v;
}

NoiseVerdict judge_noise(const PeakRates& before, const PeakRates& after,
                         const std::vector<TimedSeries>& series) {
  NoiseVerdict v;
  v.judged = true;
  const struct {
    const char* name;
    const char* unit;
    double before, after;
  } peaks[] = {{"xor-popcount peak", "G binMAC/s", before.binary_ops_per_s, after.binary_ops_per_s},
               {"FMA peak", "GFLOP/s", before.float_flops_per_s, after.float_flops_per_s}};
  for (const auto& p : peaks) {
    const double d = drift(p.before, p.after);
    v.peak_drift = std::max(v.peak_drift, d);
    if (d > kPeakDriftLimit) {
      v.reasons.push_back(std::string("the ") + p.name + " moved " + percent(d) + " during the run (" +
                          rate(p.before, p.unit) + " before, " + rate(p.after, p.unit) + " after; limit " +
                          percent(kPeakDriftLimit) + ")");
    }
  }
  for (const auto& s : series) {
    const double spread = quartile_spread(s.stats);
    v.worst_spread = std::max(v.worst_spread, spread);
    if (spread > kSpreadLimit) {
      char quartiles[64];
      std::snprintf(quartiles, sizeof quartiles, "%.3g and %.3g ms", s.stats.q1, s.stats.q3);
      v.reasons.push_back(s.name + ": the middle half of the repetitions spans " + factor(spread) +
                          " (quartiles " + quartiles + "; limit " + factor(kSpreadLimit) + ")");
    }
  }
  v.noisy = !v.reasons.empty();
  return v;
}

}  // namespace xnorcl_bench
