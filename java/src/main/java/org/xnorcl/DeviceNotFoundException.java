// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/**
 * No OpenCL platform, or no device matching the request (C++ {@code xnorcl::DeviceNotFound}). On Android this
 * is also what an app sees when the vendor's OpenCL library cannot be loaded (see docs/android.md).
 */
public class DeviceNotFoundException extends XnorclException {
  private static final long serialVersionUID = 1L;

  /**
   * The error with its message.
   *
   * @param message which device was asked for and what was found
   */
  public DeviceNotFoundException(String message) {
    super(message);
  }
}
