// SPDX-License-Identifier: Apache-2.0
// The layers the bench measures: the default set and the --layer syntax for any other.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "bench.hpp"

namespace xnorcl_bench {

namespace {

Layer make(const char* name, const char* origin, xnorcl::Shape input, std::int64_t c_out, std::int64_t k,
           int pad) {
  Layer l;
  l.name = name;
  l.origin = origin;
  l.input = input;
  l.filter = {c_out, input[1], k, k};
  l.pads = {pad, pad};
  return l;
}

// Layers are refused beyond these (int attributes; dimensions the library could not allocate anyway).
constexpr std::int64_t kMaxDimension = 100000000;
constexpr std::int64_t kMaxAttribute = 1000000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(separator, from)) != std::string::npos; from = at + 1) {
    parts.push_back(text.substr(from, at - from));
  }
  parts.push_back(text.substr(from));
  return parts;
}

// "12" or "12x7": one number for both axes, or y then x. `what` is "stride", "pad" or "dilation".
std::array<int, 2> parse_pair(const std::string& text, const std::string& spec, const char* what,
                              int minimum) {
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() > 2) throw UsageError("--layer " + spec + ": " + what + " '" + text + "' is not N or YxX");
  std::array<int, 2> v{};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string& part = parts[std::min(i, parts.size() - 1)];
    v[i] = static_cast<int>(
        xnorcl_cli::parse_int("--layer " + spec + ": " + what, part, minimum, kMaxAttribute));
  }
  return v;
}

// "1x3x8x8" with the names of its dimensions ({"N", "C", "H", "W"}), each at least 1.
std::vector<std::int64_t> parse_dims(const std::string& text, const std::string& spec,
                                     const std::vector<std::string>& names) {
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() != names.size()) {
    std::string form;
    for (const auto& n : names) form += (form.empty() ? "" : "x") + n;
    throw UsageError("--layer " + spec + ": '" + text + "' needs " + std::to_string(names.size()) +
                     " dimensions, " + form);
  }
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < names.size(); ++i) {
    dims.push_back(xnorcl_cli::parse_int("--layer " + spec + ": " + names[i] + " in '" + text + "'", parts[i],
                                         1, kMaxDimension));
  }
  return dims;
}

}  // namespace

xnorcl::BinaryConvolution::Attributes Layer::attributes(float pad_value) const {
  xnorcl::BinaryConvolution::Attributes a;
  a.strides = strides;
  a.pads_begin = pads;
  a.pads_end = pads;
  a.dilations = dilations;
  a.pad_value = pad_value;
  return a;
}

xnorcl::Shape Layer::output() const {
  return xnorcl::BinaryConvolution::validate(attributes(0), input, filter).output;
}

std::int64_t Layer::macs() const {
  const xnorcl::Shape o = output();
  return o[0] * o[1] * o[2] * o[3] * filter[1] * filter[2] * filter[3];
}

std::string Layer::describe() const {
  std::ostringstream s;
  s << xnorcl::to_string(input) << " " << filter[0] << "@" << filter[2] << "x" << filter[3] << " s"
    << strides[0];
  if (strides[1] != strides[0]) s << "x" << strides[1];
  s << " p" << pads[0];
  if (pads[1] != pads[0]) s << "x" << pads[1];
  if (dilations[0] != 1 || dilations[1] != 1) {
    s << " d" << dilations[0];
    if (dilations[1] != dilations[0]) s << "x" << dilations[1];
  }
  return s.str();
}

std::vector<Layer> default_layers() {
  return {
      make("paper_conv1", "paper conv1", {1, 3, 96, 96}, 32, 5, 2),
      make("paper_conv2", "paper conv2", {1, 32, 48, 48}, 32, 5, 2),
      make("paper_fc", "paper fc", {1, 18432, 1, 1}, 100, 1, 0),
      make("example_224", "example", {1, 3, 224, 224}, 64, 5, 2),
      make("resnet_64x56", "resnet", {1, 64, 56, 56}, 64, 3, 1),
      make("resnet_256x14", "resnet", {1, 256, 14, 14}, 256, 3, 1),
      make("resnet_512x7", "resnet", {1, 512, 7, 7}, 512, 3, 1),
  };
}

// 2^26 elements per tensor: 256 MB as float32, a few such copies on the host.
constexpr std::int64_t kMaxLayerElements = std::int64_t(1) << 26;

Layer parse_layer(const std::string& spec) {
  const std::vector<std::string> parts = split(spec, ':');
  if (parts.size() < 2) {
    throw UsageError("--layer " + spec + ": expected NxCxHxW:OxKHxKW[:sS][:pP][:dD]");
  }
  const auto x = parse_dims(parts[0], spec, {"N", "C", "H", "W"});
  const auto f = parse_dims(parts[1], spec, {"O", "KH", "KW"});
  Layer l;
  l.origin = "custom";
  l.input = {x[0], x[1], x[2], x[3]};
  l.filter = {f[0], x[1], f[1], f[2]};
  bool seen[3] = {false, false, false};
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const char* keys = "spd";
    const char* key = p.empty() ? nullptr : std::strchr(keys, p[0]);
    if (!key || !*key) throw UsageError("--layer " + spec + ": unknown part '" + p + "' (s, p or d)");
    const int index = static_cast<int>(key - keys);
    if (seen[index]) throw UsageError("--layer " + spec + ": '" + p[0] + "' given twice");
    seen[index] = true;
    const std::string value = p.substr(1);
    if (p[0] == 's') l.strides = parse_pair(value, spec, "stride", 1);
    if (p[0] == 'p') l.pads = parse_pair(value, spec, "pad", 0);
    if (p[0] == 'd') l.dilations = parse_pair(value, spec, "dilation", 1);
  }
  l.name = parts[0] + "_" + parts[1];
  xnorcl::Shape y{};
  try {
    y = l.output();  // the library's own validation: kernel larger than the padded input, overflow, ...
  } catch (const xnorcl::Error& e) {
    throw UsageError("--layer " + spec + ": " + e.what());
  }
  // The bench holds the input twice (0/1 and float values), the filter as floats and each side's expected
  // output on the host: a layer past these sizes is refused before any of them is made.
  const std::pair<const char*, xnorcl::Shape> tensors[] = {
      {"input", l.input}, {"filter", l.filter}, {"output", y}};
  for (const auto& [what, shape] : tensors) {
    const std::int64_t count = shape[0] * shape[1] * shape[2] * shape[3];
    if (count > kMaxLayerElements)
      throw UsageError("--layer " + spec + ": the " + what + " has " + std::to_string(count) +
                       " elements; the bench takes at most " + std::to_string(kMaxLayerElements) +
                       " per tensor");
  }
  return l;
}

}  // namespace xnorcl_bench
