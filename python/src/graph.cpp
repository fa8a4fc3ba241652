// SPDX-License-Identifier: Apache-2.0
// xnorcl._Graph: an .xnn model (a file, or its bytes in memory) on a runtime, as xnorcl.Model needs it:
// inputs and outputs by name, a run over dicts of arrays, the plan and the stage times. Float32 tensors cross
// as float32 arrays of their dims; packed bits as uint32 words [N, H, W, ceil(C/32)].
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "common.hpp"

namespace xnorcl::python {

namespace {

struct LoadedGraph {
  Runtime runtime;
  Model model;
  std::mutex mutex;  // one run at a time, as for layers
};

// xnorcl.ImageInput's fields as _model.py passes them: (format, order, mean[3], scale[3]).
using ImageSpec = std::tuple<std::string, std::string, std::array<float, 3>, std::array<float, 3>>;

ImageInput image_input(const std::string& name, const ImageSpec& spec) {
  const auto& [format, order, mean, scale] = spec;
  ImageInput image;
  try {
    image.format = parse_pixel_format(format);
    image.order = parse_channel_order(order);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("image input '" + name + "': " + e.what());
  }
  image.mean = mean;
  image.scale = scale;
  return image;
}

// The loaded graph with each named float input taken as an image, then its Model.
void place(LoadedGraph* self, Graph graph, const std::map<std::string, ImageSpec>& images,
           const Runtime& runtime) {
  for (const auto& [name, spec] : images)
    graph = with_image_input(std::move(graph), name, image_input(name, spec));
  new (self) LoadedGraph{runtime, Model(runtime, std::move(graph)), {}};
}

// A str is a path; anything else with a C-contiguous buffer (bytes, bytearray, memoryview) is the model's
// bytes, parsed in place. The buffer stays exported until the parse is done, so a bytearray cannot be resized
// under it while the GIL is released.
void load(LoadedGraph* self, nb::handle source, const Runtime& runtime,
          const std::map<std::string, ImageSpec>& images) {
  if (PyUnicode_Check(source.ptr())) {
    const std::string path = nb::cast<std::string>(source);
    nb::gil_scoped_release release;
    place(self, load_graph(path), images, runtime);
    return;
  }
  if (!PyObject_CheckBuffer(source.ptr())) {
    throw nb::type_error(("a model is a path (str) or its bytes (bytes, bytearray or memoryview), not " +
                          nb::cast<std::string>(nb::str(source.type().attr("__name__"))))
                             .c_str());
  }
  Py_buffer view;
  if (PyObject_GetBuffer(source.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  struct Exported {
    Py_buffer* view;
    ~Exported() { PyBuffer_Release(view); }
  } exported{&view};
  nb::gil_scoped_release release;
  place(self, load_graph(view.buf, static_cast<std::size_t>(view.len)), images, runtime);
}

nb::object tensor_array(Tensor&& t) {
  if (t.type == ElementType::UInt8)
    return to_numpy(std::move(t.bytes), t.dims);  // an image input, output too
  if (t.type == ElementType::Bits) {
    Shape s{1, 1, 1, 1};
    for (std::size_t i = 0; i < t.dims.size() && i < 4; ++i) s[i] = t.dims[i];
    return to_numpy(std::move(t.words), packed_words_shape(s));
  }
  return to_numpy(std::move(t.values), t.dims);
}

// Every input by name, each a float32 C-contiguous array of the declared dims.
std::map<std::string, Tensor> checked_inputs(const Model& model, nb::dict arrays) {
  std::map<std::string, Tensor> inputs;
  std::vector<std::string> expected;
  for (const auto& [name, dims] : model.input_dims()) expected.push_back(name);
  for (auto item : arrays) {
    const std::string name = nb::cast<std::string>(item.first);
    const auto it = std::find(expected.begin(), expected.end(), name);
    if (it == expected.end()) {
      std::string list;
      for (const std::string& e : expected) list += (list.empty() ? "'" : ", '") + e + "'";
      throw InvalidArgument("inputs: '" + name + "' is no input of the model (it has " + list + ")");
    }
  }
  for (const auto& [name, info] : model.input_infos()) {
    if (!arrays.contains(name.c_str())) throw InvalidArgument("inputs: '" + name + "' is not given");
    const bool image = info.type == ElementType::UInt8;
    const ArrayView v =
        array_view(arrays[name.c_str()], name.c_str(), {image ? DType::UInt8 : DType::Float32});
    require_shape(v, info.dims, name.c_str());
    Tensor t;
    t.dims = info.dims;
    t.type = info.type;
    if (image) {
      const auto* data = static_cast<const std::uint8_t*>(v.data());
      t.bytes.assign(data, data + v.size());
    } else {
      const float* data = static_cast<const float*>(v.data());
      t.values.assign(data, data + v.size());
    }
    inputs[name] = std::move(t);
  }
  return inputs;
}

nb::dict run(LoadedGraph& self, nb::dict arrays) {
  std::map<std::string, Tensor> inputs = checked_inputs(self.model, arrays);
  std::map<std::string, Tensor> outputs;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    outputs = self.model.run(inputs);
  }
  nb::dict r;
  for (auto& [name, t] : outputs) r[name.c_str()] = tensor_array(std::move(t));
  return r;
}

nb::dict reference(LoadedGraph& self, nb::dict arrays) {
  std::map<std::string, Tensor> inputs = checked_inputs(self.model, arrays);
  std::map<std::string, Tensor> all;
  {
    nb::gil_scoped_release release;
    all = reference_graph(self.model.graph(), inputs);
  }
  nb::dict r;
  for (const std::string& name : self.model.graph().outputs)
    r[name.c_str()] = tensor_array(std::move(all.at(name)));
  return r;
}

nb::list infos(const LoadedGraph& self, bool outputs) {
  nb::list r;
  if (!outputs) {
    for (const auto& [name, info] : self.model.input_infos())
      r.append(nb::make_tuple(name, nb::tuple(nb::cast(info.dims)), to_string(info.type)));
    return r;
  }
  for (const auto& [name, info] : self.model.output_infos())
    r.append(nb::make_tuple(name, nb::tuple(nb::cast(info.dims)), to_string(info.type)));
  return r;
}

nb::dict plan(const LoadedGraph& self) {
  const GraphPlan& p = self.model.plan();
  nb::list steps;
  for (const GraphPlan::Step& s : p.steps) {
    nb::dict d;
    d["step"] = s.node;
    d["nodes"] = s.fused;
    d["description"] = s.description;
    d["tuning"] = s.tuning;
    steps.append(d);
  }
  nb::dict r;
  r["variant"] = to_string(p.variant);
  r["steps"] = steps;
  r["activation_bytes"] = p.activation_bytes;
  r["weight_bytes"] = p.weight_bytes;
  r["largest_live_pair_bytes"] = p.largest_live_pair_bytes;
  return r;
}

TuneSearch parse_search(const std::string& text) {
  if (const auto search = parse_tune_search(lower(text))) return *search;
  throw InvalidArgument("mode: '" + text + "' is not a tuning mode; use 'fast', 'normal' or 'exhaustive'");
}

nb::dict report_dict(const TuneReport& r) {
  nb::list classes;
  for (const TunedStep& t : r.classes) {
    nb::dict d;
    d["shape_class"] = t.shape_class;
    d["steps"] = t.steps;
    d["default_config"] = t.default_config;
    d["best_config"] = t.best_config;
    d["default_ms"] = t.default_ms;
    d["best_ms"] = t.best_ms;
    d["candidates"] = t.candidates;
    classes.append(d);
  }
  nb::dict d;
  d["classes"] = classes;
  d["stopped"] = r.stopped;
  d["file"] = r.file;
  d["seconds"] = r.seconds;
  d["default_ms"] = r.default_ms;
  d["tuned_ms"] = r.tuned_ms;
  return d;
}

// Tunes the model's steps on its runtime, then rebuilds the model so that it runs what was kept. Ctrl-C
// stops the search between rounds: what was measured is kept and stored, then KeyboardInterrupt is raised.
nb::dict tune_graph(LoadedGraph& self, const std::string& mode, int repetitions, nb::object progress,
                    bool store) {
  TuneOptions o;
  o.search = parse_search(mode);
  o.repetitions = repetitions;
  o.store = store;
  std::optional<nb::python_error> interrupt;  // KeyboardInterrupt, held while the tuner stores
  o.stop_requested = [&interrupt] {
    nb::gil_scoped_acquire gil;
    if (!interrupt && PyErr_CheckSignals() != 0) interrupt.emplace();
    return interrupt.has_value();
  };
  if (!progress.is_none()) {
    o.progress = [&progress](const TuneProgress& p) {
      nb::gil_scoped_acquire gil;
      progress(p.done, p.total, p.what);  // an exception here aborts the tuning and reaches the caller
    };
  }
  TuneReport report;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    report = tune(self.runtime, self.model.graph(), o);
    Graph graph = self.model.graph();
    self.model = Model(self.runtime, std::move(graph));
  }
  if (interrupt) throw nb::python_error(*interrupt);
  return report_dict(report);
}

nb::list stage_times(LoadedGraph& self) {
  std::vector<StageTime> times;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    times = self.model.last_stage_times();
  }
  nb::list r;
  for (const StageTime& t : times) r.append(nb::make_tuple(t.kernel, t.milliseconds));
  return r;
}

}  // namespace

void bind_graph(nb::module_& m) {
  nb::class_<LoadedGraph>(m, "_Graph",
                          "An .xnn model, from a path or its bytes, on a runtime (use xnorcl.load).")
      .def("__init__", &load, nb::arg("source"), nb::arg("runtime"), nb::arg("images"))
      .def_prop_ro("inputs", [](const LoadedGraph& g) { return infos(g, false); })
      .def_prop_ro("outputs", [](const LoadedGraph& g) { return infos(g, true); })
      .def("run", &run, nb::arg("inputs"))
      .def("reference", &reference, nb::arg("inputs"))
      .def("plan", &plan)
      .def("last_stage_times", &stage_times)
      .def("tune", &tune_graph, nb::arg("mode"), nb::arg("repetitions"), nb::arg("progress").none(),
           nb::arg("store"));
  m.def(
      "_check_graph_file",
      [](const std::string& path) {
        std::map<std::string, TensorInfo> infos;
        {
          nb::gil_scoped_release release;
          infos = load_graph(path).validate();
        }
        nb::dict r;
        for (const auto& [name, info] : infos)
          r[name.c_str()] = nb::make_tuple(info.dims, to_string(info.type));
        return r;
      },
      nb::arg("path"),
      "Loads and validates a graph file without a device: every tensor's (dims, \"f32\" or \"bits\").");
  m.def(
      "network_file_version", [](const std::string& path) { return network_file_version(path); },
      nb::arg("path"), "The format version of an .xnn file: 1 (a chain of binary layers) or 2 (a graph).");
  m.def(
      "save_model",
      [](const std::string& name, const std::string& path, std::int64_t batch, std::int64_t size,
         int width_divisor, std::uint64_t seed) {
        nb::gil_scoped_release release;
        ModelOptions o;
        o.batch = batch;
        o.height = o.width = size;
        o.width_divisor = width_divisor;
        o.seed = seed;
        if (name == "bireal18")
          save_graph(bireal18(o), path);
        else if (name == "resnet18")
          save_graph(resnet18_binary(o), path);
        else
          throw InvalidArgument("save_model: unknown model '" + name + "' (bireal18, resnet18)");
      },
      nb::arg("name"), nb::arg("path"), nb::arg("batch") = 1, nb::arg("size") = 224,
      nb::arg("width_divisor") = 1, nb::arg("seed") = 1,
      "Writes a model built in code with seeded weights (bireal18: Bi-Real Net-18; resnet18: a binary "
      "ResNet-18) as an .xnn graph file; input [batch, 3, size, size], 1000 logits; width_divisor divides "
      "every channel count (smaller networks for quick tests).");
}

}  // namespace xnorcl::python
