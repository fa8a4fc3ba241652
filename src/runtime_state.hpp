// What a Runtime and its copies share.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "device_profile.hpp"
#include "program_cache.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/runtime.hpp"

namespace xnorcl::detail {

struct RuntimeState {
  RuntimeState() = default;
  RuntimeState(const RuntimeState&) = delete;
  RuntimeState& operator=(const RuntimeState&) = delete;
  ~RuntimeState();  // stores deferred_stores, after the queue has finished

  cl::Context context;
  cl::Device device;
  cl::CommandQueue queue;
  DeviceProfile profile;
  RuntimeOptions options;
  Variant variant = Variant::Global;
  std::string variant_reason;
  bool profiling = false;
  std::size_t work_group_cap = 0;  // min(device max, RuntimeOptions cap)
  ProgramCache cache{"", nullptr};

  // Programs built once in Runtime::create; only read afterwards, so threads may share them.
  cl::Program im2col_pack;  // kernels im2col_pack_f32, im2col_pack_u8
  std::size_t pack_work_group = 1;
  cl::Program xnor_gemm;  // kernel xnor_gemm
  GemmConfig gemm;

  // The network layers' programs (see network_programs() in device_profile.hpp).
  cl::Program threshold_pack;  // kernels threshold_pack, unpack_bits, scale_bias
  std::size_t threshold_work_group = 1;
  cl::Program binary_maxpool;  // kernels binary_maxpool, maxpool_f32
  std::size_t maxpool_work_group = 1;
  cl::Program binary_fc;  // kernel binary_fc, built for the variant in use
  std::size_t fc_work_group = 1;

  // Programs built from source on a device whose binaries grow at first launch
  // (DeviceProfile::binary_grows_at_first_launch): the driver serialises a program's binary once, at the
  // first query, so these are stored only when the last Runtime copy goes, with the final code of every
  // kernel launched until then. A process that never destroys its Runtime stores nothing for them.
  struct DeferredStore {
    cl::Program program;
    std::string key;
  };
  std::vector<DeferredStore> deferred_stores;
};

}  // namespace xnorcl::detail
