// SPDX-License-Identifier: Apache-2.0
#include "runtime/program_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/file_io.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/version.hpp"

namespace xnorcl::detail {
namespace {

// Entry layout: magic, key-text length, key text, payload length, payload FNV-1a, payload. The key text is
// stored whole so that a hash collision or an entry of another library version is recognised as stale.
constexpr char kMagic[8] = {'X', 'N', 'O', 'R', 'C', 'L', 'B', '1'};
// Far above any program binary (PoCL's with every launched kernel: a few hundred KB).
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t(256) << 20;

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
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

// The entry is read piece by piece: the header and key first, then the payload straight into the vector
// returned. Only a regular file of at most kMaxEntryBytes is read (a link to /dev/zero, a FIFO or a huge
// sparse file is ignored, never read or waited on).
std::optional<std::vector<unsigned char>> ProgramCache::load(const std::string& key_text) const {
  if (!enabled()) return std::nullopt;
  const std::string path = entry_path(key_text);
  try {
    std::optional<RegularFile> file = RegularFile::open(path, kMaxEntryBytes);
    if (!file) {
      log("cache miss: no entry " + path);
      return std::nullopt;
    }
    char magic[sizeof kMagic];
    std::uint64_t key_size = 0, payload_size = 0, checksum = 0;
    const bool header_ok =
        file->left() >= sizeof magic + sizeof key_size &&
        (file->read(magic, sizeof magic), std::memcmp(magic, kMagic, sizeof kMagic) == 0) &&
        (file->read(&key_size, sizeof key_size), key_size <= file->left());
    if (!header_ok) {
      log("cache entry ignored (corrupt header): " + path);
      return std::nullopt;
    }
    std::string key(static_cast<std::size_t>(key_size), '\0');
    file->read(key.data(), key.size());
    if (key != key_text) {
      log("cache entry ignored (stale: written for another version, source, options or driver): " + path);
      return std::nullopt;
    }
    const bool sizes_ok = file->left() >= 2 * sizeof(std::uint64_t) &&
                          (file->read(&payload_size, sizeof payload_size),
                           file->read(&checksum, sizeof checksum), payload_size == file->left()) &&
                          payload_size != 0;
    if (!sizes_ok) {
      log("cache entry ignored (truncated): " + path);
      return std::nullopt;
    }
    std::vector<unsigned char> payload(static_cast<std::size_t>(payload_size));
    file->read(payload.data(), payload.size());
    if (fnv1a64(payload.data(), payload.size()) != checksum) {
      log("cache entry ignored (checksum mismatch): " + path);
      return std::nullopt;
    }
    log("cache hit: " + path);
    return payload;
  } catch (const Error& e) {
    log(std::string("cache entry ignored (") + e.what() + ")");
    return std::nullopt;
  }
}

void ProgramCache::store(const std::string& key_text, const std::vector<unsigned char>& binary) const {
  if (!enabled() || binary.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  const std::string path = entry_path(key_text);
  std::string data(kMagic, sizeof kMagic);
  put<std::uint64_t>(data, key_text.size());
  data += key_text;
  put<std::uint64_t>(data, binary.size());
  put<std::uint64_t>(data, fnv1a64(binary.data(), binary.size()));
  data.append(reinterpret_cast<const char*>(binary.data()), binary.size());
  try {
    // The cache owns its entries: one that is no regular file (a FIFO, a link to a device) was refused when
    // read and is removed here, so that the fresh entry can take its place (the writer never replaces one).
    const auto kind = std::filesystem::symlink_status(path, ec).type();
    if (!ec && kind != std::filesystem::file_type::regular && kind != std::filesystem::file_type::not_found) {
      if (kind == std::filesystem::file_type::directory)
        std::filesystem::remove_all(path, ec);
      else
        std::filesystem::remove(path, ec);
    }
    write_file_atomically(path, data);
  } catch (const Error& e) {
    log(std::string("cache store failed (") + e.what() + ")");
    return;
  }
  log("cache stored: " + path + " (" + std::to_string(binary.size()) + " bytes)");
}

}  // namespace xnorcl::detail
