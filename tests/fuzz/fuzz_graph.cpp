// SPDX-License-Identifier: Apache-2.0
// The graph file loader (.xnn version 2) with arbitrary bytes: refused with InvalidArgument, or parsed into
// a graph that serialises back to the same bytes; a parsed graph is then validated (its shape inference sees
// hostile attributes and dims), which returns or throws InvalidArgument. The same bytes then go through the
// loader from memory, read in place from libFuzzer's buffer (so AddressSanitizer sees any read past it):
// it accepts exactly what parses and validates, as the same graph, and refuses everything else with
// InvalidArgument. Run with a malloc limit (.ci/fuzz.sh): a file may not make the loader allocate more than a
// small multiple of its own size.
#include <cstdlib>
#include <optional>
#include <string>

#include "xnorcl/xnorcl.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::optional<xnorcl::Graph> parsed;
  try {
    parsed = xnorcl::parse_graph(bytes);
  } catch (const xnorcl::InvalidArgument&) {
  }
  if (parsed) {
    // Constants are written in name order and each attribute map in key order, as a parsed graph holds them.
    const std::string written = xnorcl::serialize_graph(*parsed);
    check(xnorcl::serialize_graph(xnorcl::parse_graph(written)) == written);
  }
  // The loader validates; validating here as well only for parsed bytes it refused keeps an accepted input
  // at one validation, so the fuzz phase's time still buys about as many executions.
  try {
    const xnorcl::Graph loaded = xnorcl::load_graph(data, size);
    check(parsed && xnorcl::serialize_graph(loaded) == xnorcl::serialize_graph(*parsed));
  } catch (const xnorcl::InvalidArgument&) {
    if (parsed) {
      bool refused = false;
      try {
        parsed->validate();
      } catch (const xnorcl::InvalidArgument&) {
        refused = true;
      }
      check(refused);
    }
  }
  return 0;
}
