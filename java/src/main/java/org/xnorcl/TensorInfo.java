// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.util.Arrays;

/** The name, shape and element type of one input or output of a {@link Model}. Immutable. */
public final class TensorInfo {
  private final String name;
  private final long[] shape;
  private final ElementType type;
  private final int size;

  TensorInfo(String name, long[] shape, ElementType type) {
    this.name = name;
    this.shape = shape.clone();
    this.type = type;
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    // Java arrays and buffers are indexed by int: a larger tensor cannot cross as one.
    this.size = n <= Integer.MAX_VALUE ? (int) n : -1;
  }

  /**
   * The tensor's name in the model, as {@link Model#run(java.util.Map)} keys it.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * The logical shape, e.g. {@code [1, 3, 224, 224]} (NCHW).
   *
   * @return a copy of the dimensions
   */
  public long[] shape() {
    return shape.clone();
  }

  /**
   * The element type. Inputs are always {@link ElementType#FLOAT32}; a {@link ElementType#BITS} output is
   * returned unpacked as -1/+1 floats, so its float count is still {@link #size()}.
   *
   * @return the type
   */
  public ElementType type() {
    return type;
  }

  /**
   * The number of floats the tensor holds in Java: the product of the shape.
   *
   * @return the element count, or -1 when it exceeds {@code Integer.MAX_VALUE}
   */
  public int size() {
    return size;
  }

  /**
   * A readable form, e.g. {@code input [1, 3, 32, 32] FLOAT32}.
   *
   * @return the name, shape and type
   */
  @Override
  public String toString() {
    return name + " " + Arrays.toString(shape) + " " + type;
  }
}
