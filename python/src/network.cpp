// SPDX-License-Identifier: Apache-2.0
// xnorcl._Network: a network file (.xnn) on a runtime. The package's Model (python/xnorcl/_model.py) is the
// public face; this is only what it needs from C++.
#include <mutex>

#include "common.hpp"

namespace xnorcl::python {

namespace {

struct LoadedNetwork {
  Runtime runtime;
  Network network;
  std::mutex mutex;  // a Network, like a layer, runs on one thread at a time
};

void load(LoadedNetwork* self, const std::string& path, const Runtime& runtime) {
  nb::gil_scoped_release release;
  NetworkSpec spec = load_network(path);
  new (self) LoadedNetwork{runtime, Network(runtime, spec), {}};
}

nb::object activation_array(Activation&& a) {
  if (a.packed) return to_numpy(std::move(a.words), packed_words_shape(a.shape));
  return to_numpy(std::move(a.values), to_vector(a.shape));
}

const float* checked_input(LoadedNetwork& self, const ArrayView& v) {
  require_shape(v, to_vector(self.network.spec().input), "x");
  return static_cast<const float*>(v.data());
}

nb::object run(LoadedNetwork& self, nb::handle x) {
  const ArrayView v = array_view(x, "x", {DType::Float32});
  const float* data = checked_input(self, v);
  Activation y;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    y = self.network.run(data);
  }
  return activation_array(std::move(y));
}

nb::object reference(LoadedNetwork& self, nb::handle x) {
  const ArrayView v = array_view(x, "x", {DType::Float32});
  const float* data = checked_input(self, v);
  std::vector<Activation> all;
  {
    nb::gil_scoped_release release;
    all = reference_network(self.network.spec(), data);
  }
  return activation_array(std::move(all.back()));
}

nb::list stage_times(LoadedNetwork& self) {
  std::vector<StageTime> times;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    times = self.network.last_stage_times();
  }
  nb::list r;
  for (const StageTime& t : times) r.append(nb::make_tuple(t.kernel, t.milliseconds));
  return r;
}

nb::list layer_names(const LoadedNetwork& self) {
  nb::list names;
  for (const Layer& l : self.network.spec().layers) names.append(layer_name(l));
  return names;
}

}  // namespace

void bind_network(nb::module_& m) {
  nb::class_<LoadedNetwork>(m, "_Network", "A network file on a runtime (use xnorcl.load).")
      .def("__init__", &load, nb::arg("path"), nb::arg("runtime"))
      .def_prop_ro("input_shape", [](const LoadedNetwork& n) { return to_vector(n.network.spec().input); })
      .def_prop_ro("output_shape", [](const LoadedNetwork& n) { return to_vector(n.network.output_shape()); })
      .def_prop_ro("output_packed", [](const LoadedNetwork& n) { return n.network.output_packed(); })
      .def_prop_ro("layers", &layer_names)
      .def_prop_ro("runtime", [](const LoadedNetwork& n) { return n.runtime; })
      .def("run", &run, nb::arg("x").none())
      .def("reference", &reference, nb::arg("x").none())
      .def("last_stage_times", &stage_times);

  m.def(
      "save_vehicle_classifier",
      [](const std::string& path, std::uint64_t seed, std::int64_t batch) {
        nb::gil_scoped_release release;
        save_network(vehicle_classifier(seed, batch).spec, path);
      },
      nb::arg("path"), nb::arg("seed") = 1, nb::arg("batch") = 1,
      "Writes the paper's vehicle classifier (input [batch, 3, 96, 96], 4 float logits) with weights drawn "
      "from `seed` and thresholds calibrated on seeded images, as an .xnn file.");
}

}  // namespace xnorcl::python
