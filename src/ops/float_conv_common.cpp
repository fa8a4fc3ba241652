// SPDX-License-Identifier: Apache-2.0
#include "ops/float_conv_common.hpp"

#include <algorithm>
#include <climits>

#include "ops/layer_common.hpp"
#include "ops/pool_attributes.hpp"
#include "runtime/device_profile.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl::ops {

BinaryConvolution::Attributes conv_attributes(const NodeView& v) {
  BinaryConvolution::Attributes a;
  a.strides = int_pair(v, "strides", a.strides);
  a.pads_begin = int_pair(v, "pads_begin", a.pads_begin);
  a.pads_end = int_pair(v, "pads_end", a.pads_end);
  a.dilations = int_pair(v, "dilations", a.dilations);
  a.auto_pad = parse_auto_pad(v, "auto_pad");
  return a;
}

void check_indexable(const NodeView& v, std::int64_t count, const std::string& what) {
  if (count > INT_MAX)
    throw InvalidArgument(v.where() + ": " + what + " holds " + std::to_string(count) +
                          " elements, more than " + std::to_string(INT_MAX) +
                          " (the kernels index with int)");
}

ConvGeometry conv_geometry(const NodeView& v, const Shape& group_input, const Shape& filter,
                           std::int64_t groups) {
  ConvGeometry g;
  try {
    g = BinaryConvolution::validate(conv_attributes(v), group_input, filter);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(v.where() + ": " + e.what());
  }
  // Both products fit int64: validate checked the output's, and the filter is a constant (below 2^31).
  check_indexable(v, g.output[0] * g.output[1] * g.output[2] * g.output[3],
                  "the output " + to_string(Dims(g.output.begin(), g.output.end())));
  const std::int64_t tiles = groups * ((filter[0] / groups + 7) / 8);
  check_indexable(v, tiles * 8 * filter[1] * filter[2] * filter[3],
                  "the weights in tiles of 8 output channels per group");
  return g;
}

std::vector<float> reference_convolution(const std::vector<float>& x, const std::vector<float>& w,
                                         const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                                         std::int64_t groups) {
  const std::int64_t N = g.output[0], O = g.output[1], OH = g.output[2], OW = g.output[3];
  const std::int64_t Cg = g.filter[1], KH = g.filter[2], KW = g.filter[3], H = g.input[2], W = g.input[3];
  const std::int64_t Og = O / groups, C = Cg * groups;
  std::vector<float> y(static_cast<std::size_t>(N * O * OH * OW));
  std::vector<double> plane(static_cast<std::size_t>(OH * OW));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < O; ++o) {
      std::fill(plane.begin(), plane.end(), 0.0);
      for (std::int64_t c = 0; c < Cg; ++c) {
        const float* xc = &x[static_cast<std::size_t>((n * C + o / Og * Cg + c) * H * W)];
        for (std::int64_t kh = 0; kh < KH; ++kh) {
          for (std::int64_t kw = 0; kw < KW; ++kw) {
            const double wv = w[static_cast<std::size_t>(((o * Cg + c) * KH + kh) * KW + kw)];
            for (std::int64_t oh = 0; oh < OH; ++oh) {
              const std::int64_t ih = oh * a.strides[0] - g.pads_begin[0] + kh * a.dilations[0];
              if (ih < 0 || ih >= H) continue;
              double* row = &plane[static_cast<std::size_t>(oh * OW)];
              for (std::int64_t ow = 0; ow < OW; ++ow) {
                const std::int64_t iw = ow * a.strides[1] - g.pads_begin[1] + kw * a.dilations[1];
                if (iw >= 0 && iw < W) row[ow] += wv * xc[ih * W + iw];
              }
            }
          }
        }
      }
      float* out = &y[static_cast<std::size_t>((n * O + o) * OH * OW)];
      for (std::int64_t i = 0; i < OH * OW; ++i)
        out[i] = static_cast<float>(plane[static_cast<std::size_t>(i)]);
    }
  }
  return y;
}

// ---- Epilogue

namespace {

// The stage of a tail node: Multiply 0, Add 1, Relu 2; -1 for anything else.
int stage_of(const NodeView& v) {
  const std::string& op = v.node->op;
  return op == "Multiply" ? 0 : op == "Add" ? 1 : op == "Relu" ? 2 : -1;
}

// A constant f32 of one value, or of one value per channel at axis 1 of `output` (after numpy's right
// alignment; every other axis 1): multiplying or adding it leaves the output's dims as they are.
bool per_channel_constant(const NodeView& v, const Dims& output) {
  if (v.inputs.size() != 2 || !v.constants[1] || v.constants[1]->type != ElementType::Float32) return false;
  if (v.text("auto_broadcast", "numpy") != "numpy") return false;
  const Dims& d = v.constants[1]->dims;
  if (d.size() > output.size()) return false;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::size_t axis = output.size() - d.size() + i;
    if (d[i] != 1 && !(axis == 1 && d[i] == output[1])) return false;
  }
  return true;
}

std::vector<float> per_channel_values(const NodeView& v, std::int64_t channels) {
  const std::vector<float>& values = v.constants[1]->values;
  if (values.size() == 1) return std::vector<float>(static_cast<std::size_t>(channels), values[0]);
  return values;
}

}  // namespace

bool epilogue_accepts(const std::vector<NodeView>& fused, const NodeView& next, const Dims& output) {
  const int stage = stage_of(next);
  if (stage < 0) return false;
  if (!fused.empty() && stage <= stage_of(fused.back())) return false;
  if (stage == 2) return next.inputs.size() == 1;
  return per_channel_constant(next, output);
}

Epilogue epilogue_of(const std::vector<NodeView>& fused, std::int64_t channels) {
  Epilogue e;
  e.scale.assign(static_cast<std::size_t>(channels), 1.0f);
  e.bias.assign(static_cast<std::size_t>(channels), 0.0f);
  for (const NodeView& v : fused) {
    switch (stage_of(v)) {
      case 0:
        e.scale = per_channel_values(v, channels);
        e.scaled = true;
        break;
      case 1:
        e.bias = per_channel_values(v, channels);
        e.biased = true;
        break;
      default:
        e.relu = true;
    }
  }
  return e;
}

std::string Epilogue::describe() const {
  std::string s;
  if (scaled) s += " scale";
  if (biased) s += std::string(scaled ? "," : "") + " bias";
  if (relu) s += std::string(scaled || biased ? "," : "") + " relu";
  return s.empty() ? s : " +" + s;
}

// ---- The device step

namespace {

// The program a launch runs: the runtime's, or the variant its options name (nothing where a kernel of it
// refuses the runtime's local size for that file).
std::optional<detail::RuntimeState::LinearProgram> launch_program(const detail::RuntimeState& s,
                                                                  const FloatLaunch& l) {
  const detail::RuntimeState::LinearProgram& base = s.linear_program(l.file);
  const std::size_t work_group = l.work_group ? l.work_group : base.work_group;
  if (l.options.empty() && work_group == base.work_group) return base;
  const detail::NetworkProgram& table = detail::network_program(l.file);
  return s.program_variant(l.file, detail::network_build_options(table, s.variant, work_group) + l.options,
                           table.kernels, work_group);
}

class FloatStep final : public DeviceStep {
 public:
  FloatStep(const Runtime& rt, FloatLaunch launch, const Epilogue& e)
      : runtime_(rt), launch_(std::move(launch)), relu_(e.relu ? 1 : 0) {
    const auto& s = detail::runtime_state(rt, launch_.kernel);
    const auto program = launch_program(*s, launch_);
    if (!program)
      throw Error(std::string("no program of ") + launch_.file + " with '" + launch_.options + "'");
    wg_ = program->work_group;
    kernel_ = detail::make_kernel(program->program, launch_.kernel, s->device, wg_);
    if (launch_.copy)
      copy_kernel_ = detail::make_kernel(program->program, launch_.copy->kernel, s->device, wg_);
    const std::size_t copy_bytes = launch_.copy ? launch_.copy->floats * sizeof(float) : 0;
    detail::cl_call(
        [&] {
          weights_ = buffer(s->context, launch_.weights);
          scale_ = buffer(s->context, e.scale);
          bias_ = buffer(s->context, e.bias);
          if (copy_bytes) copy_ = cl::Buffer(s->context, CL_MEM_READ_WRITE, copy_bytes);
        },
        std::string("uploading the weights of ") + launch_.kernel);
    weight_bytes_ = (launch_.weights.size() + e.scale.size() + e.bias.size()) * sizeof(float) + copy_bytes;
    launch_.weights.clear();
    launch_.weights.shrink_to_fit();
  }

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    copy_event_ = cl::Event();
    std::vector<cl::Event> after_copy;
    const std::vector<cl::Event>* main_wait = &wait;
    if (launch_.copy) {
      detail::cl_call(
          [&] {
            cl_uint i = 0;
            copy_kernel_.setArg(i++, *in[0]);
            copy_kernel_.setArg(i++, copy_);
            for (std::int32_t p : launch_.copy->params) copy_kernel_.setArg(i++, cl_int(p));
          },
          std::string("setting the arguments of ") + launch_.copy->kernel);
      copy_event_ = detail::enqueue_linear(runtime_.state()->queue, copy_kernel_, launch_.copy->total, wg_,
                                           &wait, launch_.copy->kernel);
      after_copy.push_back(copy_event_);  // a caller's queue may run its commands out of order
      main_wait = &after_copy;
    }
    detail::cl_call(
        [&] {
          cl_uint i = 0;
          kernel_.setArg(i++, launch_.copy ? copy_ : *in[0]);
          kernel_.setArg(i++, weights_);
          kernel_.setArg(i++, scale_);
          kernel_.setArg(i++, bias_);
          kernel_.setArg(i++, *out[0]);
          for (std::int32_t p : launch_.params) kernel_.setArg(i++, cl_int(p));
          kernel_.setArg(i++, cl_int(relu_));
        },
        std::string("setting the arguments of ") + launch_.kernel);
    const std::size_t global = launch_.work_group_per_item ? launch_.total * wg_ : launch_.total;
    main_event_ =
        detail::enqueue_linear(runtime_.state()->queue, kernel_, global, wg_, main_wait, launch_.kernel);
    return main_event_;
  }
  // One launch: the executor times the step's event itself; with the input copy, both launches.
  std::vector<StageTime> stage_times() const override {
    if (!launch_.copy || !runtime_.state()->profiling || copy_event_() == nullptr) return {};
    std::vector<StageTime> times;
    detail::cl_call(
        [&] {
          times.push_back({launch_.copy->kernel, detail::event_milliseconds(copy_event_)});
          times.push_back({launch_.kernel, detail::event_milliseconds(main_event_)});
        },
        std::string("reading the profiling events of ") + launch_.kernel);
    return times;
  }
  std::size_t weight_bytes() const override { return weight_bytes_; }
  std::string describe() const override { return launch_.description; }
  std::vector<detail::TuningPoint> tuning_points() const override {
    if (!launch_.tuning) return {};
    return {*launch_.tuning};
  }

 private:
  static cl::Buffer buffer(const cl::Context& context, const std::vector<float>& values) {
    return cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(float),
                      const_cast<float*>(values.data()));
  }

  Runtime runtime_;
  FloatLaunch launch_;
  int relu_ = 0;
  std::size_t wg_ = 1;
  cl::Kernel kernel_, copy_kernel_;
  cl::Buffer weights_, scale_, bias_, copy_;
  cl::Event copy_event_, main_event_;
  std::size_t weight_bytes_ = 0;
};

}  // namespace

std::string convolution_class(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                              std::int64_t groups) {
  return xnorcl::to_string(g.input) + " -> " + xnorcl::to_string(g.output) + " kernel " +
         std::to_string(g.filter[2]) + "x" + std::to_string(g.filter[3]) + " stride " +
         std::to_string(a.strides[0]) + "x" + std::to_string(a.strides[1]) + " dilation " +
         std::to_string(a.dilations[0]) + "x" + std::to_string(a.dilations[1]) + " groups " +
         std::to_string(groups);
}

bool is_pointwise(const ConvGeometry& g) {
  return g.filter[2] == 1 && g.filter[3] == 1 && g.pads_begin[0] == 0 && g.pads_begin[1] == 0 &&
         g.pads_end[0] == 0 && g.pads_end[1] == 0;
}

namespace {

// A float convolution's configuration as the tuning table holds it: "cols=C wg=W" (tiles of 8 channels x C
// columns), "lanes=6 wg=W" (16 channels in vector lanes x 6 columns) or "split=16 wg=W" (6 channels x 16
// columns in vector lanes on a padded, phase-split copy of the input, or x 16 positions for a 1x1 window, on
// the plane itself at stride 1 or on a copy of the strided pixels; "split=16 rows=2 wg=W": two output rows,
// or runs of positions, per work-item; "split=16 band=B": with a max-pool in the kernel, bands of B pooled
// rows per work-item, 1 to kMaxPoolBand, else kDefaultPoolBand), the kernel and the work-group size searched
// together (one step, one time: two classes changing at once could not tell their effects apart). An entry
// without wg (an older file) keeps the program's work-group size.
struct ConvConfig {
  FloatConvKernel kernel = FloatConvKernel::Tiles;
  int columns = detail::kFloatConvColumns;  // the tiles' or the lanes'
  int rows = 1;                             // the Split kernels' output rows (or runs) per work-item
  int band = kDefaultPoolBand;              // the pooling Split kernels' pooled rows per work-item
  std::optional<int> work_group;
};

std::string config_text(FloatConvKernel kernel, int columns, std::size_t work_group, int rows = 1,
                        int band = kDefaultPoolBand) {
  const char* name = kernel == FloatConvKernel::Tiles   ? "cols="
                     : kernel == FloatConvKernel::Lanes ? "lanes="
                                                        : "split=";
  return name + std::to_string(columns) + (rows == 1 ? "" : " rows=" + std::to_string(rows)) +
         (band == kDefaultPoolBand ? "" : " band=" + std::to_string(band)) + " " +
         detail::work_group_config(work_group);
}

int lane_columns(FloatConvKernel kernel) {
  return kernel == FloatConvKernel::Lanes ? detail::kFloatConvLaneColumns : detail::kFloatConvSplitColumns;
}

// The configuration a text names, or nothing where it names no kernel this layer may run (split: whether
// the Split kernels may, split_allowed; banded: whether the Split kernel would max-pool in its epilogue,
// which a band needs).
std::optional<ConvConfig> parse_config(const std::string& text, bool split, bool banded) {
  const auto c = detail::config_value(text, "cols"), l = detail::config_value(text, "lanes"),
             p = detail::config_value(text, "split"), rows = detail::config_value(text, "rows"),
             band = detail::config_value(text, "band");
  ConvConfig config;
  config.work_group = detail::config_value(text, "wg");
  // rows only with split, as 1 or 2; a rows word that is no number is refused, not read as absent. Likewise
  // band, with split where the kernel pools, 1 to kMaxPoolBand.
  // (A word after other whitespace than a space is a word too: config_value reads it.)
  const bool rows_word = rows || (" " + text).find(" rows=") != std::string::npos;
  if (rows_word && (!rows || !p || (*rows != 1 && *rows != 2))) return std::nullopt;
  config.rows = rows.value_or(1);
  const bool band_word = band || (" " + text).find(" band=") != std::string::npos;
  if (band_word && (!band || !p || !banded || *band < 1 || *band > kMaxPoolBand)) return std::nullopt;
  config.band = band.value_or(kDefaultPoolBand);
  if (c && !l && !p && (*c == 8 || *c == 16)) {
    config.columns = *c;
  } else if (l && !c && !p && *l == detail::kFloatConvLaneColumns) {
    config.kernel = FloatConvKernel::Lanes;
    config.columns = *l;
  } else if (p && !c && !l && split && *p == detail::kFloatConvSplitColumns) {
    config.kernel = FloatConvKernel::Split;
    config.columns = *p;
  } else {
    return std::nullopt;
  }
  return config;
}

// The tuner's candidates: at each work-group size of the search, the tiles at each column count, channels
// in lanes and, where the layer allows it (split), columns or positions in lanes; where the Split kernel
// max-pools in its epilogue (banded) also other bands of pooled rows (detail::max_pool_band_candidates).
std::vector<std::string> conv_candidates(TuneSearch search, std::size_t base_wg, std::size_t cap, bool split,
                                         bool banded) {
  std::vector<std::string> texts;
  for (std::size_t wg : detail::linear_work_group_candidates(search, base_wg, cap)) {
    for (int columns : detail::float_conv_column_candidates(search))
      texts.push_back(config_text(FloatConvKernel::Tiles, columns, wg));
    texts.push_back(config_text(FloatConvKernel::Lanes, lane_columns(FloatConvKernel::Lanes), wg));
    if (!split) continue;
    for (int rows : {1, 2}) {
      texts.push_back(config_text(FloatConvKernel::Split, lane_columns(FloatConvKernel::Split), wg, rows));
      if (!banded) continue;
      for (int band : detail::max_pool_band_candidates(search))
        texts.push_back(
            config_text(FloatConvKernel::Split, lane_columns(FloatConvKernel::Split), wg, rows, band));
    }
  }
  return texts;
}

// The device's default: tiles on GPUs; on CPUs columns or positions in lanes where the layer allows it (in
// detail::float_conv_split_rows rows or runs), else channels in lanes.
std::string default_conv_config(const detail::DeviceProfile& profile, bool split, std::size_t work_group) {
  if (!detail::float_conv_lanes_by_default(profile))
    return config_text(FloatConvKernel::Tiles, detail::kFloatConvColumns, work_group);
  if (!split) return config_text(FloatConvKernel::Lanes, lane_columns(FloatConvKernel::Lanes), work_group);
  return config_text(FloatConvKernel::Split, lane_columns(FloatConvKernel::Split), work_group,
                     detail::float_conv_split_rows(profile));
}

}  // namespace

namespace {

// A convolution step whose kernel cannot max-pool in its epilogue, then the pool's own launch: the
// convolution writes a scratch tensor of the step's own that the pool reads.
class PoolAfterStep final : public DeviceStep {
 public:
  PoolAfterStep(const Runtime& runtime, std::unique_ptr<DeviceStep> convolution, const char* kernel,
                const FusedMaxPool& pool)
      : runtime_(runtime),
        convolution_(std::move(convolution)),
        kernel_(kernel),
        pool_(runtime, pool.attributes, pool.geometry.input),
        scratch_bytes_(static_cast<std::size_t>(pool.geometry.input[0] * pool.geometry.input[1] *
                                                pool.geometry.input[2] * pool.geometry.input[3]) *
                       sizeof(float)) {
    detail::cl_call(
        [&] { scratch_ = cl::Buffer(runtime.state()->context, CL_MEM_READ_WRITE, scratch_bytes_); },
        "allocating the output of a convolution before its max-pool");
  }
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    convolution_event_ = convolution_->enqueue(in, {&scratch_}, wait);
    const std::vector<cl::Event> after{convolution_event_};
    pool_event_ = pool_.enqueue(scratch_, *out[0], &after);
    return pool_event_;
  }
  std::vector<StageTime> stage_times() const override {
    if (!runtime_.state()->profiling || pool_event_() == nullptr) return {};
    std::vector<StageTime> times = convolution_->stage_times();
    detail::cl_call(
        [&] {
          if (times.empty()) times.push_back({kernel_, detail::event_milliseconds(convolution_event_)});
          times.push_back({pool_.kernel(), detail::event_milliseconds(pool_event_)});
        },
        "reading the profiling events of a convolution and its max-pool");
    return times;
  }
  std::size_t weight_bytes() const override { return convolution_->weight_bytes() + scratch_bytes_; }
  std::string describe() const override {
    return convolution_->describe() + ", then " + pool_.kernel() + " -> " +
           xnorcl::to_string(pool_.output_shape());
  }
  std::vector<detail::TuningPoint> tuning_points() const override { return convolution_->tuning_points(); }

 private:
  Runtime runtime_;
  std::unique_ptr<DeviceStep> convolution_;
  const char* kernel_;
  MaxPool pool_;
  std::size_t scratch_bytes_;
  cl::Buffer scratch_;
  cl::Event convolution_event_, pool_event_;
};

// The step of a convolution's launch; with a fused pool, the launch pools (`pooled`) or the pool's own
// launch follows it.
std::unique_ptr<DeviceStep> convolution_step(const Runtime& runtime, FloatLaunch launch,
                                             const Epilogue& epilogue,
                                             const std::optional<FusedMaxPool>& pool, bool pooled) {
  if (!pool) return make_float_step(runtime, std::move(launch), epilogue);
  if (pooled)
    return make_float_step(
        runtime, std::move(launch), epilogue,
        ", max-pooled 3x3/2 in the same launch -> " + xnorcl::to_string(pool->geometry.output));
  const char* kernel = launch.kernel;
  return std::make_unique<PoolAfterStep>(runtime, make_float_step(runtime, std::move(launch), epilogue),
                                         kernel, *pool);
}

}  // namespace

std::unique_ptr<DeviceStep> plan_convolution(const Runtime& runtime, const ConvGeometry& g,
                                             const BinaryConvolution::Attributes& a,
                                             const std::vector<float>& w, std::int64_t groups,
                                             const Epilogue& epilogue,
                                             const std::optional<FusedMaxPool>& pool) {
  const auto& s = detail::runtime_state(runtime, "Convolution");
  const std::size_t base_wg = s->linear_program("convolution.cl").work_group, cap = s->work_group_cap;
  const bool split = split_allowed(g, a, w, groups);
  // The pool runs in the kernel's epilogue where the kernel can (convolution_split, comparing floats
  // natively as the pool's own kernel does on such a device), else as its own launch after it.
  const bool banded =
      pool && split && s->floats_compare_exactly && pools_in_kernel(g, a, groups, pool->geometry);
  const auto pools_here = [banded](const ConvConfig& config) {
    return banded && config.kernel == FloatConvKernel::Split;
  };
  const auto accept = [split, banded, cap](const std::string& text) {
    const auto config = parse_config(text, split, banded);
    return config && (!config->work_group || detail::linear_work_group_fits(*config->work_group, cap));
  };
  const auto candidates = [base_wg, cap, split, banded](TuneSearch search) {
    return conv_candidates(search, base_wg, cap, split, banded);
  };
  const auto launch_of = [&](const std::string& text) {
    const ConvConfig config = *parse_config(text, split, banded);
    FloatLaunch launch = convolution_launch(g, a, w, groups, config.kernel, config.columns, config.rows,
                                            pools_here(config) ? &pool->geometry : nullptr, config.band);
    launch.work_group = static_cast<std::size_t>(config.work_group.value_or(static_cast<int>(base_wg)));
    return launch;
  };
  const std::string default_config = default_conv_config(s->profile, split, base_wg);
  // A pooled convolution's best configuration is timed with its pool: a class of its own.
  detail::TuningPoint point = detail::choose_config(
      *s, "convolution " + convolution_class(g, a, groups) + (pool ? " max-pooled" : ""), default_config,
      accept, candidates);
  FloatLaunch launch = launch_of(point.config);
  if (!launch_program(*s, launch)) {  // a kernel refuses that local size, or the wider tiles, here
    if (point.tuned)
      detail::warn(*s, "the tuned configuration '" + point.config + "' of " + point.shape_class +
                           " is refused by a kernel of convolution.cl on this device; using the default");
    point.config = point.default_config;
    point.tuned = false;
    launch = launch_of(point.config);
    launch.work_group = 0;
  }
  const bool in_kernel = pools_here(*parse_config(point.config, split, banded));
  launch.tuning = std::move(point);
  return convolution_step(runtime, std::move(launch), epilogue, pool, in_kernel);
}

std::unique_ptr<DeviceStep> make_work_group_tuned_step(const Runtime& runtime, FloatLaunch launch,
                                                       const Epilogue& epilogue, const std::string& what) {
  const auto& s = detail::runtime_state(runtime, launch.kernel);
  detail::TuningPoint point;
  launch.work_group = detail::tuned_linear_program(*s, launch.file, what, point).work_group;
  launch.tuning = std::move(point);
  return make_float_step(runtime, std::move(launch), epilogue);
}

std::unique_ptr<DeviceStep> make_float_step(const Runtime& runtime, FloatLaunch launch,
                                            const Epilogue& epilogue, const std::string& after_epilogue) {
  launch.description += epilogue.describe() + after_epilogue;
  return std::make_unique<FloatStep>(runtime, std::move(launch), epilogue);
}

}  // namespace xnorcl::ops
