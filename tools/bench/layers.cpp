// The layers the bench measures: SPEC 5's default set and the --layer syntax for any other.
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

// "12" or "12x7": one number for both axes, or y then x.
std::array<int, 2> parse_pair(const std::string& text, const std::string& spec, int minimum) {
  std::array<int, 2> v{};
  std::istringstream in(text);
  char sep = 0;
  if (!(in >> v[0])) throw UsageError("bad number '" + text + "' in --layer " + spec);
  v[1] = v[0];
  if (in >> sep) {
    if (sep != 'x' || !(in >> v[1])) throw UsageError("bad pair '" + text + "' in --layer " + spec);
  }
  in >> std::ws;
  if (!in.eof()) throw UsageError("trailing characters in '" + text + "' of --layer " + spec);
  if (v[0] < minimum || v[1] < minimum) {
    throw UsageError("'" + text + "' in --layer " + spec + " must be at least " + std::to_string(minimum));
  }
  return v;
}

std::vector<std::int64_t> parse_dims(const std::string& text, const std::string& spec, std::size_t count) {
  std::vector<std::int64_t> dims;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9) {
      throw UsageError("bad dimension '" + part + "' in --layer " + spec);
    }
    dims.push_back(std::stoll(part));
    if (dims.back() < 1) throw UsageError("dimension 0 in --layer " + spec);
  }
  if (dims.size() != count) {
    throw UsageError("'" + text + "' in --layer " + spec + " needs " + std::to_string(count) +
                     " dimensions separated by x");
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
      make("spec_224", "spec", {1, 3, 224, 224}, 64, 5, 2),
      make("resnet_64x56", "resnet", {1, 64, 56, 56}, 64, 3, 1),
      make("resnet_256x14", "resnet", {1, 256, 14, 14}, 256, 3, 1),
      make("resnet_512x7", "resnet", {1, 512, 7, 7}, 512, 3, 1),
  };
}

Layer parse_layer(const std::string& spec) {
  std::vector<std::string> parts;
  std::istringstream in(spec);
  std::string part;
  while (std::getline(in, part, ':')) parts.push_back(part);
  if (parts.size() < 2) {
    throw UsageError("--layer " + spec + ": expected NxCxHxW:OxKHxKW[:sS][:pP][:dD]");
  }
  const auto x = parse_dims(parts[0], spec, 4);
  const auto f = parse_dims(parts[1], spec, 3);
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
    if (p[0] == 's') l.strides = parse_pair(value, spec, 1);
    if (p[0] == 'p') l.pads = parse_pair(value, spec, 0);
    if (p[0] == 'd') l.dilations = parse_pair(value, spec, 1);
  }
  l.name = parts[0] + "_" + parts[1];
  try {
    (void)l.output();  // the library's own validation: kernel larger than the padded input, overflow, ...
  } catch (const xnorcl::Error& e) {
    throw UsageError("--layer " + spec + ": " + e.what());
  }
  return l;
}

}  // namespace xnorcl_bench
