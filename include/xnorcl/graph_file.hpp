// SPDX-License-Identifier: Apache-2.0
// The graph file (.xnn version 2, docs/graph_format.md): a Graph's inputs, constants, nodes and outputs in
// one little-endian binary file. Version 1 files hold a layer chain and load with load_network
// (xnorcl/network.hpp), and load_graph reads them too, as the graph that computes the chain;
// network_file_version tells the two apart.
#pragma once

#include <cstddef>
#include <string>

#include "xnorcl/graph.hpp"

namespace xnorcl {

std::string serialize_graph(const Graph& graph);
// Throws InvalidArgument naming the offset for a malformed file (structure only; load_graph also
// validates the graph).
Graph parse_graph(const std::string& bytes);
// Validates, then writes a temporary file beside `path` and renames it.
void save_graph(const Graph& graph, const std::string& path);
// Reads a whole .xnn file (at most 4 GiB), parses it and validates the graph; InvalidArgument starting with
// the path for a malformed file.
Graph load_graph(const std::string& path);
// The same for a model held in memory (an Android asset, a download, a file mapped by the caller): `size`
// bytes at `data`, read in place and needed only during the call. Accepted and refused exactly as the same
// bytes in a file, the refusals starting with "model bytes" instead of a path; also refused: null data, no
// bytes, more than 4 GiB.
Graph load_graph(const void* data, std::size_t size);
// The file's format version (1 chain, 2 graph); InvalidArgument if it is no xnorcl network file.
int network_file_version(const std::string& path);

}  // namespace xnorcl
