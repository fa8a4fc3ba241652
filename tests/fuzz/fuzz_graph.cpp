// SPDX-License-Identifier: Apache-2.0
// The graph file loader (.xnn version 2) with arbitrary bytes: refused with InvalidArgument, or parsed into
// a graph that serialises back to the same bytes; a parsed graph is then validated (its shape inference sees
// hostile attributes and dims), which returns or throws InvalidArgument. Run with a malloc limit
// (.ci/fuzz.sh): a file may not make the loader allocate more than a small multiple of its own size.
#include <cstdlib>
#include <string>

#include "xnorcl/xnorcl.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  xnorcl::Graph graph;
  try {
    graph = xnorcl::parse_graph(bytes);
  } catch (const xnorcl::InvalidArgument&) {
    return 0;
  }
  // Constants are written in name order and each attribute map in key order, as a parsed graph holds them.
  const std::string written = xnorcl::serialize_graph(graph);
  check(xnorcl::serialize_graph(xnorcl::parse_graph(written)) == written);
  try {
    graph.validate();
  } catch (const xnorcl::InvalidArgument&) {
  }
  return 0;
}
