// SPDX-License-Identifier: Apache-2.0
// On-disk cache of compiled program binaries, keyed by everything that could change the binary.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xnorcl/opencl.hpp"

namespace xnorcl::detail {

class ProgramCache {
 public:
  // directory empty: the cache is off. log may be empty.
  ProgramCache(std::string directory, std::function<void(const std::string&)> log);

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  // The text every entry is keyed by: library version, source hash, build options, platform name and
  // version, device name and version, driver version.
  static std::string key_text(const std::string& source, const std::string& options,
                              const cl::Device& device);
  std::string entry_path(const std::string& key_text) const;

  // The cached binary for this key, or nothing (missing, truncated, corrupt or written for another key).
  std::optional<std::vector<unsigned char>> load(const std::string& key_text) const;
  // Written to a temporary file, then renamed, so readers never see a partial entry. Failures only log.
  void store(const std::string& key_text, const std::vector<unsigned char>& binary) const;

 private:
  void log(const std::string& message) const {
    if (log_) log_(message);
  }
  std::string directory_;
  std::function<void(const std::string&)> log_;
};

// $XDG_CACHE_HOME/xnorcl, else $HOME/.cache/xnorcl; empty (off) on Android or when neither is set.
std::string default_cache_directory();

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed = 1469598103934665603ull);

}  // namespace xnorcl::detail
