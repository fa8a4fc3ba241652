// SPDX-License-Identifier: Apache-2.0
// The graph file (.xnn version 2, docs/graph_format.md): a Graph's inputs, constants, nodes and outputs in
// one little-endian binary file. Version 1 files hold a layer chain and load with load_network
// (xnorcl/network.hpp); is_graph_file tells the two apart.
#pragma once

#include <string>

#include "xnorcl/graph.hpp"

namespace xnorcl {

std::string serialize_graph(const Graph& graph);
// Throws InvalidArgument naming the offset for a malformed file (structure only; load_graph also
// validates the graph).
Graph parse_graph(const std::string& bytes);
// Validates, then writes a temporary file beside `path` and renames it.
void save_graph(const Graph& graph, const std::string& path);
Graph load_graph(const std::string& path);
// The file's format version (1 chain, 2 graph); InvalidArgument if it is no xnorcl network file.
int network_file_version(const std::string& path);

}  // namespace xnorcl
