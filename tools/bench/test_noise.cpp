// SPDX-License-Identifier: Apache-2.0
// The bench's noise verdict on synthetic figures (no device, no timing).
#include <catch2/catch.hpp>

#include <map>

#include "bench.hpp"

using namespace xnorcl_bench;
using Catch::Contains;

namespace {

Stats series_of(std::vector<double> samples) {
  return summarize(std::move(samples));
}

}  // namespace

TEST_CASE("summarize: quartiles interpolated between ranks", "[noise]") {
  const Stats s = series_of({4, 1, 3, 2, 5});
  CHECK(s.min == 1);
  CHECK(s.q1 == 2);
  CHECK(s.median == 3);
  CHECK(s.q3 == 4);
  CHECK(s.max == 5);
  const Stats even = series_of({1, 2, 3, 4});
  CHECK(even.median == 2.5);
  CHECK(even.q1 == 1.75);
  CHECK(even.q3 == 3.25);
}

TEST_CASE("drift and quartile spread", "[noise]") {
  CHECK(drift(100, 115) == Approx(0.15));
  CHECK(drift(115, 100) == Approx(0.15));
  CHECK(drift(0, 100) == 0);
  CHECK(quartile_spread(series_of({1, 1, 1, 1, 10})) == 1);  // one preempted repetition: not a spread
  CHECK(quartile_spread(series_of({1, 1, 3, 3})) == Approx(2.5 / 1.0).epsilon(0.2));
  CHECK(quartile_spread(series_of({1, 2, 3})) == 0);  // too few repetitions to judge
}

TEST_CASE("a quiet run is judged and not noisy", "[noise]") {
  const PeakRates before{1000e9, 480e9}, after{1100e9, 450e9};  // 10% and 7%
  const NoiseVerdict v =
      judge_noise(before, after, {{"a device", series_of({1.0, 1.1, 1.2, 1.3, 1.9, 1.0, 1.05, 1.15})}});
  CHECK(v.judged);
  CHECK_FALSE(v.noisy);
  CHECK(v.reasons.empty());
  CHECK(v.peak_drift == Approx(0.1));
}

TEST_CASE("peaks that move more than 15% make the run noisy", "[noise]") {
  // The figures of a loaded machine: the FMA peak read 91 GFLOP/s in one measurement, 230 in the other.
  const NoiseVerdict v = judge_noise({1000e9, 230e9}, {990e9, 91e9}, {});
  CHECK(v.noisy);
  REQUIRE(v.reasons.size() == 1);
  CHECK_THAT(v.reasons[0], Contains("FMA peak moved 153%") && Contains("230.0 GFLOP/s before") &&
                               Contains("91.0 GFLOP/s after"));
  CHECK(judge_noise({1000e9, 100e9}, {1150e9, 100e9}, {}).noisy == false);  // exactly 15%: quiet
  CHECK(judge_noise({1000e9, 100e9}, {1160e9, 100e9}, {}).noisy);
}

TEST_CASE("a series whose middle half spans more than 2x makes the run noisy", "[noise]") {
  const PeakRates p{1000e9, 480e9};
  const NoiseVerdict v = judge_noise(p, p,
                                     {{"quiet wall", series_of({1, 1, 1, 1, 1, 1, 1, 1})},
                                      {"busy wall", series_of({1, 1, 3, 3, 1, 3, 1, 3})}});
  CHECK(v.noisy);
  REQUIRE(v.reasons.size() == 1);
  CHECK_THAT(v.reasons[0], Contains("busy wall") && Contains("spans 3.00x"));
  CHECK(v.worst_spread == Approx(3.0));
}

TEST_CASE("targets of a noisy run are not judged", "[noise]") {
  RunInfo run;
  run.options.reps = 20;
  LayerResult r;
  r.layer = default_layers()[4];  // resnet_64x56: targets against CLBlast and the peaks
  BinaryResult b;
  b.device = b.wall = b.gemm = series_of({1, 1, 1, 1});
  r.binary.push_back(b);
  r.floating.status = "ok";
  r.floating.wall = series_of({20, 20, 20, 20});
  run.layers.push_back(r);
  run.peak.binary_ops_per_s = 1000e9;
  run.peak.float_flops_per_s = 500e9;
  run.noise = judge_noise({1000e9, 500e9}, {1000e9, 500e9}, {});
  for (const Target& t : evaluate_targets(run))
    CHECK((t.status == "PASS" || t.status == "MISS" || t.status == "N/A"));
  run.noise = judge_noise({1000e9, 500e9}, {1000e9, 200e9}, {});
  int not_judged = 0;
  for (const Target& t : evaluate_targets(run)) {
    CHECK(t.status != "PASS");
    CHECK(t.status != "MISS");
    if (t.status == kNotJudged) {
      ++not_judged;
      CHECK_THAT(t.note, Contains("not judged (noisy run)"));
    }
  }
  CHECK(not_judged >= 3);
}

TEST_CASE("a stage above the peak fails a measuring run, not a --quick smoke run", "[noise]") {
  RunInfo run;
  CHECK_FALSE(invalid_run(run));
  run.invalid = {"resnet_64x56: GEMM stage at 103% of the xor-popcount peak"};
  CHECK(invalid_run(run));
  run.options.quick = true;  // short peak kernels often measure the peak too low
  CHECK_FALSE(invalid_run(run));
}

TEST_CASE("the tuned and the default network follow the float twin equally often", "[noise]") {
  // Two networks (no tuned steps): the binary network, then its twin, every repetition.
  for (int rep = 0; rep < 4; ++rep) REQUIRE(turn_order(rep, 2) == std::vector<std::size_t>{0, 1});
  // Three: the tuned (0) and the default (2) network swap places every other repetition.
  REQUIRE(turn_order(0, 3) == std::vector<std::size_t>{0, 1, 2});
  REQUIRE(turn_order(1, 3) == std::vector<std::size_t>{2, 1, 0});
  REQUIRE(turn_order(2, 3) == std::vector<std::size_t>{0, 1, 2});
  // Over the sequence of 20 repetitions, the network that runs right after the twin (index 1).
  std::map<std::size_t, int> after_twin;
  std::size_t previous = 99;
  for (int rep = 0; rep < 20; ++rep)
    for (std::size_t k : turn_order(rep, 3)) {
      if (previous == 1) ++after_twin[k];
      previous = k;
    }
  REQUIRE(after_twin[0] == 10);
  REQUIRE(after_twin[2] == 10);
}
