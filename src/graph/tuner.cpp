// SPDX-License-Identifier: Apache-2.0
// The tuner: rounds of whole-model runs. Round 0 runs every step in its default configuration; round r runs
// each shape class's r-th candidate (classes with fewer keep their default). Each step's device time is
// measured inside the whole model, so a configuration is judged where it runs, with its neighbours' effect
// on the caches; a class's time is the sum of its steps' medians. Every round's outputs must equal round
// 0's bit for bit (every candidate computes the same values): a round that differs is discarded with a
// warning, never kept.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "graph/model_access.hpp"
#include "ops/layer_common.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/tuning.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/tuning.hpp"

namespace xnorcl {
namespace detail {
namespace {

thread_local bool tuning_now = false;

// A candidate is kept only when it beats the default by more than this share: run-to-run noise on a busy
// device is a few percent, and a tuned step must never be slower than its default.
constexpr double kNoiseMargin = 0.03;

struct ClassState {
  std::vector<std::size_t> steps;
  std::vector<std::string> step_names;
  std::vector<std::string> candidates;
  std::vector<double> ms;               // per candidate measured, NaN where not (yet) or discarded
  std::optional<std::string> previous;  // the table's entry before tuning
};

struct Measurement {
  std::vector<double> step_ms;  // median per step
  double model_ms = 0;          // median of the whole model's device time
  std::map<std::string, Tensor> outputs;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::map<std::string, Tensor> random_inputs(const Graph& graph) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::map<std::string, Tensor> inputs;
  for (const GraphInput& in : graph.inputs) {
    Tensor t;
    t.dims = in.dims;
    t.values.resize(static_cast<std::size_t>(t.element_count()));
    for (float& v : t.values) v = u(rng);
    inputs[in.name] = std::move(t);
  }
  return inputs;
}

// The times of one model's runs, gathered run by run.
class Series {
 public:
  void add(const Model& model) {
    const std::vector<double> ms = ModelAccess::step_milliseconds(model);
    per_step_.resize(ms.size());
    double total = 0;
    for (std::size_t s = 0; s < ms.size(); ++s) {
      per_step_[s].push_back(ms[s]);
      total += ms[s];
    }
    totals_.push_back(total);
  }
  Measurement medians(std::map<std::string, Tensor> outputs) const {
    Measurement m;
    for (const auto& v : per_step_) m.step_ms.push_back(median(v));
    m.model_ms = median(totals_);
    m.outputs = std::move(outputs);
    return m;
  }

 private:
  std::vector<std::vector<double>> per_step_;
  std::vector<double> totals_;
};

// Each model warmed up (first launches compile on some drivers, and a CPU device's threads and caches
// settle), then run `repetitions` times, the models taking turns (turn_order): a device whose speed drifts
// during the series (a phone warming up, a neighbour's load) slows them alike.
std::vector<Measurement> measure_in_turn(const std::vector<Model*>& models,
                                         const std::map<std::string, Tensor>& inputs, int repetitions) {
  std::vector<std::map<std::string, Tensor>> outputs;
  for (Model* model : models) {
    outputs.push_back(model->run(inputs));
    model->run(inputs);
  }
  std::vector<Series> series(models.size());
  for (int r = 0; r < repetitions; ++r) {
    for (std::size_t k : turn_order(r, models.size())) {
      models[k]->run(inputs);
      series[k].add(*models[k]);
    }
  }
  std::vector<Measurement> result;
  for (std::size_t k = 0; k < models.size(); ++k) result.push_back(series[k].medians(std::move(outputs[k])));
  return result;
}

Measurement measure(const Runtime& runtime, const Graph& graph, const std::map<std::string, Tensor>& inputs,
                    int repetitions) {
  Model model(runtime, graph);
  return measure_in_turn({&model}, inputs, repetitions)[0];
}

bool same_bits(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  for (const auto& [name, t] : a) {
    const Tensor& u = b.at(name);
    if (t.words != u.words || t.values.size() != u.values.size()) return false;
    for (std::size_t i = 0; i < t.values.size(); ++i)
      if (std::memcmp(&t.values[i], &u.values[i], sizeof(float)) != 0) return false;
  }
  return true;
}

// A point's candidates with its default first, once: round 0 measures the steps under the default rule and
// calls that candidate 0, which a class keeps where nothing beats it. An op whose list starts elsewhere
// (the float convolution lists its 8x8 tiles first, while CPU devices default to its lanes kernel) would
// otherwise have the tuner store a configuration it never measured as "the default" (a stem convolution 1.7x
// slower after tuning on PoCL).
std::vector<std::string> default_first(const TuningPoint& p, TuneSearch search) {
  std::vector<std::string> list{p.default_config};
  for (std::string& c : p.candidates(search))
    if (c != p.default_config) list.push_back(std::move(c));
  return list;
}

// The model's classes, from a Model built with the table as it is.
std::map<std::string, ClassState> model_classes(const Runtime& runtime, const Graph& graph,
                                                TuneSearch search) {
  const Model model(runtime, graph);
  std::map<std::string, ClassState> classes;
  const auto points = ModelAccess::tuning_points(model);
  for (std::size_t s = 0; s < points.size(); ++s) {
    for (const TuningPoint& p : points[s]) {
      ClassState& c = classes[p.shape_class];
      c.steps.push_back(s);
      c.step_names.push_back(model.plan().steps[s].node);
      if (c.candidates.empty()) c.candidates = default_first(p, search);
    }
  }
  return classes;
}

void store_results(const RuntimeState& state, const std::map<std::string, std::string>& results,
                   TuneReport& report) {
  if (state.tuning_path.empty() || results.empty()) return;
  std::map<std::string, std::string> entries =
      read_tuning_file(state.tuning_path, tuning_key(state), [&](const std::string& m) { warn(state, m); });
  for (const auto& [shape_class, config] : results) entries[shape_class] = config;
  try {
    write_tuning_file(state.tuning_path, tuning_key(state), entries);
    report.file = state.tuning_path;
  } catch (const Error& e) {
    warn(state, std::string("the tuning results were not stored: ") + e.what());
  }
}

struct TuningScope {
  TuningScope() { tuning_now = true; }
  ~TuningScope() { tuning_now = false; }
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;
};

double class_ms(const ClassState& c, const Measurement& m) {
  double ms = 0;
  for (std::size_t s : c.steps) ms += m.step_ms[s];
  return ms;
}

int repetitions_of(const TuneOptions& o) {
  if (o.repetitions > 0) return o.repetitions;
  return o.search == TuneSearch::Fast ? 5 : o.search == TuneSearch::Normal ? 9 : 15;
}

class Tuner {
 public:
  Tuner(const Runtime& runtime, const Graph& graph, const TuneOptions& options)
      : runtime_(runtime),
        graph_(graph),
        options_(options),
        state_(*runtime.state()),
        reps_(repetitions_of(options)),
        inputs_(random_inputs(graph)) {
    classes_ = model_classes(runtime, graph, options.search);
    for (auto& [name, c] : classes_) {
      c.previous = state_.tuning.find(name);
      state_.tuning.erase(name);
      c.ms.assign(c.candidates.size(), std::nan(""));
      rounds_ = std::max(rounds_, c.candidates.size());
      progress_.total += c.candidates.size() - 1;
    }
  }
  // Unless finish() ran, the table gets back what it held before (an exception, a throwing progress hook).
  ~Tuner() {
    if (finished_) return;
    for (const auto& [name, c] : classes_) keep(name, c.previous);
  }
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  void run_rounds(TuneReport& report) {
    report_progress("default configurations");
    base_ = measure(runtime_, graph_, inputs_, reps_);
    for (auto& [name, c] : classes_) c.ms[0] = class_ms(c, base_);
    progress_.done = 1;
    for (std::size_t r = 1; r < rounds_; ++r) {
      if (options_.stop_requested && options_.stop_requested()) {
        report.stopped = true;
        break;
      }
      run_round(r);
    }
    // The defaults once more, after the candidates: the first round ran on a colder device, and a class's
    // default time is the better of the two, so noise cannot make a candidate look faster than it is.
    const Measurement again = measure(runtime_, graph_, inputs_, reps_);
    for (auto& [name, c] : classes_) c.ms[0] = std::min(c.ms[0], class_ms(c, again));
  }

  // Picks each class's fastest candidate, confirms the picks in one run together, and keeps them in the
  // table; returns the entries to store (classes measured in full, or with a confirmed winner). The report's
  // whole-model figures come from the kept configurations and the defaults timed in turn, so that they
  // compare.
  std::map<std::string, std::string> finish(TuneReport& report) {
    std::map<std::string, std::size_t> picks;
    for (const auto& [name, c] : classes_) picks[name] = fastest(c);
    for (const auto& [name, c] : classes_) keep(name, c.candidates[0]);
    Model defaults(runtime_, graph_);  // beside the picks in confirm, and beside what is kept below
    confirm(picks, defaults);
    std::map<std::string, std::string> results;
    bool differs = false;
    for (const auto& [name, c] : classes_) {
      const std::size_t best = picks[name];
      report.classes.push_back(summary(name, c, best));
      const bool complete = std::none_of(c.ms.begin(), c.ms.end(), [](double v) { return std::isnan(v); });
      if (complete || best != 0) {
        keep(name, c.candidates[best]);
        results[name] = c.candidates[best];
      } else {
        keep(name, c.previous);
      }
      const std::optional<std::string> kept = state_.tuning.find(name);
      differs |= kept && *kept != c.candidates[0];
    }
    finished_ = true;
    if (differs) {
      Model tuned(runtime_, graph_);
      const std::vector<Measurement> m = measure_in_turn({&tuned, &defaults}, inputs_, reps_);
      report.tuned_ms = m[0].model_ms;
      report.default_ms = m[1].model_ms;
    } else {  // the same configurations: one figure, not two draws of the noise
      report.default_ms = report.tuned_ms = measure_in_turn({&defaults}, inputs_, reps_)[0].model_ms;
    }
    return results;
  }

 private:
  void report_progress(const std::string& what) {
    progress_.what = what;
    if (options_.progress) options_.progress(progress_);
  }

  void keep(const std::string& name, const std::optional<std::string>& config) {
    if (config)
      state_.tuning.set(name, *config);
    else
      state_.tuning.erase(name);
  }

  // Round r: each class's r-th candidate, the others their default; outputs must equal round 0's.
  void run_round(std::size_t r) {
    std::size_t in_round = 0;
    for (const auto& [name, c] : classes_) {
      const bool has = r < c.candidates.size();
      keep(name, has ? std::optional<std::string>(c.candidates[r]) : std::nullopt);
      in_round += has;
    }
    const std::string round = "round " + std::to_string(r) + " of " + std::to_string(rounds_ - 1);
    try {
      const Measurement m = measure(runtime_, graph_, inputs_, reps_);
      if (same_bits(m.outputs, base_.outputs)) {
        for (auto& [name, c] : classes_)
          if (r < c.candidates.size()) c.ms[r] = class_ms(c, m);
      } else {
        warn(state_, "tuning " + round +
                         " computed other outputs than the default configurations; its candidates are "
                         "discarded (a driver fault?)");
      }
    } catch (const Error& e) {
      warn(state_, "tuning " + round + " failed and is skipped: " + e.what());
    }
    progress_.done += in_round;
    report_progress(round + ": " + std::to_string(in_round) + " candidates");
  }

  // The fastest measured candidate, or the default where none beats it beyond noise.
  static std::size_t fastest(const ClassState& c) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < c.ms.size(); ++i)
      if (!std::isnan(c.ms[i]) && c.ms[i] < c.ms[best]) best = i;
    return c.ms[best] < c.ms[0] * (1 - kNoiseMargin) ? best : 0;
  }

  // The picks run together, in turn with the defaults (measure_in_turn); a pick not faster beyond noise than
  // both its default's time in the rounds and its default's time beside it falls back to the default. The
  // second guards against a device that got quieter (or busier) since the rounds: picks measured in a quiet
  // stretch must also beat the defaults run beside them. Taking turns, rather than one series after the
  // other, keeps a drift of the device's speed during the confirmation from favouring either.
  void confirm(std::map<std::string, std::size_t>& picks, Model& defaults) {
    if (std::all_of(picks.begin(), picks.end(), [](const auto& p) { return p.second == 0; })) return;
    try {
      for (const auto& [name, c] : classes_) keep(name, c.candidates[picks[name]]);
      Model picked(runtime_, graph_);
      const std::vector<Measurement> m = measure_in_turn({&picked, &defaults}, inputs_, reps_);
      if (!same_bits(m[0].outputs, base_.outputs)) {
        warn(state_,
             "the tuned configurations together computed other outputs than the defaults; they are "
             "dropped (a driver fault?)");
        for (auto& p : picks) p.second = 0;
        return;
      }
      for (const auto& [name, c] : classes_) {
        const double default_ms = std::min(c.ms[0], class_ms(c, m[1]));
        if (picks[name] != 0 && !(class_ms(c, m[0]) < default_ms * (1 - kNoiseMargin))) picks[name] = 0;
      }
    } catch (const Error& e) {
      warn(state_, std::string("the tuned configurations failed together and are dropped: ") + e.what());
      for (auto& p : picks) p.second = 0;
    }
  }

  static TunedStep summary(const std::string& name, const ClassState& c, std::size_t best) {
    TunedStep t;
    t.shape_class = name;
    t.steps = c.step_names;
    t.default_config = c.candidates[0];
    t.default_ms = c.ms[0];
    t.best_config = c.candidates[best];
    t.best_ms = c.ms[best];
    t.candidates = static_cast<std::size_t>(
        std::count_if(c.ms.begin(), c.ms.end(), [](double v) { return !std::isnan(v); }));
    return t;
  }

  const Runtime& runtime_;
  const Graph& graph_;
  const TuneOptions& options_;
  RuntimeState& state_;
  const int reps_;
  const std::map<std::string, Tensor> inputs_;
  std::map<std::string, ClassState> classes_;
  std::size_t rounds_ = 1;
  TuneProgress progress_{0, 1, ""};
  Measurement base_;
  bool finished_ = false;
};

}  // namespace

bool tuning_in_progress() {
  return tuning_now;
}

}  // namespace detail

std::string tuning_file(const Runtime& runtime) {
  return detail::runtime_state(runtime, "tuning_file")->tuning_path;
}

TuneReport tune(const Runtime& runtime, const Graph& graph, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto& state = detail::runtime_state(runtime, "tune");
  // 1000 as xnorcl-tune's --reps: a count beyond it would keep the device busy for days, not measure better.
  if (options.repetitions < 0 || options.repetitions > 1000)
    throw InvalidArgument("TuneOptions::repetitions = " + std::to_string(options.repetitions) +
                          "; it takes 0 (the search's default) to 1000");
  graph.validate();
  if (!state->profiling)
    throw InvalidArgument("tuning times kernels, so it needs a Runtime whose queue has profiling enabled");
  const detail::TuningScope scope;
  TuneReport report;
  std::map<std::string, std::string> results;
  {
    detail::Tuner tuner(runtime, graph, options);
    tuner.run_rounds(report);
    results = tuner.finish(report);
  }
  if (options.store) detail::store_results(*state, results, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace xnorcl
