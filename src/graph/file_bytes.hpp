// SPDX-License-Identifier: Apache-2.0
// The .xnn formats parsed from bytes held elsewhere (a file just read, or a caller's buffer such as an
// Android asset), in place: a model's bytes are never copied only to be parsed. parse_graph and parse_network
// are these on a std::string.
#pragma once

#include <string_view>

#include "xnorcl/graph.hpp"
#include "xnorcl/network.hpp"

namespace xnorcl::detail {

// Structure only, InvalidArgument naming the offset; a version-1 chain comes back as the graph it computes.
Graph parse_graph_bytes(std::string_view bytes);
NetworkSpec parse_network_bytes(std::string_view bytes);

}  // namespace xnorcl::detail
