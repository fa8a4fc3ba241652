// SPDX-License-Identifier: Apache-2.0
// xnorcl: OpenVINO BinaryConvolution-1 (xnor-popcount) on OpenCL 1.2 devices. The umbrella header.
#pragma once

#include "xnorcl/opencl.hpp"  // first: fixes the OpenCL-CLHPP configuration

#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/filter.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/graph_file.hpp"
#include "xnorcl/layers.hpp"
#include "xnorcl/models.hpp"
#include "xnorcl/network.hpp"
#include "xnorcl/packed.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/reference.hpp"
#include "xnorcl/runtime.hpp"
#include "xnorcl/shape.hpp"
#include "xnorcl/tuning.hpp"
#include "xnorcl/version.hpp"
