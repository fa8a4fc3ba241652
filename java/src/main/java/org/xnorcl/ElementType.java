// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/** The element type of a model's tensor. */
public enum ElementType {
  /** 32-bit floats, row-major (NCHW for 4-D tensors). */
  FLOAT32,
  /**
   * Binary activations. The device keeps them packed; the Java API hands them out unpacked as floats of the
   * tensor's logical shape, -1.0f or +1.0f (the values the bits stand for).
   */
  BITS,
  /** 8-bit pixels of an image input ({@link ImageInput}), NHWC, run with {@link Model#run(byte[])}. */
  UINT8
}
