// SPDX-License-Identifier: Apache-2.0
// Model: a validated graph planned onto a device. Three steps, each its own function: fuse (a node absorbs
// the single consumer of its output where its op can compute both in one step), plan the steps (each op
// builds its kernels), and assign buffers (tensors whose lifetimes do not overlap share a buffer, largest
// first, as TFLite's arena planner does). Runs enqueue every step in order on the runtime's queue.
#include <algorithm>
#include <optional>
#include <set>

#include "graph/model_access.hpp"
#include "graph/node_views.hpp"
#include "ops/layer_common.hpp"
#include "runtime/cl_call.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/tuning.hpp"

namespace xnorcl {

using detail::cl_call;

namespace {

struct StepNodes {
  std::size_t head = 0;
  std::vector<std::size_t> fused;
  std::optional<std::size_t> side;   // a second consumer of the chain's last output computed in the step
  std::vector<std::string> inputs;   // activation tensors the step reads
  std::vector<std::string> outputs;  // tensors it writes
};

struct Lifetime {
  int first = 0, last = 0;  // step indices; graph inputs are written before step 0 (-1)
  std::size_t bytes = 0;
};

std::map<std::string, std::vector<std::size_t>> consumers_of(const Graph& graph) {
  std::map<std::string, std::vector<std::size_t>> consumers;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (const std::string& in : graph.nodes[i].inputs) consumers[in].push_back(i);
  return consumers;
}

// The consumer of the chain's last output `chain` that the step can also compute as a second output (the
// first consumer, in node order, whose op the head's op accepts): one whose other inputs are constants, so
// that it needs nothing but `chain`. The step still writes `chain` for its other consumers.
std::optional<std::size_t> side_node(const Runtime& runtime, const Graph& graph,
                                     const detail::ValidatedGraph& g,
                                     const std::map<std::string, std::vector<std::size_t>>& consumers,
                                     const ops::Op& op, const ops::NodeView& head,
                                     const std::vector<ops::NodeView>& fused, const StepNodes& step,
                                     const std::string& chain) {
  const std::size_t last = step.fused.empty() ? step.head : step.fused.back();
  if (graph.nodes[last].outputs.size() != 1) return std::nullopt;
  const auto c = consumers.find(chain);
  if (c == consumers.end()) return std::nullopt;
  for (std::size_t candidate : c->second) {
    const Node& node = graph.nodes[candidate];
    if (node.inputs[0] != chain || node.outputs.size() != 1) continue;
    const bool constant_rest =
        std::all_of(node.inputs.begin() + 1, node.inputs.end(),
                    [&](const std::string& in) { return graph.constants.count(in) > 0; });
    if (constant_rest && op.can_fuse_side(runtime, head, fused, detail::view_of(graph, node, g.infos)))
      return candidate;
  }
  return std::nullopt;
}

// Groups nodes into steps: each node absorbs, while its op agrees, the single consumer of the chain's last
// output, provided that output is no graph output and every other input of the consumer already exists;
// then, where its op agrees on this runtime, one more consumer of that output as a second output
// (side_node).
std::vector<StepNodes> fuse(const Runtime& runtime, const Graph& graph, const detail::ValidatedGraph& g) {
  const auto consumers = consumers_of(graph);
  std::vector<int> position(graph.nodes.size());
  for (std::size_t k = 0; k < g.order.size(); ++k) position[g.order[k]] = static_cast<int>(k);
  const std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> absorbed(graph.nodes.size(), false);
  std::vector<StepNodes> steps;
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    const std::size_t head = g.order[k];
    if (absorbed[head]) continue;
    StepNodes step;
    step.head = head;
    const ops::Op* op = ops::find_op(graph.nodes[head].op);
    const ops::NodeView head_view = detail::view_of(graph, graph.nodes[head], g.infos);
    std::vector<ops::NodeView> fused_views;
    std::string chain = graph.nodes[head].outputs[0];
    for (;;) {
      const std::size_t last = step.fused.empty() ? head : step.fused.back();
      if (graph.nodes[last].outputs.size() != 1 || graph_outputs.count(chain)) break;
      const auto c = consumers.find(chain);
      if (c == consumers.end() || c->second.size() != 1) break;
      const std::size_t next = c->second[0];
      bool ready = graph.nodes[next].inputs[0] == chain;
      for (const std::string& in : graph.nodes[next].inputs) {
        const int p = g.producer.at(in);
        if (in != chain && p >= 0 && position[static_cast<std::size_t>(p)] >= static_cast<int>(k))
          ready = false;
      }
      const ops::NodeView next_view = detail::view_of(graph, graph.nodes[next], g.infos);
      if (!ready || !op->can_fuse(head_view, fused_views, next_view)) break;
      step.fused.push_back(next);
      fused_views.push_back(next_view);
      absorbed[next] = true;
      chain = graph.nodes[next].outputs[0];
    }
    step.side = side_node(runtime, graph, g, consumers, *op, head_view, fused_views, step, chain);
    if (step.side) absorbed[*step.side] = true;
    for (const std::string& in : graph.nodes[head].inputs)
      if (!graph.constants.count(in)) step.inputs.push_back(in);
    for (std::size_t n : step.fused)
      for (std::size_t i = 1; i < graph.nodes[n].inputs.size(); ++i)
        if (!graph.constants.count(graph.nodes[n].inputs[i])) step.inputs.push_back(graph.nodes[n].inputs[i]);
    step.outputs = graph.nodes[step.fused.empty() ? head : step.fused.back()].outputs;
    if (step.side) step.outputs.push_back(graph.nodes[*step.side].outputs[0]);
    steps.push_back(std::move(step));
  }
  return steps;
}

std::map<std::string, Lifetime> lifetimes(const Graph& graph, const std::vector<StepNodes>& steps,
                                          const std::map<std::string, TensorInfo>& infos) {
  std::map<std::string, Lifetime> life;
  for (const GraphInput& in : graph.inputs) life[in.name] = {-1, -1, ops::tensor_bytes(infos.at(in.name))};
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const int at = static_cast<int>(s);
    for (const std::string& out : steps[s].outputs) life[out] = {at, at, ops::tensor_bytes(infos.at(out))};
    for (const std::string& in : steps[s].inputs) life[in].last = std::max(life[in].last, at);
  }
  for (const std::string& out : graph.outputs) life[out].last = static_cast<int>(steps.size());
  return life;
}

// Tensor -> buffer slot, and each slot's size: largest tensors first, each into the first slot none of
// whose tensors is live at the same time. A slot's lifetimes are disjoint, so they are kept sorted by first
// step and a new one is tested against its neighbour alone: planning stays near-linear in the node count.
std::pair<std::map<std::string, std::size_t>, std::vector<std::size_t>> assign_buffers(
    const std::map<std::string, Lifetime>& life) {
  std::vector<const std::pair<const std::string, Lifetime>*> tensors;
  for (const auto& entry : life) tensors.push_back(&entry);
  std::stable_sort(tensors.begin(), tensors.end(),
                   [](const auto* a, const auto* b) { return a->second.bytes > b->second.bytes; });
  std::map<std::string, std::size_t> slot_of;
  std::vector<std::map<int, int>> slots;  // per slot: first step -> last step of each tensor in it
  std::vector<std::size_t> sizes;
  for (const auto* entry : tensors) {
    const Lifetime& l = entry->second;
    std::size_t s = 0;
    for (; s < slots.size(); ++s) {
      // The tensor of this slot that starts last at or before l.last is the only one that can overlap l.
      const auto after = slots[s].upper_bound(l.last);
      if (after == slots[s].begin() || std::prev(after)->second < l.first) break;
    }
    if (s == slots.size()) {
      slots.emplace_back();
      sizes.push_back(0);
    }
    slots[s].emplace(l.first, l.last);
    sizes[s] = std::max(sizes[s], l.bytes);
    slot_of[entry->first] = s;
  }
  return {slot_of, sizes};
}

// The largest sum of two tensors live at one step (graph inputs at step -1, graph outputs to the end), by one
// sweep over the steps.
std::size_t largest_live_pair(const std::map<std::string, Lifetime>& life, std::size_t step_count) {
  std::map<int, std::vector<std::size_t>> starting, ending;
  for (const auto& [name, l] : life) {
    starting[l.first].push_back(l.bytes);
    ending[l.last].push_back(l.bytes);
  }
  std::multiset<std::size_t> live;
  std::size_t best = 0;
  for (int s = -1; s <= static_cast<int>(step_count); ++s) {
    if (const auto it = starting.find(s); it != starting.end())
      live.insert(it->second.begin(), it->second.end());
    if (!live.empty()) {
      auto top = live.rbegin();
      const std::size_t a = *top;
      const std::size_t b = ++top == live.rend() ? 0 : *top;
      best = std::max(best, a + b);
    }
    if (const auto it = ending.find(s); it != ending.end())
      for (std::size_t bytes : it->second) live.erase(live.find(bytes));
  }
  return best;
}

}  // namespace

struct Model::Impl {
  explicit Impl(const Runtime& rt) : runtime(rt) {}
  // Steps are released newest first: PoCL keeps a program's kernels in a list it searches from the newest on
  // every release, so releasing the oldest first made a 48,000-node model's destruction quadratic.
  ~Impl() {
    while (!device_steps.empty()) device_steps.pop_back();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Runtime runtime;
  Graph graph;
  detail::ValidatedGraph validated;
  std::vector<StepNodes> steps;
  std::vector<std::unique_ptr<ops::DeviceStep>> device_steps;
  std::map<std::string, std::size_t> slot_of;
  std::vector<cl::Buffer> buffers;
  GraphPlan plan;
  std::vector<cl::Event> last_events;

  void build(Graph g);
  bool wants_tuning() const;
  std::vector<StageTime> step_times(std::size_t s) const;  // of the last run; waits for it

  std::vector<const cl::Buffer*> buffers_for(const std::vector<std::string>& tensors) const {
    std::vector<const cl::Buffer*> b;
    for (const std::string& t : tensors) b.push_back(&buffers[slot_of.at(t)]);
    return b;
  }
  std::string step_name(const StepNodes& s) const {
    std::string name = graph.nodes[s.head].name;
    for (std::size_t n : s.fused) name += "+" + graph.nodes[n].name;
    if (s.side) name += "&" + graph.nodes[*s.side].name;
    return name;
  }
  void write_inputs(const std::map<std::string, Tensor>& inputs) {
    detail::check_graph_inputs(graph, inputs);
    for (const auto& entry : inputs) {
      const std::string& name = entry.first;  // named variables: C++17 lambdas cannot capture bindings
      const Tensor& t = entry.second;
      const bool image = t.type == ElementType::UInt8;
      cl_call(
          [&] {
            runtime.queue().enqueueWriteBuffer(
                buffers[slot_of.at(name)], CL_FALSE, 0, image ? t.bytes.size() : t.values.size() * 4,
                image ? static_cast<const void*>(t.bytes.data()) : static_cast<const void*>(t.values.data()));
          },
          "writing graph input '" + name + "'");
    }
  }
  Tensor read(const std::string& name) {
    Tensor t;
    const TensorInfo& info = validated.infos.at(name);
    t.dims = info.dims;
    t.type = info.type;
    std::size_t bytes = ops::tensor_bytes(info);
    void* dst = nullptr;
    if (t.type == ElementType::Bits) {
      t.words.resize(bytes / 4);
      dst = t.words.data();
    } else if (t.type == ElementType::UInt8) {  // an image input that is a graph output too
      bytes = static_cast<std::size_t>(ops::product(info.dims));
      t.bytes.resize(bytes);
      dst = t.bytes.data();
    } else {
      t.values.resize(bytes / 4);
      dst = t.values.data();
    }
    cl_call([&] { runtime.queue().enqueueReadBuffer(buffers[slot_of.at(name)], CL_TRUE, 0, bytes, dst); },
            "reading tensor '" + name + "'");
    return t;
  }
  void enqueue_step(std::size_t s) {
    std::vector<cl::Event> wait;
    if (!last_events.empty()) wait.push_back(last_events.back());
    last_events.push_back(
        device_steps[s]->enqueue(buffers_for(steps[s].inputs), buffers_for(steps[s].outputs), wait));
  }
};

void Model::Impl::build(Graph g) {
  graph = std::move(g);
  validated = detail::validate_graph(graph);
  steps = fuse(runtime, graph, validated);
  const auto life = lifetimes(graph, steps, validated.infos);
  std::vector<std::size_t> sizes;
  std::tie(slot_of, sizes) = assign_buffers(life);
  plan.variant = runtime.variant();
  for (const StepNodes& s : steps) {
    const ops::NodeView head = detail::view_of(graph, graph.nodes[s.head], validated.infos);
    std::vector<ops::NodeView> fused;
    for (std::size_t n : s.fused) fused.push_back(detail::view_of(graph, graph.nodes[n], validated.infos));
    const ops::Op* op = ops::find_op(graph.nodes[s.head].op);
    device_steps.push_back(
        s.side ? op->plan_with_side(runtime, head, fused,
                                    detail::view_of(graph, graph.nodes[*s.side], validated.infos))
               : op->plan(runtime, head, fused));
    GraphPlan::Step p{step_name(s), {}, device_steps.back()->describe(), {}};
    for (const detail::TuningPoint& t : device_steps.back()->tuning_points())
      p.tuning += (p.tuning.empty() ? "" : "; ") + std::string(t.tuned ? "tuned " : "default ") + t.config;
    p.fused.push_back(graph.nodes[s.head].name);
    for (std::size_t n : s.fused) p.fused.push_back(graph.nodes[n].name);
    if (s.side) p.fused.push_back(graph.nodes[*s.side].name);
    plan.steps.push_back(std::move(p));
    plan.weight_bytes += device_steps.back()->weight_bytes();
  }
  const auto& state = detail::runtime_state(runtime, "Model");
  for (std::size_t bytes : sizes) {
    buffers.push_back(cl_call(
        [&] { return cl::Buffer(state->context, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 4)); },
        "allocating a graph buffer of " + std::to_string(bytes) + " bytes"));
    plan.activation_bytes += bytes;
  }
  plan.largest_live_pair_bytes = largest_live_pair(life, steps.size());
}

// Whether TuningMode::TuneOnFirstUse has steps to tune: a tunable step whose class the table lacks (the
// tuner's own Models never ask).
bool Model::Impl::wants_tuning() const {
  if (runtime.state()->tuning_mode != TuningMode::TuneOnFirstUse || detail::tuning_in_progress())
    return false;
  for (const auto& step : device_steps)
    for (const detail::TuningPoint& t : step->tuning_points())
      if (!t.tuned) return true;
  return false;
}

Model::Model(const Runtime& runtime, Graph graph) : impl_(std::make_unique<Impl>(runtime)) {
  impl_->build(graph);
  if (!impl_->wants_tuning()) return;
  tune(runtime, impl_->graph);
  impl_ = std::make_unique<Impl>(runtime);
  impl_->build(std::move(graph));
}

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const Graph& Model::graph() const {
  return impl_->graph;
}
const GraphPlan& Model::plan() const {
  return impl_->plan;
}

std::vector<std::pair<std::string, TensorInfo>> Model::input_infos() const {
  std::vector<std::pair<std::string, TensorInfo>> v;
  for (const GraphInput& in : impl_->graph.inputs) v.emplace_back(in.name, TensorInfo{in.dims, in.type});
  return v;
}

std::vector<std::pair<std::string, Dims>> Model::input_dims() const {
  std::vector<std::pair<std::string, Dims>> v;
  for (const GraphInput& in : impl_->graph.inputs) v.emplace_back(in.name, in.dims);
  return v;
}

std::vector<std::pair<std::string, TensorInfo>> Model::output_infos() const {
  std::vector<std::pair<std::string, TensorInfo>> v;
  for (const std::string& out : impl_->graph.outputs) v.emplace_back(out, impl_->validated.infos.at(out));
  return v;
}

std::map<std::string, Tensor> Model::run(const std::map<std::string, Tensor>& inputs) {
  Impl& m = *impl_;
  m.write_inputs(inputs);
  m.last_events.clear();
  for (std::size_t s = 0; s < m.steps.size(); ++s) m.enqueue_step(s);
  std::map<std::string, Tensor> outputs;
  for (const std::string& out : m.graph.outputs) outputs[out] = m.read(out);
  detail::runtime_state(m.runtime, "Model")->after_first_host_run();
  return outputs;
}

std::map<std::string, Tensor> Model::run_trace(const std::map<std::string, Tensor>& inputs) {
  Impl& m = *impl_;
  m.write_inputs(inputs);
  m.last_events.clear();
  std::map<std::string, Tensor> tensors;
  for (std::size_t s = 0; s < m.steps.size(); ++s) {
    m.enqueue_step(s);
    for (const std::string& out : m.steps[s].outputs)
      tensors[out] = m.read(out);  // before a later step reuses it
  }
  detail::runtime_state(m.runtime, "Model")->after_first_host_run();
  return tensors;
}

std::vector<StageTime> Model::Impl::step_times(std::size_t s) const {
  std::vector<StageTime> times = device_steps[s]->stage_times();
  if (times.empty() && detail::runtime_state(runtime, "Model")->profiling)
    times.push_back({"", detail::event_milliseconds(last_events[s])});
  return times;
}

std::vector<StageTime> Model::last_stage_times() const {
  const Impl& m = *impl_;
  std::vector<StageTime> times;
  for (std::size_t s = 0; s < m.last_events.size(); ++s) {
    const std::string name = m.step_name(m.steps[s]);
    for (const StageTime& t : m.step_times(s))
      times.push_back({name + (t.kernel.empty() ? "" : " " + t.kernel), t.milliseconds});
  }
  return times;
}

namespace detail {

std::vector<std::vector<TuningPoint>> ModelAccess::tuning_points(const Model& model) {
  std::vector<std::vector<TuningPoint>> points;
  for (const auto& step : model.impl_->device_steps) points.push_back(step->tuning_points());
  return points;
}

std::vector<double> ModelAccess::step_milliseconds(const Model& model) {
  const Model::Impl& m = *model.impl_;
  std::vector<double> ms;
  for (std::size_t s = 0; s < m.last_events.size(); ++s) {
    double total = 0;
    for (const StageTime& t : m.step_times(s)) total += t.milliseconds;
    ms.push_back(total);
  }
  return ms;
}

}  // namespace detail

std::string GraphPlan::to_string() const {
  std::string s = "variant " + xnorcl::to_string(variant) + ", " + std::to_string(steps.size()) + " steps\n";
  for (const Step& step : steps)
    s += "  " + step.node + ": " + step.description + (step.tuning.empty() ? "" : " [" + step.tuning + "]") +
         "\n";
  s += "activation buffers " + std::to_string(activation_bytes) + " bytes (largest live pair " +
       std::to_string(largest_live_pair_bytes) + "), weights " + std::to_string(weight_bytes) + " bytes\n";
  return s;
}

}  // namespace xnorcl
