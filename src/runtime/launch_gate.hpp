// SPDX-License-Identifier: Apache-2.0
// Keeps kernel launches and deferred program-binary stores apart. On PoCL, serialising a program's binary
// (clGetProgramInfo(CL_PROGRAM_BINARIES)) while kernels of that program are being launched or are still in
// flight corrupts the driver's reference counts of compiled kernels and aborts the process
// (pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'). Only while some Runtime still has such a
// store pending do launches take the gate, so the gate costs nothing afterwards.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace xnorcl::detail {

// Held around each clEnqueueNDRangeKernel of the library: shared, and only while a store is pending.
std::shared_lock<std::shared_mutex> launch_gate();

// Held by the store: no launch starts while it is held (the store then finishes its queue).
std::unique_lock<std::shared_mutex> store_gate();

// A Runtime got its first deferred store (+1) or has stored them all (-1).
void deferred_stores_pending(int change);

}  // namespace xnorcl::detail
