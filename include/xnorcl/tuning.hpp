// SPDX-License-Identifier: Apache-2.0
// Tuning on the device: for each distinct step of a model (its shape class), the kernel configurations of
// a search are timed where the model runs and the fastest is kept in the runtime's tuning file, which later
// Runtimes of the same device, driver and library version read (RuntimeOptions::tuning). The default rule
// is always a candidate and is kept unless another is faster beyond noise, so a tuned step is never slower
// than the default. Every candidate computes the same bits. See docs/tuning.md.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xnorcl/runtime.hpp"

namespace xnorcl {

class Graph;

// How many configurations a step's search tries: a handful (fast), a few dozen (normal) or every valid one
// (exhaustive).
enum class TuneSearch { Fast, Normal, Exhaustive };
std::string to_string(TuneSearch search);  // "fast", "normal", "exhaustive"
// The search that to_string names, or nothing for any other text.
std::optional<TuneSearch> parse_tune_search(const std::string& text);

struct TuneProgress {
  std::size_t done = 0, total = 0;  // candidate runs measured and planned
  std::string what;                 // what is being measured now
};

struct TuneOptions {
  TuneSearch search = TuneSearch::Fast;
  int repetitions = 0;  // timed runs per candidate, at most 1000; 0: 5 (fast), 9 (normal), 15 (exhaustive)
  // Called after each candidate round; throwing from it aborts the tuning (nothing is stored).
  std::function<void(const TuneProgress&)> progress;
  // Polled between rounds: true stops the search and keeps what was measured (Ctrl-C in xnorcl-tune).
  std::function<bool()> stop_requested;
  bool store = true;  // write the results to the tuning file (when the runtime has one)
};

// One shape class of the model, as tuned.
struct TunedStep {
  std::string shape_class;
  std::vector<std::string> steps;  // the model's steps of this class
  std::string default_config, best_config;
  double default_ms = 0, best_ms = 0;  // median device time of the class's steps per run
  std::size_t candidates = 0;          // configurations measured
};

struct TuneReport {
  std::vector<TunedStep> classes;
  bool stopped = false;  // stop_requested cut the search short (the rest kept their default)
  std::string file;      // the tuning file written, or "" (not stored)
  double seconds = 0;    // wall time of the tuning
  // The whole model's median device time per run in its default and in its tuned configurations, the two
  // models timed in turn after the search (one figure for both where tuning kept every default).
  double default_ms = 0;
  double tuned_ms = 0;
};

// Tunes every tunable step of `graph` on the runtime's device (a profiling queue is required) and keeps the
// results in the runtime's table, so Models built on it afterwards use them; stores them as
// options.store says. InvalidArgument for a graph that does not validate, before any device work.
TuneReport tune(const Runtime& runtime, const Graph& graph, const TuneOptions& options = {});

// The tuning file of a runtime: RuntimeOptions::tuning_file, else the one beside the program cache, else ""
// (cache off).
std::string tuning_file(const Runtime& runtime);

}  // namespace xnorcl
