// SPDX-License-Identifier: Apache-2.0
#include "ops/float_step.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

LinearStep::LinearStep(const Runtime& runtime, const std::string& file, std::string description,
                       const std::optional<std::string>& tuning_class)
    : runtime_(runtime), description_(std::move(description)) {
  const auto& s = detail::runtime_state(runtime, "Model");
  detail::RuntimeState::LinearProgram p = s->linear_program(file);
  if (tuning_class) {
    tuning_.emplace();
    p = detail::tuned_linear_program(*s, file, *tuning_class, *tuning_);
  }
  program_ = p.program;
  work_group_ = p.work_group;
}

std::vector<detail::TuningPoint> LinearStep::tuning_points() const {
  if (!tuning_) return {};
  return {*tuning_};
}

cl::Kernel LinearStep::kernel(const char* name) const {
  return detail::make_kernel(program_, name, runtime_.state()->device, work_group_);
}

cl::Event LinearStep::launch(cl::Kernel& kernel, const char* name, std::size_t items,
                             const std::vector<cl::Event>& wait, std::size_t rows) {
  const std::vector<cl::Event>* w = events_.empty() && !wait.empty() ? &wait : nullptr;
  cl::Event e = detail::enqueue_linear(runtime_.state()->queue, kernel, items, work_group_, w, name, rows);
  events_.emplace_back(name, e);
  return e;
}

cl::Buffer LinearStep::upload(const std::vector<float>& values) {
  const auto& s = runtime_.state();
  weight_bytes_ += values.size() * 4;
  return detail::cl_call(
      [&] {
        return cl::Buffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, values.size() * 4,
                          const_cast<float*>(values.data()));
      },
      "uploading the constants of " + description_);
}

std::vector<StageTime> LinearStep::stage_times() const {
  // One launch: the executor times the step's event itself.
  if (events_.size() < 2 || !runtime_.state()->profiling) return {};
  std::vector<StageTime> times;
  detail::cl_call(
      [&] {
        for (const auto& [name, e] : events_) times.push_back({name, detail::event_milliseconds(e)});
      },
      "reading the profiling events of " + description_);
  return times;
}

void check_int_elements(const NodeView& v, const Dims& dims, const std::string& what) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 1)
      throw InvalidArgument(v.where() + ": " + what + " " + to_string(dims) + " has an axis below 1");
    if (n > INT_MAX / d)
      throw InvalidArgument(v.where() + ": " + what + " " + to_string(dims) + " holds more than " +
                            std::to_string(INT_MAX) + " elements, more than the kernels index");
    n *= d;
  }
}

std::int64_t normalize_axis(const NodeView& v, std::int64_t axis, std::size_t rank, const std::string& what) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    throw InvalidArgument(v.where() + ": " + what + " " + std::to_string(axis) + " is outside [" +
                          std::to_string(-r) + ", " + std::to_string(r - 1) + "] for a " + std::to_string(r) +
                          "-D input");
  return axis < 0 ? axis + r : axis;
}

std::vector<std::int64_t> integer_constant(const NodeView& v, std::size_t input) {
  const Constant& c = v.constant(input, ElementType::Float32);
  if (c.dims.size() > 1)
    throw InvalidArgument(v.where() + ": input " + std::to_string(input) + " ('" + v.node->inputs[input] +
                          "') must be a scalar or 1-D, it is " + to_string(c.dims));
  std::vector<std::int64_t> values;
  for (float f : c.values) {
    if (!(std::fabs(f) < 9007199254740992.0) || std::trunc(f) != f)
      throw InvalidArgument(v.where() + ": input " + std::to_string(input) + " ('" + v.node->inputs[input] +
                            "') holds " + std::to_string(f) + ", not an integer");
    values.push_back(static_cast<std::int64_t>(f));
  }
  return values;
}

bool boolean_attribute(const NodeView& v, const std::string& name, std::optional<bool> fallback) {
  const auto it = v.node->attributes.find(name);
  if (it == v.node->attributes.end()) {
    if (fallback) return *fallback;
    throw InvalidArgument(v.where() + ": the attribute '" + name + "' is required");
  }
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) {
    if (*i == 0 || *i == 1) return *i == 1;
  } else if (const auto* s = std::get_if<std::string>(&it->second)) {
    if (*s == "true" || *s == "false") return *s == "true";
  }
  throw InvalidArgument(v.where() + ": " + name + " must be \"true\", \"false\", 1 or 0");
}

std::vector<std::int64_t> dims4(const Dims& dims) {
  std::vector<std::int64_t> d(4 - std::min<std::size_t>(dims.size(), 4), 1);
  d.insert(d.end(), dims.begin(), dims.end());
  return d;
}

}  // namespace xnorcl::ops
