// SPDX-License-Identifier: Apache-2.0
// The network file format of docs/weights_format.md: save_network and load_network.
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/file_io.hpp"
#include "graph/byte_reader.hpp"
#include "graph/file_bytes.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/network.hpp"

namespace xnorcl {
namespace {

constexpr char kMagic[8] = {'X', 'N', 'O', 'R', 'N', 'E', 'T', '1'};
constexpr std::uint32_t kVersion = 1;

template <class T>
using Unsigned = detail::UnsignedOf<T>;

// A network file's shapes: dimensions 1 .. 2^31-1 and at most 2^31-1 elements in all (the loaders count
// elements in 32-bit ints). The writer and the reader keep this one rule, so that a file that is written can
// be read. What is wrong with dimension d of a shape whose earlier dimensions hold n elements, or "" (then n
// takes d in).
std::string add_dimension(std::int64_t& n, std::int64_t d) {
  if (d <= 0 || d > INT32_MAX)
    return "has a dimension " + std::to_string(d) + " that is not from 1 to " + std::to_string(INT32_MAX);
  if (n > INT32_MAX / d) return "has more than 2^31-1 elements";
  n *= d;
  return "";
}

class Writer {
 public:
  template <class T>
  void put(T v) {
    // Little-endian whatever the host: byte by byte from the value's unsigned representation.
    Unsigned<T> u;
    std::memcpy(&u, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void pair(const std::array<int, 2>& a) {
    put<std::int32_t>(a[0]);
    put<std::int32_t>(a[1]);
  }
  void shape(const Shape& s) {
    std::int64_t n = 1;
    for (std::int64_t d : s) {
      const std::string problem = add_dimension(n, d);
      if (!problem.empty())
        throw InvalidArgument("a network file cannot hold the shape " + to_string(s) + ": it " + problem);
    }
    for (std::int64_t d : s) put<std::int64_t>(d);
  }
  void filter(const Filter& f) {
    shape(f.shape());
    const auto& b = f.msb_first_bytes();
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  std::string bytes;
};

// The format's compound fields on top of the bounds-checked reader.
class Reader : public detail::ByteReader {
 public:
  explicit Reader(std::string_view data) : ByteReader(data, "network file") {}
  std::array<int, 2> pair(const char* what) {
    const std::int32_t a = get<std::int32_t>(what);
    return {a, get<std::int32_t>(what)};
  }
  std::uint32_t enumeration(const char* what, std::uint32_t limit) {
    const std::uint32_t v = get<std::uint32_t>(what);
    if (v >= limit) fail(std::string(what) + " = " + std::to_string(v) + " is not a known value");
    return v;
  }
  Shape shape(const char* what) {
    Shape s{};
    std::int64_t n = 1;
    for (auto& d : s) {
      d = get<std::int64_t>(what);
      const std::string problem = add_dimension(n, d);  // at the offset of the dimension that breaks it
      if (!problem.empty()) fail(std::string(what) + " " + problem);
    }
    return s;
  }
  Filter filter(const char* what) {
    const Shape s = shape(what);
    const std::string_view b = bytes(static_cast<std::size_t>((detail::element_count(s) + 7) / 8), what);
    return Filter::from_packed(reinterpret_cast<const std::uint8_t*>(b.data()), b.size(), s,
                               BitOrder::MsbFirst);
  }
};

std::uint32_t auto_pad_code(AutoPad p) {
  switch (p) {
    case AutoPad::Explicit:
      return 0;
    case AutoPad::SameUpper:
      return 1;
    case AutoPad::SameLower:
      return 2;
    case AutoPad::Valid:
      return 3;
  }
  return 0;
}
const AutoPad kAutoPads[] = {AutoPad::Explicit, AutoPad::SameUpper, AutoPad::SameLower, AutoPad::Valid};

}  // namespace

std::string serialize_network(const NetworkSpec& spec) {
  Writer w;
  w.bytes.append(kMagic, sizeof kMagic);
  w.put<std::uint32_t>(kVersion);
  w.shape(spec.input);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(spec.layers.size()));
  for (const Layer& layer : spec.layers) {
    w.put<std::uint32_t>(static_cast<std::uint32_t>(layer.index()));
    if (const auto* c = std::get_if<ConvolutionLayer>(&layer)) {
      const auto& a = c->attributes;
      w.pair(a.strides);
      w.pair(a.pads_begin);
      w.pair(a.pads_end);
      w.pair(a.dilations);
      w.put<std::uint32_t>(auto_pad_code(a.auto_pad));
      w.put<float>(a.pad_value);
      w.put<std::uint32_t>(static_cast<std::uint32_t>(a.input_thresholds.size()));
      for (float t : a.input_thresholds) w.put<float>(t);
      w.filter(c->filter);
    } else if (const auto* t = std::get_if<ThresholdLayer>(&layer)) {
      w.put<std::uint32_t>(static_cast<std::uint32_t>(t->rules.size()));
      for (const Threshold& r : t->rules) {
        w.put<float>(r.value);
        w.put<std::uint32_t>(static_cast<std::uint32_t>(r.mode));
      }
    } else if (const auto* s = std::get_if<ScaleBiasLayer>(&layer)) {
      if (s->scale.size() != s->bias.size())
        throw InvalidArgument("save_network: scale and bias sizes differ");
      w.put<std::uint32_t>(static_cast<std::uint32_t>(s->scale.size()));
      for (float v : s->scale) w.put<float>(v);
      for (float v : s->bias) w.put<float>(v);
    } else if (const auto* p = std::get_if<MaxPoolLayer>(&layer)) {
      const auto& a = p->attributes;
      w.pair(a.kernel);
      w.pair(a.strides);
      w.pair(a.pads_begin);
      w.pair(a.pads_end);
      w.put<std::uint32_t>(auto_pad_code(a.auto_pad));
      w.put<std::uint32_t>(a.rounding_type == RoundingType::Ceil ? 1 : 0);
    } else if (const auto* f = std::get_if<FullyConnectedLayer>(&layer)) {
      w.filter(f->weights);
    }
  }
  return w.bytes;
}

NetworkSpec detail::parse_network_bytes(std::string_view bytes) {
  Reader r(bytes);
  r.need(sizeof kMagic, "the magic");
  if (bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0)
    r.fail("not an xnorcl network file (magic)");
  for (std::size_t i = 0; i < sizeof kMagic; ++i) r.get<std::uint8_t>("the magic");
  const std::uint32_t version = r.get<std::uint32_t>("the version");
  if (version != kVersion) r.fail("version " + std::to_string(version) + ", this library reads version 1");
  NetworkSpec spec;
  spec.input = r.shape("the input shape");
  const std::uint32_t layers = r.count("the layer count", 4);  // each at least its kind
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::uint32_t kind = r.enumeration("a layer kind", 5);
    if (kind == 0) {
      BinaryConvolution::Attributes a;
      a.strides = r.pair("strides");
      a.pads_begin = r.pair("pads_begin");
      a.pads_end = r.pair("pads_end");
      a.dilations = r.pair("dilations");
      a.auto_pad = kAutoPads[r.enumeration("auto_pad", 4)];
      a.pad_value = r.get<float>("pad_value");
      a.input_thresholds.resize(r.count("the threshold count", 4));
      for (float& t : a.input_thresholds) t = r.get<float>("a threshold");
      Filter f = r.filter("the filter");
      spec.layers.push_back(ConvolutionLayer{a, std::move(f)});
    } else if (kind == 1) {
      ThresholdLayer t;
      t.rules.resize(r.count("the rule count", 8));  // value and mode
      for (Threshold& rule : t.rules) {
        rule.value = r.get<float>("a threshold");
        rule.mode = static_cast<ThresholdMode>(r.enumeration("a threshold mode", 4));
      }
      spec.layers.push_back(std::move(t));
    } else if (kind == 2) {
      ScaleBiasLayer s;
      s.scale.resize(r.count("the channel count", 8));  // scale and bias
      s.bias.resize(s.scale.size());
      for (float& v : s.scale) v = r.get<float>("a scale");
      for (float& v : s.bias) v = r.get<float>("a bias");
      spec.layers.push_back(std::move(s));
    } else if (kind == 3) {
      PoolAttributes a;
      a.kernel = r.pair("kernel");
      a.strides = r.pair("strides");
      a.pads_begin = r.pair("pads_begin");
      a.pads_end = r.pair("pads_end");
      a.auto_pad = kAutoPads[r.enumeration("auto_pad", 4)];
      a.rounding_type = r.enumeration("rounding_type", 2) == 1 ? RoundingType::Ceil : RoundingType::Floor;
      spec.layers.push_back(MaxPoolLayer{a});
    } else {
      spec.layers.push_back(FullyConnectedLayer{r.filter("the weights")});
    }
  }
  if (!r.done()) r.fail(std::to_string(r.left()) + " trailing bytes after the last layer");
  return spec;
}

NetworkSpec parse_network(const std::string& bytes) {
  return detail::parse_network_bytes(bytes);
}

void save_network(const NetworkSpec& spec, const std::string& path) {
  const std::string bytes = serialize_network(spec);
  try {
    detail::write_file_atomically(path, bytes);
  } catch (const Error& e) {
    throw Error(std::string("save_network: ") + e.what());
  }
}

// Any size a regular file may have; never a directory, FIFO or device.
NetworkSpec load_network(const std::string& path) {
  std::string bytes;
  try {
    bytes = detail::read_regular_file(path, std::numeric_limits<std::uint64_t>::max());
  } catch (const Error& e) {
    throw InvalidArgument(std::string("load_network: ") + e.what());
  }
  try {
    return parse_network(bytes);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
}

}  // namespace xnorcl
