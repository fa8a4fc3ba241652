// SPDX-License-Identifier: Apache-2.0
// save_vehicle_classifier: the paper's vehicle classifier as a version-1 .xnn file. Both file versions run
// through the graph executor (xnorcl.load, python/xnorcl/_model.py).
#include "common.hpp"

namespace xnorcl::python {

void bind_network(nb::module_& m) {
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
