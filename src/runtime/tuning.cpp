// SPDX-License-Identifier: Apache-2.0
#include "runtime/tuning.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/file_io.hpp"
#include "runtime/device_profile.hpp"
#include "runtime/program_cache.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/version.hpp"

namespace xnorcl {

std::string to_string(TuneSearch search) {
  switch (search) {
    case TuneSearch::Fast:
      return "fast";
    case TuneSearch::Normal:
      return "normal";
    case TuneSearch::Exhaustive:
      return "exhaustive";
  }
  return "unknown";
}

std::optional<TuneSearch> parse_tune_search(const std::string& text) {
  for (TuneSearch s : {TuneSearch::Fast, TuneSearch::Normal, TuneSearch::Exhaustive})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

namespace detail {
namespace {

constexpr const char* kMagicLine = "xnorcl tuning file 1\n";
// The file's checksum: FNV-1a 64 with its standard offset basis, so that a tool that writes a tuning file
// (docs/tuning.md) can compute it from the published constants.
constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ull;
std::uint64_t checksum(const std::string& text, std::size_t size) {
  return fnv1a64(text.data(), size, kFnvOffsetBasis);
}

// A tuning file holds a few hundred short lines; anything larger is not one.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(1) << 20;

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Entry fields hold no tab or line break (shape classes and configurations are ours, but a file is input).
bool plain(const std::string& s) {
  return !s.empty() && s.find_first_of("\t\n\r") == std::string::npos;
}

}  // namespace

std::optional<std::string> TuningTable::find(const std::string& shape_class) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(shape_class);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void TuningTable::set(const std::string& shape_class, const std::string& config) {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_[shape_class] = config;
}

void TuningTable::erase(const std::string& shape_class) {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(shape_class);
}

std::map<std::string, std::string> TuningTable::entries() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

void TuningTable::replace(std::map<std::string, std::string> entries) {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_ = std::move(entries);
}

TuningPoint choose_config(const RuntimeState& state, const std::string& shape_class,
                          const std::string& default_config,
                          const std::function<bool(const std::string&)>& accept,
                          std::function<std::vector<std::string>(TuneSearch)> candidates) {
  TuningPoint p;
  p.shape_class = shape_class;
  p.default_config = default_config;
  p.config = default_config;
  p.candidates = std::move(candidates);
  if (const auto stored = state.tuning.find(shape_class)) {
    if (accept(*stored)) {
      p.config = *stored;
      p.tuned = true;
    } else {
      warn(state,
           "the tuned configuration '" + *stored + "' of " + shape_class +
               " cannot run here (the device's or RuntimeOptions' limits, or a kernel this layer rules out); "
               "using the default '" +
               default_config + "'");
    }
  }
  return p;
}

std::string work_group_config(std::size_t size) {
  return "wg=" + std::to_string(size);
}

RuntimeState::LinearProgram tuned_linear_program(const RuntimeState& state, const std::string& file,
                                                 const std::string& what, TuningPoint& point) {
  const RuntimeState::LinearProgram& base = state.linear_program(file);
  const NetworkProgram& program = network_program(file);
  if (program.sums_across_work_group) throw Error(file + ": its work-group size is not tunable");
  const std::size_t default_size = base.work_group, cap = state.work_group_cap;
  const auto accept = [cap](const std::string& config) {
    const std::optional<int> size = config_value(config, "wg");
    return size && linear_work_group_fits(*size, cap);
  };
  const auto candidates = [default_size, cap](TuneSearch search) {
    std::vector<std::string> texts;
    for (std::size_t size : linear_work_group_candidates(search, default_size, cap))
      texts.push_back(work_group_config(size));
    return texts;
  };
  point = choose_config(state, "work-group " + what, work_group_config(default_size), accept, candidates);
  const auto size = static_cast<std::size_t>(*config_value(point.config, "wg"));
  if (size == default_size) return base;
  if (const auto tuned = state.program_variant(file, network_build_options(program, state.variant, size),
                                               program.kernels, size))
    return *tuned;
  warn(state, "the tuned configuration '" + point.config + "' of " + point.shape_class +
                  " is refused by a kernel of " + file + " on this device; using the default");
  point.config = point.default_config;
  point.tuned = false;
  return base;
}

std::string tuning_key(const RuntimeState& state) {
  const cl::Platform platform(state.device.getInfo<CL_DEVICE_PLATFORM>());
  std::ostringstream key;
  key << "library " << version() << "\nplatform " << platform.getInfo<CL_PLATFORM_NAME>() << " | "
      << platform.getInfo<CL_PLATFORM_VERSION>() << "\ndevice " << state.device.getInfo<CL_DEVICE_NAME>()
      << " | " << state.device.getInfo<CL_DEVICE_VERSION>() << "\ndriver "
      << state.device.getInfo<CL_DRIVER_VERSION>() << "\n";
  return key.str();
}

std::string tuning_file_path(const RuntimeState& state) {
  if (state.options.tuning_file) return *state.options.tuning_file;
  if (!state.cache.enabled()) return "";
  const std::string key = tuning_key(state);
  return state.cache.directory() + "/tuning-" + hex64(fnv1a64(key.data(), key.size())) + ".txt";
}

std::map<std::string, std::string> read_tuning_file(const std::string& path, const std::string& key,
                                                    const std::function<void(const std::string&)>& warn) {
  std::string text;
  try {
    std::optional<RegularFile> file = RegularFile::open(path, kMaxFileBytes);
    if (!file) return {};
    text.resize(static_cast<std::size_t>(file->size()));
    file->read(text.data(), text.size());
  } catch (const Error& e) {
    warn("the tuning file is ignored: " + std::string(e.what()));
    return {};
  }
  const auto ignored = [&](const std::string& why) {
    warn("the tuning file " + path + " is ignored (" + why + "); steps run their default configurations");
    return std::map<std::string, std::string>{};
  };
  const std::string magic(kMagicLine);
  if (text.compare(0, magic.size(), magic) != 0) return ignored("not an xnorcl tuning file");
  const std::size_t sum_at = text.rfind("checksum ");
  if (sum_at == std::string::npos || text.size() != sum_at + 9 + 16 + 1 || text.back() != '\n')
    return ignored("truncated: no checksum line at its end");
  if (text.substr(sum_at + 9, 16) != hex64(checksum(text, sum_at))) return ignored("checksum mismatch");
  if (text.compare(magic.size(), key.size(), key) != 0)
    return ignored("written for another device, driver or xnorcl version");
  std::map<std::string, std::string> entries;
  std::istringstream lines(text.substr(magic.size() + key.size(), sum_at - magic.size() - key.size()));
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t tab = line.find('\t');
    if (line.compare(0, 6, "entry ") != 0 || tab == std::string::npos)
      return ignored("malformed line '" + line.substr(0, 80) + "'");
    const std::string shape_class = line.substr(6, tab - 6), config = line.substr(tab + 1);
    if (!plain(shape_class) || !plain(config)) return ignored("malformed line '" + line.substr(0, 80) + "'");
    entries[shape_class] = config;
  }
  return entries;
}

void write_tuning_file(const std::string& path, const std::string& key,
                       const std::map<std::string, std::string>& entries) {
  std::string text = kMagicLine + key;
  for (const auto& [shape_class, config] : entries) {
    if (!plain(shape_class) || !plain(config))
      throw InvalidArgument("a tuning entry holds a tab or line break: '" + shape_class + "'");
    text += "entry " + shape_class + "\t" + config + "\n";
  }
  text += "checksum " + hex64(checksum(text, text.size())) + "\n";
  write_file_atomically(path, text);
}

void load_tuning(RuntimeState& state) {
  state.tuning_path = tuning_file_path(state);
  if (state.tuning_mode == TuningMode::Ignore || state.tuning_path.empty()) return;
  state.tuning.replace(
      read_tuning_file(state.tuning_path, tuning_key(state), [&](const std::string& m) { warn(state, m); }));
}

void warn(const RuntimeState& state, const std::string& message) {
  if (state.options.log)
    state.options.log("warning: " + message);
  else
    std::cerr << "xnorcl: warning: " << message << "\n";
}

std::vector<std::size_t> turn_order(int rep, std::size_t count) {
  std::vector<std::size_t> order(count);
  for (std::size_t k = 0; k < count; ++k) order[k] = rep % 2 == 0 ? k : count - 1 - k;
  return order;
}

std::optional<int> config_value(const std::string& config, const std::string& key) {
  std::istringstream words(config);
  std::string word;
  while (words >> word) {
    if (word.compare(0, key.size() + 1, key + "=") != 0) continue;
    const std::string digits = word.substr(key.size() + 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(digits);
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace xnorcl
