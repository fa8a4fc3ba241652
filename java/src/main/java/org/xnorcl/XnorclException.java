// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/**
 * Every failure xnorcl reports: the Java side of C++ {@code xnorcl::Error}, with the same message.
 *
 * <p>Unchecked, as the C++ errors are exceptions an app rarely recovers from locally. The subclasses tell the
 * causes apart; an error of the native library that fits none of them is thrown as this class.
 */
public class XnorclException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * An error with the native library's message.
   *
   * @param message what went wrong, naming the values involved
   */
  public XnorclException(String message) {
    super(message);
  }
}
