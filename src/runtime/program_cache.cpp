#include "runtime/program_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "xnorcl/version.hpp"

namespace xnorcl::detail {
namespace {

// Entry layout: magic, key-text length, key text, payload length, payload FNV-1a, payload. The key text is
// stored whole so that a hash collision or an entry of another library version is recognised as stale.
constexpr char kMagic[8] = {'X', 'N', 'O', 'R', 'C', 'L', 'B', '1'};

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <class T>
bool get(const std::string& in, std::size_t& at, T& value) {
  if (in.size() < at + sizeof value) return false;
  std::memcpy(&value, in.data() + at, sizeof value);
  at += sizeof value;
  return true;
}

}  // namespace

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string default_cache_directory() {
#if defined(__ANDROID__)
  return "";  // app-private storage has no fixed path; the app sets RuntimeOptions::cache_dir
#else
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/xnorcl";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/xnorcl";
  return "";
#endif
}

ProgramCache::ProgramCache(std::string directory, std::function<void(const std::string&)> log)
    : directory_(std::move(directory)), log_(std::move(log)) {}

std::string ProgramCache::key_text(const std::string& source, const std::string& options,
                                   const cl::Device& device) {
  const cl::Platform platform(device.getInfo<CL_DEVICE_PLATFORM>());
  std::ostringstream key;
  key << "xnorcl " << version() << "\nsource " << hex(fnv1a64(source.data(), source.size())) << "\noptions "
      << options << "\nplatform " << platform.getInfo<CL_PLATFORM_NAME>() << " | "
      << platform.getInfo<CL_PLATFORM_VERSION>() << "\ndevice " << device.getInfo<CL_DEVICE_NAME>() << " | "
      << device.getInfo<CL_DEVICE_VERSION>() << "\ndriver " << device.getInfo<CL_DRIVER_VERSION>() << "\n";
  return key.str();
}

std::string ProgramCache::entry_path(const std::string& key_text) const {
  return directory_ + "/" + hex(fnv1a64(key_text.data(), key_text.size())) + ".clbin";
}

std::optional<std::vector<unsigned char>> ProgramCache::load(const std::string& key_text) const {
  if (!enabled()) return std::nullopt;
  const std::string path = entry_path(key_text);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    log("cache miss: no entry " + path);
    return std::nullopt;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string data = buffer.str();
  std::size_t at = 0;
  std::uint64_t key_size = 0, payload_size = 0, checksum = 0;
  const bool header_ok = data.size() >= sizeof kMagic &&
                         std::memcmp(data.data(), kMagic, sizeof kMagic) == 0 &&
                         (at = sizeof kMagic, get(data, at, key_size)) && data.size() >= at + key_size;
  if (!header_ok) {
    log("cache entry ignored (corrupt header): " + path);
    return std::nullopt;
  }
  if (data.compare(at, key_size, key_text) != 0 || key_size != key_text.size()) {
    log("cache entry ignored (stale: written for another version, source, options or driver): " + path);
    return std::nullopt;
  }
  at += key_size;
  if (!get(data, at, payload_size) || !get(data, at, checksum) || data.size() - at != payload_size ||
      payload_size == 0) {
    log("cache entry ignored (truncated): " + path);
    return std::nullopt;
  }
  if (fnv1a64(data.data() + at, payload_size) != checksum) {
    log("cache entry ignored (checksum mismatch): " + path);
    return std::nullopt;
  }
  log("cache hit: " + path);
  return std::vector<unsigned char>(data.begin() + static_cast<std::ptrdiff_t>(at), data.end());
}

void ProgramCache::store(const std::string& key_text, const std::vector<unsigned char>& binary) const {
  if (!enabled() || binary.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  const std::string path = entry_path(key_text);
  std::random_device rd;
  const std::string temporary = path + ".tmp." + hex((static_cast<std::uint64_t>(rd()) << 32) | rd());
  std::string data(kMagic, sizeof kMagic);
  put<std::uint64_t>(data, key_text.size());
  data += key_text;
  put<std::uint64_t>(data, binary.size());
  put<std::uint64_t>(data, fnv1a64(binary.data(), binary.size()));
  data.append(reinterpret_cast<const char*>(binary.data()), binary.size());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      log("cache store failed (cannot write " + temporary + ")");
      std::filesystem::remove(temporary, ec);
      return;
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    log("cache store failed (rename to " + path + ": " + ec.message() + ")");
    std::filesystem::remove(temporary, ec);
    return;
  }
  log("cache stored: " + path + " (" + std::to_string(binary.size()) + " bytes)");
}

}  // namespace xnorcl::detail
