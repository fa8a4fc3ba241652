// SPDX-License-Identifier: Apache-2.0
// The program-binary cache: hits after a first build, and damaged entries ignored and rebuilt.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>

#include "device_support.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/xnorcl.hpp"

namespace fs = std::filesystem;
using namespace xnorcl;

namespace {

struct CacheRun {
  std::vector<std::string> messages;
  int count(const std::string& what) const {
    int n = 0;
    for (const auto& m : messages) n += m.find(what) != std::string::npos;
    return n;
  }
};

CacheRun create_with_cache(const fs::path& dir) {
  xnorcl::test::runtime_for(Variant::Global);  // fails the test, as every device test does, without a device
  CacheRun run;
  RuntimeOptions o;
  o.cache_dir = dir.string();
  o.variant = Variant::Global;
  o.log = [&run](const std::string& m) { run.messages.push_back(m); };
  Runtime::create(o);
  return run;
}

fs::path fresh_directory() {
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("xnorcl-cache-test-" + std::to_string(rd()));
  fs::remove_all(dir);
  return dir;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// im2col_pack, xnor_gemm (which folds the pad correction into its stores) and one program per file of the
// network layers and graph ops (threshold_pack, binary_maxpool, binary_fc, elementwise, ...).
const int kPrograms = 2 + static_cast<int>(detail::network_programs().size());

}  // namespace

TEST_CASE("program cache: empty directory builds and stores, the next runtime loads every program",
          "[cache]") {
  const fs::path dir = fresh_directory();
  const CacheRun cold = create_with_cache(dir);
  CHECK(cold.count("from source") == kPrograms);
  CHECK(cold.count("cache stored") == kPrograms);
  REQUIRE(cold.count("compiling the OpenCL kernels") == 1);  // said once, before the first build
  const auto first_with = [&](const char* what) {
    return std::find_if(cold.messages.begin(), cold.messages.end(),
                        [&](const std::string& m) { return m.find(what) != std::string::npos; });
  };
  CHECK(first_with("compiling the OpenCL kernels for ") < first_with("from source"));
  REQUIRE(static_cast<int>(entries(dir).size()) == kPrograms);
  const CacheRun warm = create_with_cache(dir);
  CHECK(warm.count("cache hit") == kPrograms);
  CHECK(warm.count("from source") == 0);
  CHECK(warm.count("compiling the OpenCL kernels") == 0);
  fs::remove_all(dir);
}

TEST_CASE("program cache: corrupt, truncated and stale entries are ignored and rebuilt", "[cache]") {
  const fs::path dir = fresh_directory();
  create_with_cache(dir);
  const auto files = entries(dir);
  REQUIRE(static_cast<int>(files.size()) == kPrograms);

  SECTION("a flipped byte in the binary fails the checksum") {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-10, std::ios::end);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  SECTION("a truncated entry") {
    fs::resize_file(files[0], fs::file_size(files[0]) / 2);
  }
  SECTION("an entry of another library version or driver is stale") {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16);  // inside the key text: "xnorcl <version>"
    f.write("#", 1);
  }
  SECTION("garbage instead of an entry") {
    std::ofstream f(files[0], std::ios::binary | std::ios::trunc);
    f << "not a program binary";
  }
  const CacheRun again = create_with_cache(dir);
  CHECK(again.count("ignored") == 1);
  CHECK(again.count("from source") == 1);
  CHECK(again.count("cache hit") == kPrograms - 1);
  // The rebuilt entry replaced the damaged one: everything hits now.
  const CacheRun healed = create_with_cache(dir);
  CHECK(healed.count("cache hit") == kPrograms);
  fs::remove_all(dir);
}

namespace {

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs create_with_cache, but gives up after a minute instead of hanging the test: a reader blocked on a FIFO
// is released by opening the FIFO for writing.
CacheRun create_within_a_minute(const fs::path& dir, const fs::path& fifo) {
  auto run = std::async(std::launch::async, [&] { return create_with_cache(dir); });
  if (run.wait_for(std::chrono::seconds(60)) == std::future_status::timeout) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    run.wait();
    FAIL("Runtime::create still waited after a minute (on the FIFO " << fifo << ")");
  }
  return run.get();
}

}  // namespace

TEST_CASE("program cache: entries that are no regular file, too large or lack a kernel are replaced",
          "[cache]") {
  const fs::path dir = fresh_directory();
  create_with_cache(dir);
  const auto files = entries(dir);
  REQUIRE(static_cast<int>(files.size()) == kPrograms);
  std::string expected;
  SECTION("a symbolic link to /dev/zero") {
    fs::remove(files[0]);
    fs::create_symlink("/dev/zero", files[0]);
    expected = "is a character device, not a regular file";
  }
  SECTION("a FIFO") {
    fs::remove(files[0]);
    REQUIRE(::mkfifo(files[0].c_str(), 0600) == 0);
    expected = "is a FIFO, not a regular file";
  }
  SECTION("a sparse file of 3 GiB") {
    fs::resize_file(files[0], std::uintmax_t(3) << 30);
    expected = "holds 3221225472 bytes, more than the 268435456 it may";
  }
  SECTION("the intact entry of another program: it builds but lacks the kernels") {
    // Entry layout: magic (8), key length (8), key, then payload length, checksum, payload.
    const std::string mine = contents(files[0]), other = contents(files[1]);
    std::uint64_t my_key = 0, other_key = 0;
    std::memcpy(&my_key, mine.data() + 8, 8);
    std::memcpy(&other_key, other.data() + 8, 8);
    std::ofstream(files[0], std::ios::binary | std::ios::trunc)
        << mine.substr(0, 16 + my_key) + other.substr(16 + other_key);
    expected = "cached binary lacks the kernel";
  }
  const CacheRun again = create_within_a_minute(dir, files[0]);
  INFO([&] {
    std::string all;
    for (const auto& m : again.messages) all += m + "\n";
    return all;
  }());
  CHECK(again.count(expected) == 1);
  CHECK(again.count("from source in") == 1);
  // The rebuilt program replaced the entry with a regular file: everything hits now.
  CHECK(fs::is_regular_file(fs::symlink_status(files[0])));
  const CacheRun healed = create_with_cache(dir);
  CHECK(healed.count("cache hit") == kPrograms);
  CHECK(healed.count("from source") == 0);
  fs::remove_all(dir);
}

TEST_CASE("program cache: \"off\" writes nothing", "[cache]") {
  const fs::path dir = fresh_directory();
  xnorcl::test::runtime_for(Variant::Global);
  CacheRun run;
  RuntimeOptions o;
  o.cache_dir = "off";
  o.log = [&run](const std::string& m) { run.messages.push_back(m); };
  Runtime::create(o);
  CHECK(run.count("from source") == kPrograms);
  CHECK(run.count("compiling the OpenCL kernels") == 1);
  CHECK(run.count("cache") == 1);  // only that message, which says the cache is off
  CHECK_FALSE(fs::exists(dir));
}

namespace {

std::uintmax_t total_bytes(const fs::path& dir) {
  std::uintmax_t n = 0;
  for (const auto& f : entries(dir)) n += fs::file_size(f);
  return n;
}

// A 3-channel layer like the spec's (bit-row packing, GEMM), small enough for every device.
struct SmallLayer {
  Shape input{1, 3, 12, 12};
  Shape filter_shape{8, 3, 5, 5};
  std::vector<float> x, w;
  BinaryConvolution::Attributes attributes;
  SmallLayer() {
    std::mt19937 rng(11);
    x.resize(3 * 12 * 12);
    w.resize(8 * 3 * 5 * 5);
    for (auto& v : x) v = static_cast<float>(static_cast<int>(rng() % 5) - 2);
    for (auto& v : w) v = rng() & 1u ? 1.0f : -1.0f;
    attributes.pads_begin = {2, 2};
    attributes.pads_end = {2, 2};
  }
  // Runs the layer on a runtime with this cache and returns whether the output equals the reference.
  bool run_matches(const fs::path& dir) const {
    RuntimeOptions o;
    o.cache_dir = dir.string();
    o.variant = Variant::Global;
    const Runtime rt = Runtime::create(o);
    const Filter f = Filter::from_values(w.data(), filter_shape);
    BinaryConvolution conv(rt, attributes, input, f);
    return conv.run(x.data()) == reference_binary_convolution(x.data(), input, f, attributes);
  }
};

}  // namespace

// PoCL finishes each kernel at its first launch and puts that code into the program binaries it returns
// afterwards, but serialises a program's binary only once; the runtime therefore stores PoCL programs when
// the last Runtime copy goes, so a warm start skips those compilations as well (xnorcl-bench startup).
// Hidden: tests/process_tests.cmake runs it in a process of its own with PoCL's cache off, which PoCL reads
// once per process (with it on, PoCL's own cache may put launched code into every binary).
TEST_CASE("program cache: entries stored after launches carry the launched code where the driver adds it",
          "[.cache_after_launch]") {
  const char* pocl_cache = std::getenv("POCL_KERNEL_CACHE");
  REQUIRE(pocl_cache != nullptr);
  REQUIRE(std::string(pocl_cache) == "0");
  const Runtime& any = xnorcl::test::runtime_for(Variant::Global);
  const bool pocl = any.device_info().platform_name.find("Portable Computing Language") != std::string::npos;
  const fs::path unlaunched = fresh_directory();
  const fs::path launched = fresh_directory();
  create_with_cache(unlaunched);
  const SmallLayer layer;
  CHECK(layer.run_matches(launched));  // cold: builds, runs, stores when the runtime goes
  // The layer's GEMM configuration may be a program of its own (float output on PoCL).
  const int layer_programs = kPrograms + xnorcl::test::float_layer_programs(any);
  REQUIRE(static_cast<int>(entries(launched).size()) == layer_programs);
  if (pocl) {
    CHECK(total_bytes(launched) > total_bytes(unlaunched));
  } else {
    CHECK(total_bytes(launched) == total_bytes(unlaunched));
  }
  // Warm from the grown entries: every program is a hit and the results are still exact.
  const CacheRun warm = create_with_cache(launched);
  CHECK(warm.count("cache hit") == kPrograms);  // create() loads its own; the layer's loads when it is made
  CHECK(layer.run_matches(launched));
  CHECK(static_cast<int>(entries(launched).size()) == layer_programs);
  fs::remove_all(unlaunched);
  fs::remove_all(launched);
}

// A Runtime whose programs are still waiting to be stored when the process exits stores nothing then: PoCL
// would compile them inside an LLVM whose statics may be gone (it crashed in 4 of 6 cold processes). Here the
// Runtime is held by a static constructed after another Runtime had deferred its stores, so only an exit
// handler registered by the late Runtime's own stores runs before the static's destructor. The process test
// (tests/process_tests.cmake) checks after the exit that the late Runtime's cache directory stayed empty.
// Hidden: it needs that check, and PoCL's cache off, so that a store at exit would compile in this process.
TEST_CASE("program cache: a Runtime in a static made after another's deferred stores stores nothing at exit",
          "[.store_at_exit]") {
  const char* pocl_cache = std::getenv("POCL_KERNEL_CACHE");
  REQUIRE(pocl_cache != nullptr);
  REQUIRE(std::string(pocl_cache) == "0");
  const char* late_dir = std::getenv("XNORCL_TEST_LATE_CACHE");
  REQUIRE(late_dir != nullptr);
  const Runtime& any = xnorcl::test::runtime_for(Variant::Global);
  if (any.device_info().platform_name.find("Portable Computing Language") == std::string::npos) {
    WARN("only PoCL defers its stores; nothing to test on " << any.device_info().platform_name);
    return;
  }
  const fs::path early_dir = fresh_directory();
  const SmallLayer layer;
  CHECK(layer.run_matches(early_dir));  // its Runtime deferred its stores, then stored them at the run
  CHECK(!entries(early_dir).empty());
  fs::remove_all(early_dir);
  static std::map<int, Runtime> late;
  RuntimeOptions o;
  o.cache_dir = std::string(late_dir);
  o.variant = Variant::Global;
  late.emplace(0, Runtime::create(o));  // a fresh cache: its programs built and their stores deferred
  REQUIRE(fs::is_directory(late_dir));
  CHECK(entries(late_dir).empty());
}
