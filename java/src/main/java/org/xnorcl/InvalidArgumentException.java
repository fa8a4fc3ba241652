// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/**
 * A model, option or input that xnorcl refuses (C++ {@code xnorcl::InvalidArgument}): malformed model bytes,
 * an input of the wrong length, an unknown or missing input name, a buffer that is not direct. Always found
 * before any device work, so nothing was run and no output was written.
 */
public class InvalidArgumentException extends XnorclException {
  private static final long serialVersionUID = 1L;

  /**
   * A refusal with its message.
   *
   * @param message what was refused and why, naming the values
   */
  public InvalidArgumentException(String message) {
    super(message);
  }
}
