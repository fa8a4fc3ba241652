// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/**
 * Which kernel family a runtime uses (README.md, "Choosing a device and a variant"): {@link #LOCAL} tiles in on-chip local memory (GPUs
 * with real local memory), {@link #GLOBAL} reads global memory directly (CPUs, Mali). {@link #AUTO} lets the
 * runtime choose from the device. The order matches C++ {@code xnorcl::Variant}.
 */
public enum Variant {
  /** Chosen from the device: LOCAL where local memory is on chip, else GLOBAL. */
  AUTO,
  /** Kernels that stage tiles in local memory. */
  LOCAL,
  /** Kernels that read global memory directly. */
  GLOBAL
}
