// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/** An OpenCL call failed (C++ {@code xnorcl::OpenCLError}); the message names the call and the error. */
public class OpenCLException extends XnorclException {
  private static final long serialVersionUID = 1L;

  private final int code;
  private final String call;

  /**
   * The error of one OpenCL call.
   *
   * @param message the native message ("clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE ...")
   * @param code the OpenCL error code (negative, e.g. -54)
   * @param call the OpenCL function that failed
   */
  public OpenCLException(String message, int code, String call) {
    super(message);
    this.code = code;
    this.call = call;
  }

  /**
   * The OpenCL error code.
   *
   * @return the code the call returned, e.g. -54 for CL_INVALID_WORK_GROUP_SIZE
   */
  public int code() {
    return code;
  }

  /**
   * The OpenCL function that failed.
   *
   * @return its name, e.g. "clEnqueueNDRangeKernel"
   */
  public String call() {
    return call;
  }
}
