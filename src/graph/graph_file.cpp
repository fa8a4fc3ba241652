// SPDX-License-Identifier: Apache-2.0
// The graph file format (.xnn version 2, docs/graph_format.md): serialize_graph, parse_graph, save_graph,
// load_graph from a file or from memory. Every count is checked against the bytes left before anything is
// allocated, so a malformed file costs at most a small multiple of its own size.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "core/file_io.hpp"
#include "graph/byte_reader.hpp"
#include "graph/file_bytes.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/graph_file.hpp"
#include "xnorcl/network.hpp"

namespace xnorcl {

namespace {

constexpr char kMagic[8] = {'X', 'N', 'O', 'R', 'N', 'E', 'T', '1'};  // the same for every version
// Version 3 adds each input's type (u8 images); a graph of f32 inputs is still written as version 2, which
// earlier releases read.
constexpr std::uint32_t kVersion = 2, kTypedInputsVersion = 3;
constexpr std::uint32_t kMaxName = 4096;
constexpr std::uint32_t kMaxRank = 5;
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(4) << 30;  // a file is read whole: at most 4 GiB

template <class T>
using Unsigned = detail::UnsignedOf<T>;

class Writer {
 public:
  template <class T>
  void put(T v) {
    Unsigned<T> u;  // little-endian whatever the host
    std::memcpy(&u, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void text(const std::string& s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    bytes += s;
  }
  void texts(const std::vector<std::string>& v) {
    put<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
    for (const std::string& s : v) text(s);
  }
  void dims(const Dims& d) {
    put<std::uint32_t>(static_cast<std::uint32_t>(d.size()));
    for (std::int64_t x : d) put<std::int64_t>(x);
  }
  std::string bytes;
};

// The format's compound items on the library's bounded reader (graph/byte_reader.hpp).
class Reader : public detail::ByteReader {
 public:
  explicit Reader(std::string_view data) : ByteReader(data, "graph file") {}
  std::string text(const char* what) {
    const std::size_t at = offset();
    const std::uint32_t n = count(what, 1);
    if (n > kMaxName)
      fail_at(at, std::string(what) + " is " + std::to_string(n) + " bytes long, above " +
                      std::to_string(kMaxName));
    return std::string(bytes(n, what));
  }
  std::vector<std::string> texts(const char* what) {
    std::vector<std::string> v(count(what, 4));
    for (std::string& s : v) s = text(what);
    return v;
  }
  Dims dims(const char* what) {
    const std::size_t at = offset();
    const std::uint32_t rank = count(what, 8);
    if (rank == 0 || rank > kMaxRank)
      fail_at(at, std::string(what) + " has " + std::to_string(rank) + " axes (1 to " +
                      std::to_string(kMaxRank) + ")");
    Dims d(rank);
    std::int64_t n = 1;
    for (std::int64_t& x : d) {
      x = get<std::int64_t>(what);
      if (x < 1 || x > INT32_MAX || n > INT32_MAX / x)
        fail(std::string(what) + " has an axis of " + std::to_string(x) + ", or more than 2^31 - 1 elements");
      n *= x;
    }
    return d;
  }
  void raw(void* out, std::size_t n, const char* what) { std::memcpy(out, bytes(n, what).data(), n); }
  [[noreturn]] void fail_at(std::size_t at, const std::string& message) const {
    throw InvalidArgument("graph file, offset " + std::to_string(at) + ": " + message);
  }
};

std::int64_t element_count(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t x : d) n *= x;
  return n;
}

void write_attribute(Writer& w, const AttributeValue& value) {
  w.put<std::uint32_t>(static_cast<std::uint32_t>(value.index()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          w.put<T>(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.text(v);
        } else {
          w.put<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
          for (auto x : v) w.put<typename T::value_type>(x);
        }
      },
      value);
}

AttributeValue read_attribute(Reader& r) {
  const std::size_t at = r.offset();
  switch (r.get<std::uint32_t>("an attribute kind")) {
    case 0:
      return r.get<std::int64_t>("an integer attribute");
    case 1:
      return r.get<double>("a number attribute");
    case 2:
      return r.text("a string attribute");
    case 3: {
      std::vector<std::int64_t> v(r.count("an integer list's length", 8));
      for (auto& x : v) x = r.get<std::int64_t>("an integer list");
      return v;
    }
    case 4: {
      std::vector<double> v(r.count("a number list's length", 8));
      for (auto& x : v) x = r.get<double>("a number list");
      return v;
    }
    default:
      r.fail_at(at, "an attribute kind is not 0 (integer), 1 (number), 2 (string), 3 or 4 (lists)");
  }
}

Constant read_constant(Reader& r) {
  const std::size_t at = r.offset();
  const std::uint32_t type = r.get<std::uint32_t>("a constant's type");
  if (type > 1) r.fail_at(at, "a constant's type " + std::to_string(type) + " is not 0 (f32) or 1 (bits)");
  Constant c;
  c.dims = r.dims("a constant's dims");
  const std::size_t n = static_cast<std::size_t>(element_count(c.dims));
  if (type == 0) {
    r.need(n * 4, "a constant's values");
    c.values.resize(n);
    for (float& v : c.values) v = r.get<float>("a constant's values");
  } else {
    c.type = ElementType::Bits;
    r.need((n + 7) / 8, "a constant's bits");  // before sizing anything by the claimed dims
    c.bits.resize((n + 7) / 8);
    r.raw(c.bits.data(), c.bits.size(), "a constant's bits");
  }
  return c;
}

}  // namespace

std::string serialize_graph(const Graph& graph) {
  Writer w;
  w.bytes.append(kMagic, sizeof kMagic);
  const bool typed = std::any_of(graph.inputs.begin(), graph.inputs.end(),
                                 [](const GraphInput& in) { return in.type != ElementType::Float32; });
  w.put<std::uint32_t>(typed ? kTypedInputsVersion : kVersion);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(graph.inputs.size()));
  for (const GraphInput& in : graph.inputs) {
    w.text(in.name);
    if (typed) w.put<std::uint32_t>(in.type == ElementType::UInt8 ? 2 : in.type == ElementType::Bits ? 1 : 0);
    w.dims(in.dims);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(graph.constants.size()));
  for (const auto& [name, c] : graph.constants) {
    w.text(name);
    w.put<std::uint32_t>(c.type == ElementType::Bits ? 1 : 0);
    w.dims(c.dims);
    if (c.type == ElementType::Bits)
      w.bytes.append(reinterpret_cast<const char*>(c.bits.data()), c.bits.size());
    else
      for (float v : c.values) w.put<float>(v);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(graph.nodes.size()));
  for (const Node& n : graph.nodes) {
    w.text(n.name);
    w.text(n.op);
    w.texts(n.inputs);
    w.texts(n.outputs);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(n.attributes.size()));
    for (const auto& [key, value] : n.attributes) {
      w.text(key);
      write_attribute(w, value);
    }
  }
  w.texts(graph.outputs);
  return w.bytes;
}

Graph detail::parse_graph_bytes(std::string_view bytes) {
  Reader r(bytes);
  char magic[8];
  r.raw(magic, 8, "the magic");
  if (std::memcmp(magic, kMagic, 8) != 0)
    r.fail_at(0, "not an xnorcl network file (the magic is not XNORNET1)");
  const std::uint32_t version = r.get<std::uint32_t>("the version");
  if (version == 1)
    return network_graph(parse_network_bytes(bytes));  // a layer chain, as the graph it computes
  if (version != kVersion && version != kTypedInputsVersion)
    r.fail_at(8, "version " + std::to_string(version) + " is not 1, 2 or 3");
  Graph g;
  g.inputs.resize(r.count("the input count", version == kVersion ? 8 : 12));
  for (GraphInput& in : g.inputs) {
    in.name = r.text("an input name");
    if (version == kTypedInputsVersion) {
      const std::size_t at = r.offset();
      const std::uint32_t type = r.get<std::uint32_t>("an input's type");
      if (type != 0 && type != 2)
        r.fail_at(at, "input '" + in.name + "' has type " + std::to_string(type) + " (0 f32, 2 u8)");
      in.type = type == 2 ? ElementType::UInt8 : ElementType::Float32;
    }
    in.dims = r.dims("an input's dims");
  }
  const std::uint32_t constants = r.count("the constant count", 16);
  for (std::uint32_t i = 0; i < constants; ++i) {
    const std::size_t at = r.offset();
    std::string name = r.text("a constant name");
    if (!g.constants.emplace(name, read_constant(r)).second)
      r.fail_at(at, "constant '" + name + "' appears twice");
  }
  g.nodes.resize(r.count("the node count", 20));
  for (Node& n : g.nodes) {
    n.name = r.text("a node name");
    n.op = r.text("an op name");
    n.inputs = r.texts("a node's inputs");
    n.outputs = r.texts("a node's outputs");
    const std::uint32_t attributes = r.count("an attribute count", 12);
    for (std::uint32_t i = 0; i < attributes; ++i) {
      const std::size_t at = r.offset();
      std::string key = r.text("an attribute name");
      if (!n.attributes.emplace(key, read_attribute(r)).second)
        r.fail_at(at, "node '" + n.name + "' has the attribute '" + key + "' twice");
    }
  }
  g.outputs = r.texts("the graph outputs");
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " trailing bytes after the graph");
  return g;
}

void save_graph(const Graph& graph, const std::string& path) {
  graph.validate();
  const std::string bytes = serialize_graph(graph);
  detail::write_file_atomically(path, bytes);
}

namespace {

// Both loaders end here, so that a file and the same bytes in memory are accepted and refused alike; `source`
// (the path, or "model bytes") starts every refusal.
Graph load_graph_bytes(std::string_view bytes, const std::string& source) {
  try {
    if (bytes.empty()) throw InvalidArgument("empty (0 bytes): an .xnn model starts with the magic XNORNET1");
    if (std::uint64_t(bytes.size()) > kMaxFileBytes)
      throw InvalidArgument(std::to_string(bytes.size()) + " bytes, more than the " +
                            std::to_string(kMaxFileBytes) + " a model may hold");
    Graph g = detail::parse_graph_bytes(bytes);
    g.validate();
    return g;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(source + ": " + e.what());
  }
}

}  // namespace

Graph parse_graph(const std::string& bytes) {
  return detail::parse_graph_bytes(bytes);
}

Graph load_graph(const std::string& path) {
  // The limit is checked before the file is read; load_graph_bytes checks it again for buffers.
  return load_graph_bytes(detail::read_regular_file(path, kMaxFileBytes), path);
}

Graph load_graph(const void* data, std::size_t size) {
  // Refused here, not in load_graph_bytes: a string_view of a null pointer and a size is undefined.
  if (data == nullptr && size != 0)
    throw InvalidArgument("model bytes: no data (a null pointer) for " + std::to_string(size) + " bytes");
  return load_graph_bytes(std::string_view(static_cast<const char*>(data), size), "model bytes");
}

int network_file_version(const std::string& path) {
  std::optional<detail::RegularFile> file = detail::RegularFile::open(path, kMaxFileBytes);
  if (!file) throw InvalidArgument("cannot open " + path + ": no such file");
  char bytes[12];
  if (file->size() < sizeof bytes)
    throw InvalidArgument(path +
                          ": network file, offset 0: the magic and version need 12 bytes, the file has " +
                          std::to_string(file->size()));
  file->read(bytes, sizeof bytes);
  if (std::memcmp(bytes, kMagic, 8) != 0)
    throw InvalidArgument(path +
                          ": network file, offset 0: not an xnorcl network file (the magic is not XNORNET1)");
  std::uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= std::uint32_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  return static_cast<int>(version);
}

}  // namespace xnorcl
