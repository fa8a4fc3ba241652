// SPDX-License-Identifier: Apache-2.0
// Soak: a long mix of random small layers on both variants must not grow the process's memory.
//
// After a warm-up (PoCL compiles work-group functions, allocators reach their steady state), every further
// run, enqueue, object construction and refused call must give back what it took: the resident set size
// (VmRSS of /proc/self/status) may grow by less than the limit over the measured runs. Every result is
// compared bitwise with the reference, so the soak also checks that nothing drifts.
//
// Usage: xnorcl_soak [warm-up runs] [measured runs] [limit KiB]   (defaults 1000 10000 2048)
// Exit status: 0 pass, 1 fail, 77 no OpenCL device where XNORCL_EXPECT_NO_DEVICE=1.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "conv_case.hpp"

namespace xnorcl::test {
namespace {

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// One layer of the mix: its data and reference, and the object currently serving it (replaced now and then
// so that construction and destruction are soaked too).
struct Slot {
  ConvCase c;
  std::vector<float> want;
  Variant variant = Variant::Global;
  bool chunked = false;
  std::unique_ptr<BinaryConvolution> conv;
};

class Soak {
 public:
  Soak() {
    for (Variant v : {Variant::Local, Variant::Global}) {
      RuntimeOptions o;
      o.variant = v;
      runtimes_.push_back(Runtime::create(o));
    }
    // Small random layers (every kind of input, pad value and padding the generator makes), alternating
    // variants.
    for (int i = 0; i < 16; ++i) {
      Slot s;
      s.c = random_case(90000 + i, 5e5);
      s.want = s.c.reference();
      s.variant = i % 2 ? Variant::Global : Variant::Local;
      s.chunked = i % 4 >= 2;
      slots_.push_back(std::move(s));
    }
  }

  // One step of the mix; returns false on a wrong result.
  bool step(std::uint64_t i) {
    Slot& s = slots_[rng_.uniform(0, static_cast<int>(slots_.size()) - 1)];
    Runtime& rt = runtimes_[s.variant == Variant::Local ? 0 : 1];
    if (!s.conv || rng_.chance(10)) {
      // Some slots split their layer into many chunks (the constructor's XNORCL_MAX_CHUNK_BYTES test hook).
      if (s.chunked) ::setenv("XNORCL_MAX_CHUNK_BYTES", "512", 1);
      s.conv = std::make_unique<BinaryConvolution>(rt, s.c.attributes, s.c.input, s.c.make_filter());
      ::unsetenv("XNORCL_MAX_CHUNK_BYTES");
    }
    BinaryConvolution& conv = *s.conv;
    if (i % 50 == 0) refused_calls(conv);
    std::vector<float> y;
    const int how = rng_.uniform(0, 2);
    if (how == 0 || s.c.uint8_input) {
      y = s.c.uint8_input ? conv.run(s.c.x_u8.data()) : conv.run(s.c.x_f32.data());
    } else if (how == 1) {
      y.assign(s.want.size(), 0.0f);
      conv.run(s.c.x_f32.data(), y.data());
    } else {
      const std::size_t out_bytes = s.want.size() * sizeof(float);
      cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, s.c.x_f32.size() * sizeof(float),
                    s.c.x_f32.data());
      cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, out_bytes);
      std::vector<cl::Event> done{conv.enqueue(in, out)};
      y.resize(s.want.size());
      rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, y.data(), &done);
    }
    if (bitwise_difference(y, s.want, conv.output_shape()).empty()) return true;
    std::fprintf(stderr, "soak: wrong result at run %llu: %s\n%s\n", static_cast<unsigned long long>(i),
                 describe(s.c).c_str(), bitwise_difference(y, s.want, conv.output_shape()).c_str());
    return false;
  }

 private:
  // Errors must not leak either: refused calls now and then.
  void refused_calls(BinaryConvolution& conv) {
    try {
      conv.run(static_cast<const float*>(nullptr), nullptr);
    } catch (const InvalidArgument&) {
      ++refused_;
    }
    try {
      conv.enqueue(cl::Buffer(), cl::Buffer());
    } catch (const InvalidArgument&) {
      ++refused_;
    }
  }

 public:
  long refused() const { return refused_; }

 private:
  std::vector<Runtime> runtimes_;
  std::vector<Slot> slots_;
  Rng rng_{20240601};
  long refused_ = 0;
};

int soak_main(int argc, char** argv) {
  const long warmup = argc > 1 ? std::atol(argv[1]) : 1000;
  const long runs = argc > 2 ? std::atol(argv[2]) : 10000;
  const long limit_kib = argc > 3 ? std::atol(argv[3]) : 2048;
  std::unique_ptr<Soak> soak;
  try {
    soak = std::make_unique<Soak>();
  } catch (const DeviceNotFound& e) {
    const char* expect = std::getenv("XNORCL_EXPECT_NO_DEVICE");
    std::fprintf(stderr, "soak: no OpenCL device: %s\n", e.what());
    return expect && std::string(expect) == "1" ? 77 : 1;
  }
  const long rss_start = rss_kib();
  std::uint64_t i = 0;
  for (; i < std::uint64_t(warmup); ++i) {
    if (!soak->step(i)) return 1;
  }
  const long rss_warm = rss_kib();
  const auto start = std::chrono::steady_clock::now();
  for (; i < std::uint64_t(warmup + runs); ++i) {
    if (!soak->step(i)) return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long rss_end = rss_kib();
  const long growth = rss_end - rss_warm;
  std::printf(
      "soak: %ld warm-up runs, then %ld runs in %.1f s (%.0f runs/s), every result bitwise equal; "
      "%ld calls refused as they must be\n",
      warmup, runs, seconds, double(runs) / seconds, soak->refused());
  std::printf(
      "soak: VmRSS start %ld KiB, after warm-up %ld KiB, end %ld KiB: growth %ld KiB (limit %ld KiB)\n",
      rss_start, rss_warm, rss_end, growth, limit_kib);
  if (rss_start < 0 || growth >= limit_kib) {
    std::printf("soak: FAILED: resident memory grew by %ld KiB\n", growth);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace xnorcl::test

int main(int argc, char** argv) {
  try {
    return xnorcl::test::soak_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 1;
  }
}
