// SPDX-License-Identifier: Apache-2.0
// A layer's device memory, allocated once at construction (never per run): the tables computed on the host
// (filter, input keys, pad fold, output rules) uploaded, and the scratch buffers every chunk reuses, sized
// for the largest chunk. Kept in one place so that Plan::scratch_bytes counts exactly what is allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/output_rules.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"

namespace xnorcl::detail {

// What the layer's buffers are made of.
struct LayerTables {
  std::vector<unsigned char> filter_image;  // filter_image()
  std::vector<cl_uint> threshold_keys;      // input_threshold_keys()
  std::vector<cl_int> wsum;                 // pad_fold_tables(); empty without the pad fold
  OutputRules rules;                        // output_rules()
  std::uint64_t patch_bytes = 0;            // ChunkPlan::patch_bytes()
  std::uint64_t packed_bytes = 0;           // ChunkPlan::packed_bytes(); 0 where no layout binarizes rows
  // The device bytes of all of them (Plan::scratch_bytes).
  std::uint64_t bytes() const;
};

struct LayerBuffers {
  cl::Buffer filters;         // filter_image(): Kw words per channel, in blocks of channels
  cl::Buffer wsum;            // pad_fold_tables(): S tables, position classes (only with the pad fold)
  cl::Buffer threshold_keys;  // [C_IN] uint
  cl::Buffer patches;         // [Kw][largest P_pad] words
  cl::Buffer packed;          // channel-packed and bit-row layouts: the binarized input of the largest chunk
};

// Creates the buffers, and the epilogue's tables in `epilogue` (scale and bias, or the rules' intervals);
// none for an empty table. OpenCL failures throw Error ("allocating the device buffers of a
// BinaryConvolution").
LayerBuffers create_buffers(const cl::Context& context, const LayerTables& t, Epilogue& epilogue);

}  // namespace xnorcl::detail
