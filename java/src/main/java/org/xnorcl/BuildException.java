// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/**
 * The device's OpenCL compiler refused a kernel program (C++ {@code xnorcl::BuildError}). The message ends with
 * the build log, which {@link #buildLog()} also gives on its own.
 */
public class BuildException extends XnorclException {
  private static final long serialVersionUID = 1L;

  private final String buildLog;

  /**
   * The error with the compiler's log.
   *
   * @param message the native message, build log included
   * @param buildLog the compiler's log alone
   */
  public BuildException(String message, String buildLog) {
    super(message);
    this.buildLog = buildLog;
  }

  /**
   * The OpenCL compiler's log.
   *
   * @return the log, as the driver wrote it
   */
  public String buildLog() {
    return buildLog;
  }
}
