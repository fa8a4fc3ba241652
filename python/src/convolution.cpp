// SPDX-License-Identifier: Apache-2.0
// xnorcl.BinaryConvolution, xnorcl.reference_binary_convolution and the threshold rules of packed output.
#include <mutex>
#include <optional>

#include "common.hpp"

namespace xnorcl::python {

namespace {

// A layer and the lock that lets Python threads share it: the C++ object may be used from one thread at a
// time, and the GIL is released while it runs.
struct Convolution {
  BinaryConvolution conv;
  std::mutex mutex;
};

// The attribute arguments shared by BinaryConvolution and reference_binary_convolution.
struct AttributeArgs {
  nb::handle strides, pads_begin, pads_end, dilations;
  float pad_value;
  std::string auto_pad;
  nb::handle input_thresholds;
  std::string mode;
};

std::array<int, 2> int_pair(nb::handle object, const char* name) {
  const std::vector<std::int64_t> v = int_sequence(object, name, 2);
  for (std::int64_t x : v) {
    if (x < INT_MIN || x > INT_MAX) {
      throw InvalidArgument(std::string(name) + ": " + std::to_string(x) + " does not fit in 32 bits");
    }
  }
  return {static_cast<int>(v[0]), static_cast<int>(v[1])};
}

AutoPad parse_auto_pad(const std::string& text) {
  const std::string v = lower(text);
  for (AutoPad p : {AutoPad::Explicit, AutoPad::SameUpper, AutoPad::SameLower, AutoPad::Valid}) {
    if (v == to_string(p)) return p;
  }
  throw InvalidArgument("auto_pad: '" + text +
                        "' is not one of 'explicit', 'same_upper', 'same_lower', 'valid'");
}

BitOrder parse_bit_order(const std::string& text) {
  const std::string v = lower(text);
  if (v == "msb" || v == "msb_first") return BitOrder::MsbFirst;
  if (v == "lsb" || v == "lsb_first") return BitOrder::LsbFirst;
  throw InvalidArgument("bit_order: '" + text + "' is not 'msb' or 'lsb'");
}

BinaryConvolution::Attributes attributes(const AttributeArgs& a) {
  BinaryConvolution::Attributes r;
  r.strides = int_pair(a.strides, "strides");
  r.pads_begin = int_pair(a.pads_begin, "pads_begin");
  r.pads_end = int_pair(a.pads_end, "pads_end");
  r.dilations = int_pair(a.dilations, "dilations");
  r.pad_value = a.pad_value;
  r.auto_pad = parse_auto_pad(a.auto_pad);
  if (!a.input_thresholds.is_none())
    r.input_thresholds = float_sequence(a.input_thresholds, "input_thresholds");
  r.mode = a.mode;
  return r;
}

// filter_bits: exactly ceil(n/8) packed bytes (1-D uint8), or one value per element in filter_shape.
Filter make_filter(nb::handle bits, const Shape& shape, const std::string& bit_order) {
  const BitOrder order = parse_bit_order(bit_order);
  const ArrayView v = array_view(bits, "filter_bits", {DType::UInt8, DType::Float32});
  const std::vector<std::int64_t> values_shape = to_vector(shape);
  if (v.shape == values_shape) {
    return v.dtype == DType::UInt8 ? Filter::from_values(static_cast<const std::uint8_t*>(v.data()), shape)
                                   : Filter::from_values(static_cast<const float*>(v.data()), shape);
  }
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    // The library names a bad shape (non-positive or overflowing) in its own words.
    if (d <= 0 || __builtin_mul_overflow(n, d, &n)) return Filter::from_packed(nullptr, 0, shape, order);
  }
  const std::int64_t bytes = n / 8 + (n % 8 != 0);
  if (v.dtype != DType::UInt8 || v.shape != std::vector<std::int64_t>{bytes}) {
    throw InvalidArgument("filter_bits: expected a 1-D uint8 array of " + std::to_string(bytes) +
                          " packed bytes (ceil(" + to_string(shape) +
                          " / 8)) or a float32/uint8 array of shape " + shape_text(values_shape) + ", got " +
                          dtype_name(v.dtype) + " of shape " + shape_text(v.shape));
  }
  return Filter::from_packed(static_cast<const std::uint8_t*>(v.data()), static_cast<std::size_t>(bytes),
                             shape, order);
}

std::string threshold_mode_name(ThresholdMode m) {
  switch (m) {
    case ThresholdMode::Greater:
      return "greater";
    case ThresholdMode::Less:
      return "less";
    case ThresholdMode::AlwaysZero:
      return "always_zero";
    case ThresholdMode::AlwaysOne:
      return "always_one";
  }
  return "?";
}

ThresholdMode parse_threshold_mode(const std::string& text) {
  for (ThresholdMode m :
       {ThresholdMode::Greater, ThresholdMode::Less, ThresholdMode::AlwaysZero, ThresholdMode::AlwaysOne}) {
    if (lower(text) == threshold_mode_name(m)) return m;
  }
  throw InvalidArgument("Threshold mode: '" + text +
                        "' is not one of 'greater', 'less', 'always_zero', 'always_one'");
}

// A sequence of Threshold rules, or of numbers (each the rule y > value).
std::vector<Threshold> threshold_rules(nb::handle object, const char* name) {
  if (nb::isinstance<nb::sequence>(object) && !nb::isinstance<nb::str>(object)) {
    std::vector<Threshold> rules;
    bool all_rules = true;
    for (nb::handle item : object) {
      Threshold t;
      if (!nb::try_cast(item, t, false)) {
        all_rules = false;
        break;
      }
      rules.push_back(t);
    }
    if (all_rules) return rules;
  }
  return greater_than(float_sequence(object, name));
}

std::optional<PoolAttributes> pool_attributes(nb::handle object) {
  if (object.is_none()) return std::nullopt;
  if (!nb::isinstance<nb::dict>(object)) {
    throw InvalidArgument(
        "max_pool: expected None or a dict of kernel, strides, pads_begin, pads_end, "
        "auto_pad, rounding_type; got " +
        nb::cast<std::string>(nb::repr(object)));
  }
  PoolAttributes p;
  for (auto [key, value] : nb::borrow<nb::dict>(object)) {
    const std::string k = nb::cast<std::string>(nb::str(key));
    if (k == "kernel")
      p.kernel = int_pair(value, "max_pool kernel");
    else if (k == "strides")
      p.strides = int_pair(value, "max_pool strides");
    else if (k == "pads_begin")
      p.pads_begin = int_pair(value, "max_pool pads_begin");
    else if (k == "pads_end")
      p.pads_end = int_pair(value, "max_pool pads_end");
    else if (k == "auto_pad")
      p.auto_pad = parse_auto_pad(nb::cast<std::string>(nb::str(value)));
    else if (k == "rounding_type") {
      const std::string r = lower(nb::cast<std::string>(nb::str(value)));
      if (r != "floor" && r != "ceil")
        throw InvalidArgument("max_pool rounding_type: '" + r + "' is not 'floor' or 'ceil'");
      p.rounding_type = r == "ceil" ? RoundingType::Ceil : RoundingType::Floor;
    } else {
      throw InvalidArgument("max_pool: unknown key '" + k +
                            "' (known: kernel, strides, pads_begin, pads_end, auto_pad, rounding_type)");
    }
  }
  return p;
}

BinaryConvolution::Options options(const std::string& output, nb::handle scale, nb::handle bias,
                                   nb::handle thresholds, nb::handle max_pool, bool input_packed) {
  BinaryConvolution::Options o;
  o.input_packed = input_packed;
  const std::string kind = lower(output);
  const bool scale_bias = kind == "scale_bias", packed = kind == "packed";
  if (kind != "float32" && !scale_bias && !packed)
    throw InvalidArgument("output: '" + output + "' is not 'float32', 'scale_bias' or 'packed'");
  if (scale_bias != (!scale.is_none() || !bias.is_none()) || scale.is_none() != bias.is_none())
    throw InvalidArgument("scale and bias: both are given with output='scale_bias' and only then (output='" +
                          output + "')");
  if (packed == thresholds.is_none())
    throw InvalidArgument("thresholds: given with output='packed' and only then (output='" + output + "')");
  if (!max_pool.is_none() && !packed) throw InvalidArgument("max_pool: needs output='packed'");
  if (scale_bias)
    o.output = BinaryConvolution::Output::scale_and_bias(float_sequence(scale, "scale"),
                                                         float_sequence(bias, "bias"));
  if (packed) o.output = BinaryConvolution::Output::packed(threshold_rules(thresholds, "thresholds"));
  o.max_pool = pool_attributes(max_pool);
  return o;
}

std::string output_kind(const BinaryConvolution& c) {
  switch (c.options().output.kind) {
    case BinaryConvolution::Output::Kind::Float:
      return "float32";
    case BinaryConvolution::Output::Kind::ScaleBias:
      return "scale_bias";
    case BinaryConvolution::Output::Kind::Packed:
      return "packed";
  }
  return "?";
}

void create_convolution(Convolution* self, const Runtime& runtime, nb::handle x_shape, nb::handle filter_bits,
                        nb::handle filter_shape, const std::string& bit_order, nb::handle strides,
                        nb::handle pads_begin, nb::handle pads_end, nb::handle dilations, float pad_value,
                        const std::string& auto_pad, nb::handle input_thresholds, const std::string& mode,
                        const std::string& output, nb::handle scale, nb::handle bias, nb::handle thresholds,
                        nb::handle max_pool, bool input_packed) {
  const Shape input = shape_argument(x_shape, "x_shape");
  const Filter filter = make_filter(filter_bits, shape_argument(filter_shape, "filter_shape"), bit_order);
  const auto a =
      attributes({strides, pads_begin, pads_end, dilations, pad_value, auto_pad, input_thresholds, mode});
  const auto o = options(output, scale, bias, thresholds, max_pool, input_packed);
  nb::gil_scoped_release release;
  new (self) Convolution{BinaryConvolution(runtime, a, input, filter, o), {}};
}

template <typename In>
nb::object run_typed(Convolution& self, const In* x) {
  const Shape out = self.conv.output_shape();
  if (self.conv.output_packed()) {
    std::vector<std::uint32_t> y;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(self.mutex);
      y = self.conv.run_packed(x);
    }
    return to_numpy(std::move(y), packed_words_shape(out));
  }
  std::vector<float> y;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    y = self.conv.run(x);
  }
  return to_numpy(std::move(y), to_vector(out));
}

nb::object run(Convolution& self, nb::handle x) {
  const Shape in = self.conv.input_shape();
  if (self.conv.input_packed()) {
    const ArrayView v = array_view(x, "x", {DType::UInt32});
    require_shape(v, packed_words_shape(in), "x (packed words [N, H, W, ceil(C/32)])");
    return run_typed(self, static_cast<const std::uint32_t*>(v.data()));
  }
  const ArrayView v = array_view(x, "x", {DType::Float32, DType::UInt8});
  require_shape(v, to_vector(in), "x");
  if (v.dtype == DType::UInt8) return run_typed(self, static_cast<const std::uint8_t*>(v.data()));
  return run_typed(self, static_cast<const float*>(v.data()));
}

nb::dict plan_dict(const Plan& p) {
  nb::dict d;
  d["variant"] = to_string(p.variant);
  nb::list launches;
  for (const Plan::Launch& l : p.launches) {
    nb::dict launch;
    launch["kernel"] = l.kernel;
    launch["global"] = nb::make_tuple(l.global[0], l.global[1]);
    launch["local"] = nb::make_tuple(l.local[0], l.local[1]);
    launches.append(launch);
  }
  d["launches"] = launches;
  d["build_options"] = p.build_options;
  d["tile_m"] = p.tile_m;
  d["tile_n"] = p.tile_n;
  d["words_per_patch"] = p.words_per_patch;
  d["word_bits"] = p.word_bits;
  d["channel_packed"] = p.channel_packed;
  d["patch_bits"] = p.patch_bits;
  d["input_packed"] = p.input_packed;
  d["output"] = p.output;
  d["chunks"] = p.chunks;
  d["scratch_bytes"] = p.scratch_bytes;
  d["text"] = p.to_string();
  return d;
}

nb::list stage_times(Convolution& self) {
  std::vector<StageTime> times;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    times = self.conv.last_stage_times();
  }
  nb::list r;
  for (const StageTime& t : times) r.append(nb::make_tuple(t.kernel, t.milliseconds));
  return r;
}

nb::object reference(nb::handle x, nb::handle filter_bits, nb::handle filter_shape,
                     const std::string& bit_order, nb::handle strides, nb::handle pads_begin,
                     nb::handle pads_end, nb::handle dilations, float pad_value, const std::string& auto_pad,
                     nb::handle input_thresholds, const std::string& mode) {
  const ArrayView v = array_view(x, "x", {DType::Float32, DType::UInt8});
  if (v.shape.size() != 4)
    throw InvalidArgument("x: expected a 4-D NCHW array, got shape " + shape_text(v.shape));
  const Shape x_shape{v.shape[0], v.shape[1], v.shape[2], v.shape[3]};
  const Filter filter = make_filter(filter_bits, shape_argument(filter_shape, "filter_shape"), bit_order);
  const auto a =
      attributes({strides, pads_begin, pads_end, dilations, pad_value, auto_pad, input_thresholds, mode});
  const Shape out = BinaryConvolution::validate(a, x_shape, filter.shape()).output;
  std::vector<float> y;
  {
    nb::gil_scoped_release release;
    y = v.dtype == DType::UInt8
            ? reference_binary_convolution(static_cast<const std::uint8_t*>(v.data()), x_shape, filter, a)
            : reference_binary_convolution(static_cast<const float*>(v.data()), x_shape, filter, a);
  }
  return to_numpy(std::move(y), to_vector(out));
}

void bind_threshold(nb::module_& m) {
  nb::class_<Threshold>(
      m, "Threshold",
      "How one channel turns a float y into a bit: 'greater' (y > value), 'less' (y < value), "
      "'always_zero' or 'always_one'. Exact IEEE comparisons; NaN gives 0 under every rule.")
      .def(
          "__init__",
          [](Threshold* self, float value, const std::string& mode) {
            new (self) Threshold{value, parse_threshold_mode(mode)};
          },
          nb::arg("value"), nb::arg("mode") = "greater")
      .def_rw("value", &Threshold::value)
      .def_prop_rw(
          "mode", [](const Threshold& t) { return threshold_mode_name(t.mode); },
          [](Threshold& t, const std::string& mode) { t.mode = parse_threshold_mode(mode); })
      .def("__repr__", [](const Threshold& t) {
        return "xnorcl.Threshold(" + std::to_string(t.value) + ", '" + threshold_mode_name(t.mode) + "')";
      });
  m.def(
      "fold_batch_norm",
      [](nb::handle scale, nb::handle bias) {
        return fold_batch_norm(float_sequence(scale, "scale"), float_sequence(bias, "bias"));
      },
      nb::arg("scale"), nb::arg("bias"),
      "The rules of a folded batch-norm followed by sign (bit = scale*y + bias > 0), one per channel.");
}

void bind_packing(nb::module_& m) {
  m.def(
      "pack_activations",
      [](nb::handle y, nb::handle thresholds) {
        const ArrayView v = array_view(y, "y", {DType::Float32});
        if (v.shape.size() != 4)
          throw InvalidArgument("y: expected a 4-D NCHW array, got shape " + shape_text(v.shape));
        const Shape s{v.shape[0], v.shape[1], v.shape[2], v.shape[3]};
        const std::vector<Threshold> rules =
            thresholds.is_none() ? std::vector<Threshold>{} : threshold_rules(thresholds, "thresholds");
        return to_numpy(pack_activations(static_cast<const float*>(v.data()), s, rules),
                        packed_words_shape(s));
      },
      nb::arg("y"), nb::arg("thresholds") = nb::none(),
      "Packs float32 NCHW values into uint32 words [N, H, W, ceil(C/32)]: channel c is bit c % 32 "
      "(LSB first) of word c // 32, bit 1 is +1, tail bits 0. thresholds: one rule per channel (Threshold "
      "or number t for y > t); None means y > 0.");
  m.def(
      "unpack_activations",
      [](nb::handle words, nb::handle shape) {
        const Shape s = shape_argument(shape, "shape");
        const ArrayView v = array_view(words, "words", {DType::UInt32});
        require_shape(v, packed_words_shape(s), "words");
        return to_numpy(unpack_activations(static_cast<const std::uint32_t*>(v.data()), s), to_vector(s));
      },
      nb::arg("words"), nb::arg("shape"),
      "Unpacks uint32 words [N, H, W, ceil(C/32)] of the logical NCHW shape into float32 0.0 / 1.0.");
}

}  // namespace

void bind_convolution(nb::module_& m) {
  bind_threshold(m);
  bind_packing(m);
  nb::class_<Convolution>(
      m, "BinaryConvolution",
      "OpenVINO BinaryConvolution-1 (xnor-popcount) on the runtime's device. Safe to call "
      "from several Python threads (calls to one layer take turns; different layers run "
      "concurrently); the GIL is released while the device works.")
      .def(
          "__init__", &create_convolution, nb::arg("runtime"), nb::arg("x_shape").none(),
          nb::arg("filter_bits").none(), nb::arg("filter_shape").none(), nb::arg("bit_order") = "msb",
          nb::arg("strides").none() = nb::make_tuple(1, 1),
          nb::arg("pads_begin").none() = nb::make_tuple(0, 0),
          nb::arg("pads_end").none() = nb::make_tuple(0, 0),
          nb::arg("dilations").none() = nb::make_tuple(1, 1), nb::arg("pad_value") = 0.0f,
          nb::arg("auto_pad") = "explicit", nb::arg("input_thresholds").none() = nb::none(),
          nb::arg("mode") = "xnor-popcount", nb::kw_only(), nb::arg("output") = "float32",
          nb::arg("scale").none() = nb::none(), nb::arg("bias").none() = nb::none(),
          nb::arg("thresholds").none() = nb::none(), nb::arg("max_pool").none() = nb::none(),
          nb::arg("input_packed") = false,
          "Validates, resolves padding, packs the filter and plans the launches (InvalidArgument before any "
          "device work). x_shape: [N, C_IN, H, W]. filter_bits: a 1-D uint8 array of exactly ceil(n/8) "
          "packed "
          "bytes, element i = ((o*C_IN + c)*KH + ky)*KW + kx in bit 7 - i%8 (bit_order 'msb') or bit i%8 "
          "('lsb') of byte i//8; or an array of filter_shape [C_OUT, C_IN, KH, KW] (float32 or uint8) whose "
          "elements > 0 are +1. pad_value: the real value of every tap in the padding. input_thresholds: "
          "C_IN values t_c (x > t_c is +1), None for 0. output: 'float32', 'scale_bias' (fmaf(scale[o], Y, "
          "bias[o])) or 'packed' (uint32 words of the bits of Y under `thresholds`, one per output channel); "
          "max_pool: a dict of kernel, strides, pads_begin, pads_end, auto_pad, rounding_type, ORing each "
          "window of packed bits. input_packed: x is uint32 words [N, H, W, ceil(C_IN/32)].")
      .def(
          "run", &run, nb::arg("x").none(),
          "x: C-contiguous float32 or uint8 NCHW of x_shape (uint32 packed words [N, H, W, ceil(C/32)] with "
          "input_packed). Returns float32 NCHW of output_shape, or uint32 packed words with output='packed'.")
      .def_prop_ro("input_shape", [](const Convolution& c) { return to_vector(c.conv.input_shape()); })
      .def_prop_ro("output_shape", [](const Convolution& c) { return to_vector(c.conv.output_shape()); })
      .def_prop_ro("pads_begin", [](const Convolution& c) { return c.conv.pads_begin(); })
      .def_prop_ro("pads_end", [](const Convolution& c) { return c.conv.pads_end(); })
      .def_prop_ro("output", [](const Convolution& c) { return output_kind(c.conv); })
      .def_prop_ro("input_packed", [](const Convolution& c) { return c.conv.input_packed(); })
      .def(
          "plan", [](const Convolution& c) { return plan_dict(c.conv.plan()); },
          "What will run: variant, launches (kernel, global and local sizes), tiles, scratch bytes; 'text' "
          "is the whole plan as text.")
      .def("last_stage_times", &stage_times,
           "(kernel, milliseconds) of device time per launch of the last run; empty without profiling.");

  m.def("reference_binary_convolution", &reference, nb::arg("x").none(), nb::arg("filter_bits").none(),
        nb::arg("filter_shape").none(), nb::arg("bit_order") = "msb",
        nb::arg("strides").none() = nb::make_tuple(1, 1), nb::arg("pads_begin").none() = nb::make_tuple(0, 0),
        nb::arg("pads_end").none() = nb::make_tuple(0, 0), nb::arg("dilations").none() = nb::make_tuple(1, 1),
        nb::arg("pad_value") = 0.0f, nb::arg("auto_pad") = "explicit",
        nb::arg("input_thresholds").none() = nb::none(), nb::arg("mode") = "xnor-popcount",
        "The host reference (float32 NCHW out), bitwise equal to what every device computes.");
}

}  // namespace xnorcl::python
