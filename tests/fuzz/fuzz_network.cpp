// SPDX-License-Identifier: Apache-2.0
// The network file loader with arbitrary bytes: refused with InvalidArgument, or parsed into a spec that
// serialises back to a file of the same size which parses to the same spec. Run with a malloc limit
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
  try {
    const std::string written = xnorcl::serialize_network(xnorcl::parse_network(bytes));
    // Only the filters' unused trailing bits may differ (the loader clears them).
    check(written.size() == bytes.size());
    check(xnorcl::serialize_network(xnorcl::parse_network(written)) == written);
  } catch (const xnorcl::InvalidArgument&) {
  }
  return 0;
}
