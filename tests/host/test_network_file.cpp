// SPDX-License-Identifier: Apache-2.0
// Reading and writing network files. What a malformed file may cost: parse_network allocates at most a small
// multiple of the file's own size, whatever counts the file claims (measured by counting the bytes operator
// new hands out while a parse runs on this thread). What load_network and save_network do with paths that are
// not plain files.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <new>
#include <string>

#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define XNORCL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define XNORCL_SANITIZED 1
#endif
#endif
#ifndef XNORCL_SANITIZED
#define XNORCL_SANITIZED 0
#endif
constexpr bool kCountsAllocations = !XNORCL_SANITIZED;

thread_local bool counting = false;
thread_local std::size_t counted_bytes = 0;
thread_local std::size_t largest_allocation = 0;

[[maybe_unused]] void* allocate(std::size_t n) {
  if (counting) {
    counted_bytes += n;
    if (n > largest_allocation) largest_allocation = n;
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

struct Cost {
  std::size_t total = 0, largest = 0;
  bool refused = false;
  std::string message;
};

Cost parse_cost(const std::string& bytes) {
  Cost c;
  counted_bytes = largest_allocation = 0;
  counting = true;
  try {
    parse_network(bytes);
  } catch (const InvalidArgument& e) {
    counting = false;
    c.refused = true;
    c.message = e.what();
  }
  counting = false;
  c.total = counted_bytes;
  c.largest = largest_allocation;
  return c;
}

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_i64(std::string& s, std::int64_t v) {
  for (int i = 0; i < 8; ++i)
    s.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
}

// Magic, version, input [1, 8, 4, 4], one layer of `kind` whose body starts with `body`.
std::string file_with_layer(std::uint32_t kind, const std::string& body) {
  std::string s = "XNORNET1";
  put_u32(s, 1);
  for (std::int64_t d : {1, 8, 4, 4}) put_i64(s, d);
  put_u32(s, 1);
  put_u32(s, kind);
  return s + body;
}

std::string count_only(std::uint32_t count) {
  std::string body;
  put_u32(body, count);
  return body;
}

// A valid file of 378 bytes with a layer of every kind.
std::string every_kind_file() {
  std::vector<std::uint8_t> bits(200);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint8_t>(i * 37 + 11);
  NetworkSpec s;
  s.input = {1, 3, 6, 5};
  BinaryConvolution::Attributes a;
  a.input_thresholds = {1.0f, -2.0f, 0.25f};
  s.layers.push_back(ConvolutionLayer{
      a, Filter::from_packed(bits.data(), bits.size(), Shape{7, 3, 3, 2}, BitOrder::MsbFirst)});
  s.layers.push_back(ScaleBiasLayer{std::vector<float>(7, 2.0f), std::vector<float>(7, -1.0f)});
  s.layers.push_back(ThresholdLayer{fold_batch_norm({1, -1, 0, 2, 3, 4, 5}, {0, 1, 1, 2, 3, 4, 5})});
  s.layers.push_back(MaxPoolLayer{PoolAttributes{}});
  s.layers.push_back(FullyConnectedLayer{
      Filter::from_packed(bits.data(), bits.size(), Shape{4, 7, 2, 2}, BitOrder::MsbFirst)});
  return serialize_network(s);
}

}  // namespace

// Sanitizers bring their own allocator, and replacing these beside it mismatches the variants this file does
// not replace (ASan: alloc-dealloc-mismatch). There the bytes are not counted (kCountsAllocations), the
// refusals are still checked, and the fuzzers' malloc limit covers the allocations.
#if !XNORCL_SANITIZED
void* operator new(std::size_t n) {
  return allocate(n);
}
void* operator new[](std::size_t n) {
  return allocate(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
#endif

TEST_CASE("network file: a count with nothing behind it is refused before anything is allocated for it",
          "[network_file]") {
  if (!kCountsAllocations) WARN("built with a sanitizer: the bytes a parse allocates are not counted here");
  const std::uint32_t huge = 1u << 28;
  struct Case {
    const char* name;
    std::string file;
    const char* field;
  };
  std::string conv_body;
  for (int i = 0; i < 9; ++i) put_u32(conv_body, i < 4 ? 1 : 0);  // strides, pads, dilations, auto_pad
  put_u32(conv_body, 0);                                          // pad_value 0.0f
  const Case cases[] = {
      {"threshold rules", file_with_layer(1, count_only(huge)), "the rule count = 268435456"},
      {"scale and bias", file_with_layer(2, count_only(huge)), "the channel count = 268435456"},
      {"input thresholds", file_with_layer(0, conv_body + count_only(huge)),
       "the threshold count = 268435456"},
  };
  for (const Case& c : cases) {
    INFO(c.name << ", a file of " << c.file.size() << " bytes");
    const Cost cost = parse_cost(c.file);
    CHECK(cost.refused);
    CHECK_THAT(cost.message, Catch::Contains(c.field) && Catch::Contains("needs at least"));
    if (kCountsAllocations) CHECK(cost.largest <= 64 * c.file.size());
  }
}

TEST_CASE("network file: no single-byte change of a valid file costs more than 64 times its size",
          "[network_file]") {
  const std::string valid = every_kind_file();
  REQUIRE(valid.size() == 378);
  REQUIRE_FALSE(parse_cost(valid).refused);
  const std::size_t budget = 64 * valid.size();
  std::size_t mutations = 0, refused = 0, worst = 0;
  for (std::size_t at = 0; at < valid.size(); ++at) {
    for (int value : {0x00, 0x01, 0x10, 0x7f, 0x80, 0xff}) {
      std::string bad = valid;
      bad[at] = static_cast<char>(value);
      if (bad == valid) continue;
      const Cost cost = parse_cost(bad);
      ++mutations;
      refused += cost.refused;
      if (cost.total > worst) worst = cost.total;
      if (kCountsAllocations && cost.total > budget)
        FAIL_CHECK("byte " << at << " = " << value << " costs " << cost.total << " bytes");
    }
  }
  INFO(mutations << " mutations, " << refused << " refused, the worst cost " << worst << " bytes");
  CHECK(refused > 0);
  CHECK(worst <= budget);
}

TEST_CASE("network file: a directory, a FIFO or a missing file is an Error naming the path",
          "[network_file]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("xnorcl-load-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path fifo = dir / "fifo.xnn";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::pair<fs::path, const char*> cases[] = {
      {dir, "is a directory"}, {fifo, "is a FIFO"}, {dir / "missing.xnn", "cannot open"}};
  for (const auto& c : cases) {
    INFO(c.first);
    auto load = std::async(std::launch::async, [&]() -> std::string {
      try {
        load_network(c.first.string());
        return "accepted";
      } catch (const Error& e) {
        return std::string("Error: ") + e.what();
      } catch (const std::exception& e) {
        return std::string("not an xnorcl::Error: ") + e.what();
      }
    });
    if (load.wait_for(std::chrono::seconds(20)) == std::future_status::timeout) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // releases a reader waiting on the FIFO
      if (fd >= 0) ::close(fd);
      FAIL_CHECK("load_network still waited after 20 seconds");
    }
    const std::string outcome = load.get();
    CHECK_THAT(outcome, Catch::StartsWith("Error: ") && Catch::Contains(c.first.string()) &&
                            Catch::Contains(c.second));
  }
  fs::remove_all(dir);
}

TEST_CASE("network file: save_network never writes through a link planted at a temporary name",
          "[network_file]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("xnorcl-save-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path victim = dir / "victim", out = dir / "out.xnn";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir / "out.xnn.tmp");
  NetworkSpec spec;
  spec.input = {1, 8, 4, 4};
  spec.layers.push_back(ThresholdLayer{});
  save_network(spec, out.string());
  std::ifstream in(victim);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "precious");
  CHECK(serialize_network(load_network(out.string())) == serialize_network(spec));
  // Only the target and what was there before: no temporary left behind.
  std::size_t files = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++files;
  CHECK(files == 3);
  fs::remove_all(dir);
}

TEST_CASE("network file: save_network refuses a FIFO, a directory or a link to one as the target",
          "[network_file]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("xnorcl-save-kinds-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path fifo = dir / "fifo.xnn", link = dir / "link.xnn", folder = dir / "folder.xnn";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_symlink(fifo, link);
  fs::create_directories(folder);
  NetworkSpec spec;
  spec.input = {1, 8, 4, 4};
  spec.layers.push_back(ThresholdLayer{});
  const std::pair<fs::path, const char*> cases[] = {
      {fifo, "is a FIFO"}, {link, "is a FIFO"}, {folder, "is a directory"}};
  for (const auto& c : cases) {
    INFO(c.first);
    CHECK_THROWS_WITH(save_network(spec, c.first.string()),
                      Catch::Contains(c.first.string()) && Catch::Contains(c.second));
  }
  // Each left as it was, and no temporary behind. (A device node is refused by the same check; none is
  // tested here: a regression would replace it, and the tests may run as root.)
  CHECK(fs::is_fifo(fifo));
  CHECK(fs::is_symlink(link));
  CHECK(fs::is_directory(folder));
  std::size_t entries = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++entries;
  CHECK(entries == 3);
  fs::remove_all(dir);
}

TEST_CASE("network file: a shape no loader would take is refused when saving, not written",
          "[network_file]") {
  namespace fs = std::filesystem;
  const fs::path out =
      fs::temp_directory_path() / ("xnorcl-save-shape-" + std::to_string(::getpid()) + ".xnn");
  fs::remove(out);
  NetworkSpec spec;
  spec.input = {100000, 3, 96, 96};  // 2.76e9 elements
  spec.layers.push_back(ThresholdLayer{});
  CHECK_THROWS_WITH(save_network(spec, out.string()),
                    Catch::Contains("100000x3x96x96") && Catch::Contains("more than 2^31-1 elements"));
  CHECK_FALSE(fs::exists(out));
  // The reader names the same problem in the same words.
  spec.input = {1, 3, 96, 96};
  std::string bytes = serialize_network(spec);
  const std::int64_t n = 100000;
  std::memcpy(&bytes[12], &n,
              sizeof n);  // the input's N, after the 8-byte magic and the version (little-endian host)
  CHECK_THROWS_WITH(parse_network(bytes), Catch::Contains("more than 2^31-1 elements"));
}

TEST_CASE("network_output: what a loaded chain produces, known before anything is built or run",
          "[network_file]") {
  // A valid file of a few kilobytes whose network has 37.7 million float outputs (151 MB).
  NetworkSpec spec;
  spec.input = {1, 3, 96, 96};
  const std::vector<std::uint8_t> bits(4096 * 3 / 8, 0x5a);
  spec.layers.push_back(ConvolutionLayer{
      BinaryConvolution::Attributes{},
      Filter::from_packed(bits.data(), bits.size(), Shape{4096, 3, 1, 1}, BitOrder::MsbFirst)});
  const NetworkSpec loaded = parse_network(serialize_network(spec));
  counted_bytes = 0;
  counting = true;
  const NetworkOutput out = network_output(loaded);
  counting = false;
  CHECK(out.shape == Shape{1, 4096, 96, 96});
  CHECK_FALSE(out.packed);
  CHECK(counted_bytes < 65536);
  spec.layers.push_back(ThresholdLayer{});
  CHECK(network_output(spec).packed);
  spec.layers.push_back(ScaleBiasLayer{{1.0f}, {0.0f}});
  CHECK_THROWS_WITH(network_output(spec), Catch::Contains("layer 2 (scale_bias)"));
}
