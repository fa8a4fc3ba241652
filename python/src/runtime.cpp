// SPDX-License-Identifier: Apache-2.0
// xnorcl.Runtime: the device, its queue and the compiled programs (a shared handle, as in C++).
#include <optional>

#include "common.hpp"

namespace xnorcl::python {

namespace {

Variant parse_variant(const std::string& text) {
  const std::string v = lower(text);
  if (v == "auto") return Variant::Auto;
  if (v == "local") return Variant::Local;
  if (v == "global") return Variant::Global;
  throw InvalidArgument("variant: '" + text + "' is not a variant; use 'auto', 'local' or 'global'");
}

TuningMode parse_tuning(const std::string& text) {
  const std::string v = lower(text);
  if (v == "use") return TuningMode::Use;
  if (v == "tune") return TuningMode::TuneOnFirstUse;
  if (v == "ignore") return TuningMode::Ignore;
  throw InvalidArgument("tuning: '" + text + "' is not a tuning mode; use 'use', 'tune' or 'ignore'");
}

void create_runtime(Runtime* self, std::optional<std::string> device, std::optional<std::string> variant,
                    std::optional<std::string> cache_dir, std::optional<int> word_bits,
                    std::optional<std::size_t> max_work_group_size, std::optional<std::string> tuning,
                    std::optional<std::string> tuning_file, std::optional<bool> native_popcount) {
  RuntimeOptions o;
  o.device = std::move(device);
  if (variant) o.variant = parse_variant(*variant);
  o.cache_dir = std::move(cache_dir);
  o.word_bits = word_bits;
  o.max_work_group_size = max_work_group_size;
  if (tuning) o.tuning = parse_tuning(*tuning);
  o.tuning_file = std::move(tuning_file);
  o.native_popcount = native_popcount;
  nb::gil_scoped_release release;  // program builds take a while
  new (self) Runtime(Runtime::create(o));
}

nb::dict device_dict(const DeviceInfo& d) {
  nb::dict r;
  r["platform_index"] = d.platform_index;
  r["device_index"] = d.device_index;
  r["name"] = d.label();
  r["type"] = d.type;
  r["device_version"] = d.device_version;
  r["driver_version"] = d.driver_version;
  r["local_mem_is_local"] = d.local_mem_is_local;
  r["local_mem_size"] = d.local_mem_size;
  r["max_work_group_size"] = d.max_work_group_size;
  r["compute_units"] = d.compute_units;
  r["auto_variant"] = to_string(d.auto_variant);
  r["auto_reason"] = d.auto_reason;
  r["native_popcount"] = d.native_popcount;
  return r;
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Runtime>(m, "Runtime",
                      "The OpenCL device, its queue and xnorcl's compiled programs. Copies share them; one "
                      "Runtime may be used from many threads.")
      .def("__init__", &create_runtime, nb::arg("device") = nb::none(), nb::arg("variant") = nb::none(),
           nb::arg("cache_dir") = nb::none(), nb::kw_only(), nb::arg("word_bits") = nb::none(),
           nb::arg("max_work_group_size") = nb::none(), nb::arg("tuning") = nb::none(),
           nb::arg("tuning_file") = nb::none(), nb::arg("native_popcount") = nb::none(),
           "Opens a device. Every argument left None comes from the environment (XNORCL_DEVICE, "
           "XNORCL_VARIANT, XNORCL_CACHE_DIR, XNORCL_WORD_BITS, XNORCL_MAX_WORK_GROUP_SIZE, XNORCL_TUNING, "
           "XNORCL_TUNING_FILE, XNORCL_NATIVE_POPCOUNT), then the "
           "defaults. device: 'P:D' (platform and device indices) or a case-insensitive substring of "
           "'<platform> / <device>'; default the first GPU, else accelerator, else CPU. variant: 'auto', "
           "'local' or 'global'. cache_dir: program-binary cache directory, 'off' disables it. word_bits: "
           "32 or 64, the packed word size (a test and tuning hook). max_work_group_size: a cap on every "
           "launch's work-group size. tuning: 'use' (default: run the tuning file's configurations), 'tune' "
           "(also tune a model's untuned steps when it is loaded) or 'ignore' (default rules only). "
           "tuning_file: the tuning file's path; default a file beside the program cache. native_popcount: "
           "False runs the portable bit counting where the device has a vector popcount instruction that the "
           "kernels would use (device_info['native_popcount']); True on a device without one is refused.")
      .def_prop_ro("device_name", &Runtime::device_name, "'<platform> / <device>'")
      .def_prop_ro(
          "variant", [](const Runtime& r) { return to_string(r.variant()); },
          "The variant in use: 'local' or 'global', never 'auto'.")
      .def_prop_ro("variant_reason", &Runtime::variant_reason, "Why that variant was chosen.")
      .def_prop_ro("native_popcount", &Runtime::native_popcount,
                   "Whether the kernels count bits with the CPU's vector popcount instruction.")
      .def_prop_ro("profiling_enabled", &Runtime::profiling_enabled,
                   "Whether device times (last_stage_times) are available.")
      .def_prop_ro(
          "tuning_file", [](const Runtime& r) { return tuning_file(r); },
          "The tuning file this runtime reads and xnorcl.tune writes; '' when there is none (cache off).")
      .def_prop_ro(
          "device_info", [](const Runtime& r) { return device_dict(r.device_info()); },
          "The device's properties as a dict.")
      .def("__repr__", [](const Runtime& r) {
        return "xnorcl.Runtime(device_name='" + r.device_name() + "', variant='" + to_string(r.variant()) +
               "')";
      });

  m.def(
      "list_devices",
      [] {
        nb::list devices;
        for (const DeviceInfo& d : list_devices()) devices.append(device_dict(d));
        return devices;
      },
      "Every OpenCL device of every platform, as dicts. Raises DeviceNotFound with no platform.");
}

}  // namespace xnorcl::python
