// SPDX-License-Identifier: Apache-2.0
#include "runtime/launch_gate.hpp"

#include <atomic>

namespace xnorcl::detail {
namespace {

std::shared_mutex gate;
std::atomic<int> pending{0};

}  // namespace

// A Runtime's pending count is raised in Runtime::create, before any of its launches, so its launches all
// see it until its store is over.
std::shared_lock<std::shared_mutex> launch_gate() {
  if (pending.load(std::memory_order_acquire) == 0) return {};
  return std::shared_lock<std::shared_mutex>(gate);
}

std::unique_lock<std::shared_mutex> store_gate() {
  return std::unique_lock<std::shared_mutex>(gate);
}

void deferred_stores_pending(int change) {
  pending.fetch_add(change, std::memory_order_acq_rel);
}

}  // namespace xnorcl::detail
