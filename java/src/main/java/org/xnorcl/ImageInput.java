// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.util.Objects;

/**
 * How a camera frame's bytes become a model's float input, converted on the device in the model's first
 * step. Given to {@link Model#load(Runtime, byte[], java.util.Map)} for a float input of shape
 * [N, 3, H, W] (or NHWC [N, H, W, 3], as models converted from TensorFlow take), it makes that input take
 * interleaved 8-bit pixels [N, H, W, 3 or 4] (row by row, as a camera or an {@code android.graphics.Bitmap}
 * of ARGB_8888 copied with {@code copyPixelsToBuffer} holds RGBA), run with {@link Model#run(byte[])}. Each
 * value is (byte - mean[c]) * scale[c] in the model's channel order, as float32. There is no resizing: a
 * frame has the model's height and width.
 */
public final class ImageInput {
  /** The bytes of one pixel; RGBA's and BGRA's fourth byte (alpha) is dropped. */
  public enum Format {
    RGB,
    RGBA,
    BGR,
    BGRA
  }

  /** The model's channel order. */
  public enum Order {
    RGB,
    BGR
  }

  final Format format;
  Order order = Order.RGB;
  final float[] mean = {0, 0, 0};
  final float[] scale = {1, 1, 1};

  /**
   * A conversion from frames of the given pixel format, into an RGB model, with mean 0 and scale 1.
   *
   * @param format the bytes of one pixel
   */
  public ImageInput(Format format) {
    this.format = Objects.requireNonNull(format, "format");
  }

  /**
   * Sets the model's channel order (RGB by default).
   *
   * @param order RGB or BGR
   * @return this
   */
  public ImageInput order(Order order) {
    this.order = Objects.requireNonNull(order, "order");
    return this;
  }

  /**
   * Sets the value subtracted from each byte, per model channel in the model's order.
   *
   * @param c0 channel 0's mean
   * @param c1 channel 1's mean
   * @param c2 channel 2's mean
   * @return this
   */
  public ImageInput mean(float c0, float c1, float c2) {
    mean[0] = c0;
    mean[1] = c1;
    mean[2] = c2;
    return this;
  }

  /**
   * Sets the factor applied after the subtraction, per model channel in the model's order.
   *
   * @param c0 channel 0's scale
   * @param c1 channel 1's scale
   * @param c2 channel 2's scale
   * @return this
   */
  public ImageInput scale(float c0, float c1, float c2) {
    scale[0] = c0;
    scale[1] = c1;
    scale[2] = c2;
    return this;
  }
}
