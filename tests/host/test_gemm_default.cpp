// SPDX-License-Identifier: Apache-2.0
// The per-layer GEMM default (layer_gemm_default): which configuration a layer runs without a tuning file,
// on device profiles made here (no device needed).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "runtime/device_profile.hpp"

namespace xnorcl::detail {
namespace {

// A profile with room for every configuration: only the architecture and the compute units differ.
DeviceProfile profile_of(Architecture a, unsigned compute_units) {
  DeviceProfile p;
  p.architecture = a;
  p.info.compute_units = compute_units;
  p.info.max_work_group_size = 1024;
  p.info.local_mem_size = 48 * 1024;
  return p;
}

// The runtime's default for the variant (the first of gemm_configs, as create() picks it here).
GemmConfig runtime_default(Variant v, const DeviceProfile& p) {
  return gemm_configs(v, p).front();
}

std::string layer_default(Variant v, const DeviceProfile& p, bool stores_floats, std::int64_t rows,
                          std::int64_t columns, std::size_t cap = 1024) {
  return to_text(layer_gemm_default(runtime_default(v, p), p, cap, stores_floats, rows, columns));
}

TEST_CASE("GEMM default: a Local grid below 4 work-groups per compute unit halves the tile's positions",
          "[host]") {
  const DeviceProfile gpu = profile_of(Architecture::Nvidia, 132);
  REQUIRE(to_text(runtime_default(Variant::Local, gpu)) == "wg=16 tm=4 tn=4 kt=8");
  for (bool stores_floats : {true, false}) {
    INFO("stores floats " << stores_floats);
    // Batch 1 on 132 compute units: 64x56x56 gives 49 work-groups of 64x64, 512x7x7 gives 8.
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 64, 56 * 56) == "wg=16 tm=4 tn=2 kt=8");
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 512, 7 * 7) == "wg=16 tm=4 tn=2 kt=8");
    // 64x56x56 at batch 8: 392 work-groups, still below 528.
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 64, 8 * 56 * 56) == "wg=16 tm=4 tn=2 kt=8");
    // 528 work-groups (4 per compute unit) and more keep the runtime's tile.
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 64 * 4, 132 * 64) == "wg=16 tm=4 tn=4 kt=8");
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 64, 32 * 56 * 56) == "wg=16 tm=4 tn=4 kt=8");
    // One work-group less than 528: halved.
    CHECK(layer_default(Variant::Local, gpu, stores_floats, 64 * 4, 132 * 64 - 64) == "wg=16 tm=4 tn=2 kt=8");
  }
  // The count uses whole tiles: 65 channels take two tile rows.
  CHECK(gemm_work_groups(runtime_default(Variant::Local, gpu), 65, 64 * 3 + 1) == 2 * 4);
  // A device of one compute unit (Oclgrind) or none reported: only grids of fewer than 4 (or 0) work-groups.
  const DeviceProfile one = profile_of(Architecture::Oclgrind, 1);
  CHECK(layer_default(Variant::Local, one, true, 64, 3 * 64) == "wg=16 tm=4 tn=2 kt=8");
  CHECK(layer_default(Variant::Local, one, true, 64, 4 * 64) == "wg=16 tm=4 tn=4 kt=8");
  CHECK(layer_default(Variant::Local, profile_of(Architecture::Unknown, 0), true, 64, 64) ==
        "wg=16 tm=4 tn=4 kt=8");
  // A runtime whose work-group cap took the 8x8 configuration halves that one (a smaller tile needs less
  // local memory, so the halved tile always fits where the runtime's did).
  const GemmConfig capped = gemm_configs(Variant::Local, gpu)[1];
  REQUIRE(to_text(capped) == "wg=8 tm=4 tn=4 kt=8");
  CHECK(to_text(layer_gemm_default(capped, gpu, 64, true, 64, 64)) == "wg=8 tm=4 tn=2 kt=8");
  GemmConfig halved = capped;
  halved.tn = 2;
  CHECK(halved.local_bytes() < capped.local_bytes());
}

TEST_CASE("GEMM default: Global and PoCL's defaults do not depend on the grid", "[host]") {
  // Global never halves, on a GPU of many compute units or elsewhere, at any grid.
  for (Architecture a : {Architecture::Nvidia, Architecture::Mali, Architecture::Adreno}) {
    const DeviceProfile p = profile_of(a, 132);
    const std::string base = to_text(runtime_default(Variant::Global, p));
    CHECK(base == "wg=8 tm=4 tn=4 kt=8");
    for (std::int64_t columns : {std::int64_t(49), std::int64_t(3136), std::int64_t(1) << 20}) {
      CHECK(layer_default(Variant::Global, p, true, 512, columns) == base);
      CHECK(layer_default(Variant::Global, p, false, 512, columns) == base);
    }
  }
  // PoCL (its Auto variant is Global): float-storing layers 8x4 (8x8 with the vector popcount
  // instruction), packed ones 4x8, whatever the grid.
  const DeviceProfile pocl = profile_of(Architecture::PoclCpu, 2);
  DeviceProfile pocl_native = pocl;
  pocl_native.native_popcount = true;
  CHECK(to_text(runtime_default(Variant::Global, pocl)) == "wg=8 tm=4 tn=8 kt=8");
  CHECK(to_text(runtime_default(Variant::Global, pocl_native)) == "wg=8 tm=4 tn=8 kt=8");
  for (std::int64_t columns : {std::int64_t(49), std::int64_t(1) << 20}) {
    CHECK(layer_default(Variant::Global, pocl, true, 64, columns) == "wg=8 tm=8 tn=4 kt=8");
    CHECK(layer_default(Variant::Global, pocl, false, 64, columns) == "wg=8 tm=4 tn=8 kt=8");
    CHECK(layer_default(Variant::Global, pocl_native, true, 64, columns) == "wg=8 tm=8 tn=8 kt=8");
    CHECK(layer_default(Variant::Global, pocl_native, false, 64, columns) == "wg=8 tm=4 tn=8 kt=8");
  }
  // A forced Local on PoCL's 2 compute units: the runtime's tile from 8 work-groups on (every layer of the
  // networks at batch 1), halved only below that.
  CHECK(layer_default(Variant::Local, pocl, true, 512, 49) == "wg=16 tm=4 tn=4 kt=8");
  CHECK(layer_default(Variant::Local, pocl, true, 64, 56 * 56) == "wg=16 tm=4 tn=4 kt=8");
  CHECK(layer_default(Variant::Local, pocl, false, 64, 7 * 64) == "wg=16 tm=4 tn=2 kt=8");
}

TEST_CASE("float convolution default: two split rows only on CPUs with 16-float vectors", "[host]") {
  DeviceProfile cpu = profile_of(Architecture::PoclCpu, 2);
  cpu.info.type = "CPU";
  cpu.native_float_vector_width = 16;  // AVX-512
  CHECK(float_conv_split_rows(cpu) == 2);
  cpu.native_float_vector_width = 8;  // AVX2
  CHECK(float_conv_split_rows(cpu) == 1);
  DeviceProfile gpu = profile_of(Architecture::Nvidia, 132);
  gpu.info.type = "GPU";
  gpu.native_float_vector_width = 16;
  CHECK(float_conv_split_rows(gpu) == 1);
}

TEST_CASE("network programs: convolution.cl in work-groups of 1 on CPUs only", "[host]") {
  DeviceProfile cpu = profile_of(Architecture::PoclCpu, 2);
  cpu.info.type = "CPU";
  DeviceProfile gpu = profile_of(Architecture::Mali, 16);
  gpu.info.type = "GPU";
  int convolutions = 0;
  for (const NetworkProgram& p : network_programs()) {
    INFO(p.file);
    const bool convolution = std::string(p.file) == "convolution.cl";
    convolutions += convolution;
    CHECK(network_work_group_ceiling(p, cpu) == (convolution ? 1 : std::numeric_limits<std::size_t>::max()));
    CHECK(network_work_group_ceiling(p, gpu) == std::numeric_limits<std::size_t>::max());
  }
  REQUIRE(convolutions == 1);
}

}  // namespace
}  // namespace xnorcl::detail
