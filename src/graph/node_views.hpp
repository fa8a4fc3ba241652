// SPDX-License-Identifier: Apache-2.0
// The validated form of a Graph that the reference and the executor share.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "xnorcl/graph.hpp"

namespace xnorcl::detail {

struct GraphIndex {
  std::map<std::string, int> producer;      // tensor -> node index; -1 graph input, -2 constant
  std::map<std::string, TensorInfo> infos;  // graph inputs and node outputs (constants not included)
};

struct ValidatedGraph {
  std::vector<std::size_t> order;           // node indices, each after the nodes it reads
  std::map<std::string, TensorInfo> infos;  // every non-constant tensor
  std::map<std::string, int> producer;
};

// Throws InvalidArgument naming the node, its op and the values (Graph::validate()).
ValidatedGraph validate_graph(const Graph& graph);
ops::NodeView view_of(const Graph& graph, const Node& node, const std::map<std::string, TensorInfo>& infos);
// The op's shape inference of a node; a refusal that does not name the node yet gets its name in front.
std::vector<TensorInfo> infer_naming_the_node(const ops::NodeView& v);
// Every graph input given once, f32 of its declared dims; no unknown name.
void check_graph_inputs(const Graph& graph, const std::map<std::string, Tensor>& inputs);

}  // namespace xnorcl::detail
