// SPDX-License-Identifier: Apache-2.0
// The thread-safety promise of xnorcl/runtime.hpp: one Runtime shared by many threads, each BinaryConvolution
// used by one thread at a time.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "device_support.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;

namespace {

struct Layer {
  Shape x_shape;
  Filter filter;
  BinaryConvolution::Attributes attributes;
  std::vector<float> x;
  std::vector<float> expected;
};

Layer random_layer(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const Shape xs{pick(1, 2), pick(1, 40), pick(4, 12), pick(4, 12)};
  const Shape fs{pick(1, 40), xs[1], pick(1, 3), pick(1, 3)};
  BinaryConvolution::Attributes a;
  a.pads_begin = {pick(0, 1), pick(0, 1)};
  a.pads_end = {pick(0, 1), pick(0, 1)};
  a.strides = {pick(1, 2), pick(1, 2)};
  const float pad_values[] = {-1.0f, 0.0f, 1.0f, 0.5f};
  a.pad_value = pad_values[pick(0, 3)];
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>((fs[0] * fs[1] * fs[2] * fs[3] + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(pick(0, 255));
  std::vector<float> x(static_cast<std::size_t>(xs[0] * xs[1] * xs[2] * xs[3]));
  for (auto& v : x) v = static_cast<float>(pick(0, 1));
  Filter f = Filter::from_packed(bytes.data(), bytes.size(), fs, BitOrder::MsbFirst);
  auto expected = reference_binary_convolution(x.data(), xs, f, a);
  return {xs, std::move(f), a, std::move(x), std::move(expected)};
}

void many_threads_share_one_runtime(Variant variant) {
  Runtime& runtime = xnorcl::test::runtime_for(variant);
  constexpr int kThreads = 4, kRuns = 50;
  std::mt19937 rng(4242);
  std::vector<Layer> layers;
  for (int t = 0; t < kThreads; ++t) layers.push_back(random_layer(rng));

  std::atomic<int> matches{0};
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        const Layer& layer = layers[t];
        BinaryConvolution conv(runtime, layer.attributes, layer.x_shape, layer.filter);
        for (int r = 0; r < kRuns; ++r) {
          const auto y = conv.run(layer.x.data());
          if (y.size() == layer.expected.size() &&
              std::memcmp(y.data(), layer.expected.data(), y.size() * sizeof(float)) == 0) {
            ++matches;
          } else {
            failures[t] =
                "thread " + std::to_string(t) + " run " + std::to_string(r) + " differs from the reference";
          }
        }
        if (conv.plan().variant != variant) failures[t] = "wrong variant";
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) CHECK(f.empty());
  REQUIRE(matches == kThreads * kRuns);
}

}  // namespace

TEST_CASE("4 threads x 50 runs on one shared Runtime match the reference (Local)", "[local][threads]") {
  many_threads_share_one_runtime(Variant::Local);
}

TEST_CASE("4 threads x 50 runs on one shared Runtime match the reference (Global)", "[global][threads]") {
  many_threads_share_one_runtime(Variant::Global);
}

namespace {

// A layer of the given kind (0..5) on its own H x H data, its host reference computed once: the function
// returned makes the layer (creating and releasing its kernels), runs it and compares. Every kind is from
// another program.
std::function<bool()> mixed_layer(Runtime& rt, int kind, int t, std::int64_t H) {
  const std::int64_t C = 16 + t;
  const Shape s{1, C, H, H};
  std::vector<float> x(static_cast<std::size_t>(C * H * H));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 7 + t) % 5) - 2.0f;
  const std::vector<std::uint32_t> words = pack_activations(x.data(), s, {});
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(16 * C * H * H / 8));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint8_t>(i * 37 + t);
  const PoolAttributes pool;
  switch (kind) {
    case 0:
      return [&rt, s, x, words] { return ThresholdPack(rt, s, {}).run(x.data()) == words; };
    case 1:
      return [&rt, s, x, pool, want = reference_maxpool(x.data(), s, pool)] {
        return MaxPool(rt, pool, s).run(x.data()) == want;
      };
    case 2:
      return [&rt, s, words, pool, want = reference_binary_maxpool(words.data(), s, pool)] {
        return BinaryMaxPool(rt, pool, s).run(words.data()) == want;
      };
    case 3: {
      const Filter f = Filter::from_packed(bits.data(), bits.size(), Shape{5, C, H, H}, BitOrder::MsbFirst);
      return [&rt, s, words, f, want = reference_binary_fully_connected(words.data(), s, f)] {
        return BinaryFullyConnected(rt, s, f).run(words.data()) == want;
      };
    }
    case 4: {  // packed output: binary_fc, then threshold_pack
      const Filter f = Filter::from_packed(bits.data(), bits.size(), Shape{5, C, H, H}, BitOrder::MsbFirst);
      const std::vector<Threshold> rules = greater_than(std::vector<float>(5, 0.5f));
      const std::vector<float> y = reference_binary_fully_connected(words.data(), s, f);
      return [&rt, s, words, f, rules, want = pack_activations(y.data(), Shape{1, 5, 1, 1}, rules)] {
        return BinaryFullyConnected(rt, s, f, rules).run_packed(words.data()) == want;
      };
    }
    default: {
      const Filter f = Filter::from_packed(bits.data(), bits.size(), Shape{16, C, 3, 3}, BitOrder::MsbFirst);
      const BinaryConvolution::Attributes a;
      return [&rt, s, x, f, a, want = reference_binary_convolution(x.data(), s, f, a)] {
        return BinaryConvolution(rt, a, s, f).run(x.data()) == want;
      };
    }
  }
}

}  // namespace

// The first runs of a Runtime whose cache is empty. On drivers that add code to a program at its first launch
// (PoCL) the binaries are stored after the first blocking run, while other threads launch. Serialising a
// program compiles a generic version of each of its kernels and puts it in front of PoCL's list of loaded
// kernels; a launch of that kernel already in flight then releases that entry instead of its own, and PoCL
// aborts (pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'). So that a launch is in flight
// whenever the store starts on a program: 12 threads start together, their layers are 256 x 256 (each kernel
// runs for milliseconds), and their kinds are the ones whose kernel is the first of its program (threshold
// pack, binary max-pool, binary fully connected, and the GEMM of the convolution). Without the launch gate
// (runtime/launch_gate.hpp) this aborted 9 of 30 processes on a 2-core machine (the former 8 threads on
// 12 x 12 layers: 0 of 48). Run in processes of their own (tests/process_tests.cmake), each with an empty
// XNORCL_CACHE_DIR and PoCL's kernel cache off, so that every first launch compiles.
TEST_CASE("12 threads on one Runtime with an empty program cache match the references and fill the cache",
          "[.cold_threads]") {
  namespace fs = std::filesystem;
  const char* dir = std::getenv("XNORCL_CACHE_DIR");
  REQUIRE(dir != nullptr);
  REQUIRE((!fs::exists(dir) || fs::is_empty(dir)));
  RuntimeOptions options;
  options.variant = Variant::Global;
  std::atomic<int> stored{0};
  options.log = [&stored](const std::string& m) { stored += m.rfind("cache stored", 0) == 0; };
  std::optional<Runtime> created;
  try {
    created.emplace(Runtime::create(options));
  } catch (const DeviceNotFound&) {
    xnorcl::test::runtime_for(Variant::Global);  // skips or fails, as every device test does
  }
  REQUIRE(created);
  // Each thread makes and runs layers of its kind kRuns times and until every program is stored (at most
  // 200 runs): the stores happen while the others launch.
  // im2col_pack and xnor_gemm, every program of the layer and graph-op table, and the float-output GEMM's
  // where it has one.
  const int kPrograms =
      2 + static_cast<int>(detail::network_programs().size()) + xnorcl::test::float_layer_programs(*created);
  constexpr int kThreads = 12, kRuns = 10;
  constexpr std::int64_t kSize = 256;
  // ThresholdPack, BinaryMaxPool, BinaryFullyConnected, BinaryConvolution.
  constexpr int kKinds[] = {0, 2, 3, 5};
  std::vector<std::string> failures(kThreads);
  std::vector<int> runs(kThreads, 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::function<bool()> run_matches;
      try {
        run_matches = mixed_layer(*created, kKinds[t % std::size(kKinds)], t, kSize);
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
      ++ready;  // the first runs start together
      while (ready < kThreads) std::this_thread::yield();
      if (!run_matches) return;
      try {
        for (int r = 0; r < 200 && (r < kRuns || stored < kPrograms); ++r, ++runs[t]) {
          if (!run_matches()) {
            failures[t] = "thread " + std::to_string(t) + " run " + std::to_string(r) + " differs";
            return;
          }
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << runs[t] << " runs");
    CHECK(failures[t].empty());
    CHECK(runs[t] >= kRuns);
  }
  CHECK(stored == kPrograms);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.path().extension() == ".clbin";
  CHECK(static_cast<int>(entries) == kPrograms);
}
