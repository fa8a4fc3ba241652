// SPDX-License-Identifier: Apache-2.0
// Tuned kernel configurations: the table a Runtime consults when a step is planned, and the tuning file that
// keeps it across processes (format in docs/tuning.md). A step's tunable kernel is described by a shape
// class (the launch geometry that decides its speed, as text) and its configuration (text the op parses);
// the default rule of src/runtime/device_profile.cpp is always one of the configurations searched.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "xnorcl/tuning.hpp"

namespace xnorcl::detail {

struct RuntimeState;

// What one step can be tuned on, as planned: its shape class, the default rule's configuration, the one it
// runs, and the configurations the tuner tries for a search depth (the default first).
struct TuningPoint {
  std::string shape_class;
  std::string default_config;
  std::string config;
  bool tuned = false;  // config came from the tuning table
  std::function<std::vector<std::string>(TuneSearch)> candidates;
};

// Shape class -> configuration, shared by a Runtime's copies and their threads.
class TuningTable {
 public:
  std::optional<std::string> find(const std::string& shape_class) const;
  void set(const std::string& shape_class, const std::string& config);
  void erase(const std::string& shape_class);
  std::map<std::string, std::string> entries() const;
  void replace(std::map<std::string, std::string> entries);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> entries_;
};

// The configuration a step runs: the table's entry for its class where `accept` takes it (a file may hold
// entries this device or RuntimeOptions cannot run: those fall back to the default), else the default.
TuningPoint choose_config(const RuntimeState& state, const std::string& shape_class,
                          const std::string& default_config,
                          const std::function<bool(const std::string&)>& accept,
                          std::function<std::vector<std::string>(TuneSearch)> candidates);

// The text a tuning file is keyed by: library version, platform, device and driver (as the program cache).
std::string tuning_key(const RuntimeState& state);
// RuntimeOptions::tuning_file, else "<cache dir>/tuning-<hash of the key>.txt", else "" (cache off).
std::string tuning_file_path(const RuntimeState& state);
// The entries of the file at `path` written for `key`. Missing: empty, silently. Unreadable, corrupt,
// truncated or written for another key: empty, with a warning through `warn`.
std::map<std::string, std::string> read_tuning_file(const std::string& path, const std::string& key,
                                                    const std::function<void(const std::string&)>& warn);
// Writes the entries atomically; an Error naming the file on failure.
void write_tuning_file(const std::string& path, const std::string& key,
                       const std::map<std::string, std::string>& entries);
// Fills the state's table from its tuning file, unless the mode is Ignore.
void load_tuning(RuntimeState& state);
// A warning: through RuntimeOptions::log ("warning: ..."), else on stderr.
void warn(const RuntimeState& state, const std::string& message);

// The order in which `count` models run in repetition `rep` of a series that times them in turn: as listed,
// reversed every other repetition, so that each runs before each other one as often as after it (the
// tuner's confirmation of its picks beside the defaults).
std::vector<std::size_t> turn_order(int rep, std::size_t count);

// "key=value key=value" configurations: the value of `key`, or nothing when absent or not a number.
std::optional<int> config_value(const std::string& config, const std::string& key);

}  // namespace xnorcl::detail
