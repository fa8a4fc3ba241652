// SPDX-License-Identifier: Apache-2.0
// What a Runtime and its copies share.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device_profile.hpp"
#include "runtime/program_cache.hpp"
#include "runtime/tuning.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/runtime.hpp"

namespace xnorcl::detail {

struct RuntimeState {
  RuntimeState() = default;
  RuntimeState(const RuntimeState&) = delete;
  RuntimeState& operator=(const RuntimeState&) = delete;
  ~RuntimeState();  // store_deferred(), unless the process is exiting (see watches_exit)

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
  mutable bool compile_announced =
      false;  // the "compiling the OpenCL kernels" message was logged (create() only)

  // Programs built once in Runtime::create; only read afterwards, so threads may share them.
  cl::Program im2col_pack;  // kernels im2col_pack_f32, im2col_pack_u8
  std::size_t pack_work_group = 1;
  // packs_in_vector_runs(profile): which kernels of im2col_pack pack the channel-packed layout (both compute
  // the same words; the tests run each on every device by setting this before making layers).
  bool pack_in_runs = true;
  // compares_floats_exactly(profile): which kernels the float max-pool over runs and the channel packing in
  // runs take (float compares or order keys: the same bits; the tests run both on every device by setting
  // this before making layers).
  bool floats_compare_exactly = false;
  cl::Program xnor_gemm;  // kernel xnor_gemm
  GemmConfig gemm;

  // The one-dimensional programs of the layers and graph ops (network_programs() in device_profile.hpp),
  // by file name ("threshold_pack.cl"), each with the fixed local size it was built for.
  struct LinearProgram {
    cl::Program program;
    std::size_t work_group = 1;
  };
  std::map<std::string, LinearProgram> linear_programs;
  // The entry of a file of network_programs(); throws Error for a file not in that table.
  const LinearProgram& linear_program(const std::string& file) const;
  // A program of `file` built with other options than create() used (a tuned configuration: its build
  // options and local size), built at first request and kept; nothing when a kernel refuses that local
  // size here. Threads may ask at once.
  std::optional<LinearProgram> program_variant(const std::string& file, const std::string& options,
                                               const std::vector<const char*>& kernels,
                                               std::size_t work_group) const;

  // Tuned configurations (runtime/tuning.hpp), from the tuning file and the tuner.
  TuningMode tuning_mode = TuningMode::Use;
  std::string tuning_path;  // "" where there is no tuning file (cache off, none named)
  mutable TuningTable tuning;

  // Programs built from source on a device whose binaries grow at first launch
  // (DeviceProfile::binary_grows_at_first_launch). Such a driver serialises a program's binary once, at the
  // first query, so they are stored after the first blocking run (after_first_host_run: the kernels a first
  // layer or network needs have run by then), else when the last Runtime copy goes, unless the process is
  // exiting (its drivers may be half torn down by then). Stored once each; failures only log. The store waits
  // for no launch to be in flight (runtime/launch_gate.hpp): PoCL aborts when the two overlap.
  struct DeferredStore {
    cl::Program program;
    std::string key;
  };
  void after_first_host_run() const noexcept {
    if (!first_host_run_done.exchange(true)) store_deferred();
  }
  void store_deferred() const noexcept;
  mutable std::vector<DeferredStore> deferred_stores;  // emptied by store_deferred, under deferred_mutex
  mutable std::mutex deferred_mutex;
  mutable std::atomic<bool> first_host_run_done{false};
  // Whether every deferred store of this state registered an exit handler (runtime.cpp, watch_process_exit),
  // under deferred_mutex: once one could not, the destructor stores nothing.
  mutable bool watches_exit = true;

 private:
  mutable std::map<std::string, std::optional<LinearProgram>> program_variants_;  // by file and options
  mutable std::mutex program_variants_mutex_;
};

// The program a step of a one-dimensional network file runs: the runtime's, at the largest work-group size
// the device took, or the tuning table's size for "work-group <what>" where the device runs that size for
// the file's kernels (else the default, with a warning). `point` gets what the plan and the tuner need. Only
// files whose arithmetic is the same at every size are tuned (NetworkProgram::sums_across_work_group).
RuntimeState::LinearProgram tuned_linear_program(const RuntimeState& state, const std::string& file,
                                                 const std::string& what, TuningPoint& point);
// "wg=64": a work-group size as a tuning configuration.
std::string work_group_config(std::size_t size);

}  // namespace xnorcl::detail
