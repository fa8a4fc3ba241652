// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A network from an .xnn file (either version) loaded onto a {@link Runtime}'s device: kernels built, weights
 * uploaded, activation buffers allocated. The C++ {@code xnorcl::Model}.
 *
 * <p>Inputs are float32 arrays of the declared shape, row-major (NCHW), or for an input loaded as an image
 * ({@link ImageInput}) the frame's bytes, run with {@link #run(byte[])}. Outputs are float arrays; a
 * {@link ElementType#BITS} output is unpacked to -1.0f/+1.0f values of its logical shape.
 *
 * <p>Buffers: a {@link FloatBuffer} passed in or out must be direct and in native byte order (e.g.
 * {@code ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer()}). Values are read
 * from or written to its position on; the position and limit are left as they were.
 *
 * <p>Threads: as in C++, a model is meant to be used from one thread at a time (run several models for
 * parallel work). Misuse is safe, not a crash: every method synchronizes on the model, so concurrent runs
 * take turns and {@link #close()} waits for a run in progress.
 *
 * <p>Checks: a null argument throws {@link NullPointerException}; an input of the wrong length, an unknown or
 * missing input name, a buffer that is not direct or not in native order throws
 * {@link InvalidArgumentException}, naming the input and the values. Both happen before any device work, and
 * a caller's output buffer is only written after a run succeeded.
 *
 * <p>Memory: {@link #close()} frees the model's device memory at once; call it (or use try-with-resources),
 * since the garbage collector does not see native memory. A closed model throws
 * {@link IllegalStateException} from every method but close, which may be called again and does nothing.
 */
public final class Model implements AutoCloseable {
  private long handle;
  private final List<TensorInfo> inputs;
  private final List<TensorInfo> outputs;

  private Model(long handle) {
    this.handle = handle;
    try {
      this.inputs = infos(nativeInfo(handle, false));
      this.outputs = infos(nativeInfo(handle, true));
    } catch (RuntimeException | Error e) {
      nativeDestroy(handle);
      throw e;
    }
  }

  /**
   * Loads a model from its bytes (an asset, a download). The array is read during the call only.
   *
   * @param runtime the device to load it on
   * @param bytes a whole .xnn file
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the bytes are no valid model (the message starts with "model bytes")
   * @throws XnorclException for a native failure (an OpenCL call, a kernel build, device memory)
   */
  public static Model load(Runtime runtime, byte[] bytes) {
    return load(runtime, bytes, Collections.<String, ImageInput>emptyMap());
  }

  /**
   * Loads a model from its bytes with some float inputs taken as camera frames (see {@link ImageInput}).
   *
   * @param runtime the device to load it on
   * @param bytes a whole .xnn file
   * @param images the inputs to take as images, by name
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the bytes are no valid model, or an image input is no float input
   *     [N, 3, H, W] of the model, or a mean or scale is not finite
   * @throws XnorclException for a native failure
   */
  public static Model load(Runtime runtime, byte[] bytes, Map<String, ImageInput> images) {
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(bytes, "bytes");
    Images i = new Images(images);
    return new Model(runtime.load(rt -> nativeLoadBytes(rt, bytes, i.names, i.kinds, i.values)));
  }

  /**
   * Loads a model from the bytes between a direct buffer's position and limit (a memory-mapped file, an asset
   * read into a direct buffer). The buffer is read during the call only; its position is left as it was.
   *
   * @param runtime the device to load it on
   * @param bytes a direct buffer holding a whole .xnn file from its position to its limit
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the buffer is not direct or the bytes are no valid model
   * @throws XnorclException for a native failure
   */
  public static Model load(Runtime runtime, ByteBuffer bytes) {
    return load(runtime, bytes, Collections.<String, ImageInput>emptyMap());
  }

  /**
   * Loads a model from a direct buffer with some float inputs taken as camera frames (see
   * {@link ImageInput} and {@link #load(Runtime, ByteBuffer)}).
   *
   * @param runtime the device to load it on
   * @param bytes a direct buffer holding a whole .xnn file from its position to its limit
   * @param images the inputs to take as images, by name
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the buffer is not direct, the bytes are no valid model, or an image
   *     input is refused
   * @throws XnorclException for a native failure
   */
  public static Model load(Runtime runtime, ByteBuffer bytes, Map<String, ImageInput> images) {
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(bytes, "bytes");
    if (!bytes.isDirect()) {
      throw new InvalidArgumentException(
          "model bytes: the ByteBuffer is not direct (use ByteBuffer.allocateDirect, or pass a byte[])");
    }
    int position = bytes.position();
    int length = bytes.remaining();
    Images i = new Images(images);
    return new Model(
        runtime.load(rt -> nativeLoadBuffer(rt, bytes, position, length, i.names, i.kinds, i.values)));
  }

  /**
   * Loads a model from an .xnn file.
   *
   * @param runtime the device to load it on
   * @param path the file
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the file is no valid model (the message starts with the path)
   * @throws XnorclException if the file cannot be read (naming the path), or for a native failure
   */
  public static Model load(Runtime runtime, String path) {
    return load(runtime, path, Collections.<String, ImageInput>emptyMap());
  }

  /**
   * Loads a model from an .xnn file with some float inputs taken as camera frames (see {@link ImageInput}).
   *
   * @param runtime the device to load it on
   * @param path the file
   * @param images the inputs to take as images, by name
   * @return the model; close it when done
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if the runtime is closed
   * @throws InvalidArgumentException if the file is no valid model or an image input is refused
   * @throws XnorclException if the file cannot be read (naming the path), or for a native failure
   */
  public static Model load(Runtime runtime, String path, Map<String, ImageInput> images) {
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(path, "path");
    Images i = new Images(images);
    return new Model(runtime.load(rt -> nativeLoadPath(rt, path, i.names, i.kinds, i.values)));
  }

  /**
   * The model's inputs in order: name, shape, type (FLOAT32, or UINT8 for an image input).
   *
   * @return an unmodifiable list
   * @throws IllegalStateException if the model is closed
   */
  public synchronized List<TensorInfo> inputs() {
    open();
    return inputs;
  }

  /**
   * The model's outputs in order: name, logical shape, type.
   *
   * @return an unmodifiable list
   * @throws IllegalStateException if the model is closed
   */
  public synchronized List<TensorInfo> outputs() {
    open();
    return outputs;
  }

  /**
   * Runs a model of one input on an array and returns its first output.
   *
   * @param input the input's values, exactly {@code inputs().get(0).size()} of them
   * @return a new array with the first output's values
   * @throws NullPointerException if input is null
   * @throws InvalidArgumentException if the model has several inputs or the length is wrong
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized float[] run(float[] input) {
    Objects.requireNonNull(input, "input");
    long h = open();
    checkLength(onlyInput(), input.length);
    return nativeRun(h, new float[][] {input}, new FloatBuffer[1], new int[1], false, null, 0)[0];
  }

  /**
   * Runs a model of one input on a direct buffer (its values from position to limit) and returns its first
   * output.
   *
   * @param input a direct, native-order buffer with exactly {@code inputs().get(0).size()} values remaining
   * @return a new array with the first output's values
   * @throws NullPointerException if input is null
   * @throws InvalidArgumentException if the model has several inputs, the buffer is not direct or not in
   *     native order, or the number of values is wrong
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized float[] run(FloatBuffer input) {
    Objects.requireNonNull(input, "input");
    long h = open();
    TensorInfo info = onlyInput();
    checkBuffer(info.name(), input);
    checkLength(info, input.remaining());
    return nativeRun(
        h, new float[1][], new FloatBuffer[] {input}, new int[] {input.position()}, false, null, 0)[0];
  }

  /**
   * Runs a model of one input and writes its first output into a buffer the caller owns: no Java allocation
   * per run. The output is written from its position on; on any error it is left untouched.
   *
   * @param input a direct, native-order buffer with exactly {@code inputs().get(0).size()} values remaining
   * @param output a direct, native-order, writable buffer with at least {@code outputs().get(0).size()}
   *     values remaining
   * @throws NullPointerException if an argument is null
   * @throws InvalidArgumentException if the model has several inputs, a buffer is not direct or not in
   *     native order, or a size is wrong
   * @throws java.nio.ReadOnlyBufferException if output is read-only
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized void run(FloatBuffer input, FloatBuffer output) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    long h = open();
    TensorInfo info = onlyInput();
    checkBuffer(info.name(), input);
    checkLength(info, input.remaining());
    TensorInfo out = outputs.get(0);
    checkBuffer(out.name(), output);
    if (output.isReadOnly()) {
      throw new java.nio.ReadOnlyBufferException();
    }
    if (out.size() < 0 || output.remaining() < out.size()) {
      throw new InvalidArgumentException("output '" + out.name() + "': " + out.size()
          + " values needed for shape " + Arrays.toString(out.shape()) + ", the buffer has "
          + output.remaining() + " remaining");
    }
    nativeRun(h, new float[1][], new FloatBuffer[] {input}, new int[] {input.position()}, false, output,
        output.position());
  }

  /**
   * Runs a model whose only input is an image ({@link ImageInput}) on one frame and returns its first output.
   *
   * @param pixels the frame's bytes, exactly {@code inputs().get(0).size()} of them ([N, H, W, 3 or 4])
   * @return a new array with the first output's values
   * @throws NullPointerException if pixels is null
   * @throws InvalidArgumentException if the model's only input is not an image, or the length is wrong
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized float[] run(byte[] pixels) {
    Objects.requireNonNull(pixels, "pixels");
    long h = open();
    checkPixels(onlyInput(), pixels.length);
    return nativeRunImage(h, pixels, null, 0);
  }

  /**
   * Runs a model whose only input is an image on the bytes between a direct buffer's position and limit (a
   * camera's image plane, a bitmap copied with {@code copyPixelsToBuffer}) and returns its first output.
   *
   * @param pixels a direct buffer with exactly {@code inputs().get(0).size()} bytes remaining
   * @return a new array with the first output's values
   * @throws NullPointerException if pixels is null
   * @throws InvalidArgumentException if the model's only input is not an image, the buffer is not direct or
   *     the number of bytes is wrong
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized float[] run(ByteBuffer pixels) {
    Objects.requireNonNull(pixels, "pixels");
    long h = open();
    TensorInfo info = onlyInput();
    if (!pixels.isDirect()) {
      throw new InvalidArgumentException("'" + info.name() + "': the ByteBuffer is not direct (use "
          + "ByteBuffer.allocateDirect, or a byte[])");
    }
    checkPixels(info, pixels.remaining());
    return nativeRunImage(h, null, pixels, pixels.position());
  }

  /**
   * Runs the model on every input by name and returns every output by name, in the model's output order.
   *
   * @param inputs one array per model input, keyed by {@link TensorInfo#name()}
   * @return a new map from output name to a new array of its values
   * @throws NullPointerException if the map or a value is null
   * @throws InvalidArgumentException if a name is no input of the model, an input is missing or a length is
   *     wrong
   * @throws IllegalStateException if the model is closed
   * @throws XnorclException for a native failure
   */
  public synchronized Map<String, float[]> run(Map<String, float[]> inputs) {
    Objects.requireNonNull(inputs, "inputs");
    long h = open();
    List<String> names = new ArrayList<>();
    for (TensorInfo info : this.inputs) {
      names.add(info.name());
    }
    for (String name : inputs.keySet()) {
      if (!names.contains(name)) {
        throw new InvalidArgumentException(
            "inputs: '" + name + "' is no input of the model (it has " + quoted(names) + ")");
      }
    }
    float[][] arrays = new float[names.size()][];
    for (int i = 0; i < arrays.length; ++i) {
      TensorInfo info = this.inputs.get(i);
      if (!inputs.containsKey(info.name())) {
        throw new InvalidArgumentException("inputs: '" + info.name() + "' is not given");
      }
      arrays[i] = Objects.requireNonNull(inputs.get(info.name()), "input '" + info.name() + "'");
      checkLength(info, arrays[i].length);
    }
    float[][] values =
        nativeRun(h, arrays, new FloatBuffer[arrays.length], new int[arrays.length], true, null, 0);
    Map<String, float[]> result = new LinkedHashMap<>();
    for (int i = 0; i < values.length; ++i) {
      result.put(outputs.get(i).name(), values[i]);
    }
    return result;
  }

  /**
   * What the model runs, one line per launch group: the variant, each step's fused nodes, kernels, sizes and
   * tuning, and the device bytes of activations and weights (C++ {@code GraphPlan::to_string}).
   *
   * @return the plan as text
   * @throws IllegalStateException if the model is closed
   */
  public synchronized String plan() {
    return nativePlan(open());
  }

  /**
   * Device milliseconds per step of the last run, in run order, keyed by the step's node names
   * ({@code "conv1+bn1+sign2"} where nodes are fused into one launch; a version-1 chain's nodes are
   * {@code "<index>:<layer>"}). Empty before the first run.
   *
   * @return a new map from step to milliseconds
   * @throws IllegalStateException if the model is closed
   */
  public synchronized Map<String, Double> lastNodeTimes() {
    Object[] stages = nativeStageTimes(open());
    String[] kernels = (String[]) stages[0];
    double[] ms = (double[]) stages[1];
    Map<String, Double> times = new LinkedHashMap<>();
    for (int i = 0; i < kernels.length; ++i) {
      // A launch is named "<step> <kernel>"; a step of several launches sums them.
      int space = kernels[i].indexOf(' ');
      String step = space < 0 ? kernels[i] : kernels[i].substring(0, space);
      Double before = times.get(step);
      times.put(step, before == null ? ms[i] : before + ms[i]);
    }
    return times;
  }

  /**
   * Frees the model's device memory now. Waits for a run in progress on another thread. A second call does
   * nothing; any other method afterwards throws {@link IllegalStateException}.
   */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      nativeDestroy(handle);
      handle = 0;
    }
  }

  private long open() {
    if (handle == 0) {
      throw new IllegalStateException("the Model is closed");
    }
    return handle;
  }

  private TensorInfo onlyInput() {
    if (inputs.size() != 1) {
      throw new InvalidArgumentException("run: the model has " + inputs.size() + " inputs ("
          + quoted(namesOf(inputs)) + "); pass them by name with run(Map)");
    }
    return inputs.get(0);
  }

  private static void checkLength(TensorInfo info, int length) {
    if (info.type() == ElementType.UINT8) {
      throw new InvalidArgumentException("input '" + info.name() + "' is an image (UINT8 "
          + Arrays.toString(info.shape()) + "): run it with run(byte[]) or run(ByteBuffer)");
    }
    if (length != info.size()) {
      throw new InvalidArgumentException("input '" + info.name() + "': " + info.size()
          + " values expected for shape " + Arrays.toString(info.shape()) + ", got " + length);
    }
  }

  private static void checkPixels(TensorInfo info, int length) {
    if (info.type() != ElementType.UINT8) {
      throw new InvalidArgumentException("input '" + info.name() + "' is " + info.type()
          + ", not an image: run it with floats, or load the model with an ImageInput for it");
    }
    if (length != info.size()) {
      throw new InvalidArgumentException("input '" + info.name() + "': " + info.size()
          + " bytes expected for shape " + Arrays.toString(info.shape()) + ", got " + length);
    }
  }

  // The image inputs as the native loaders take them: names, then per image its format and order ordinals
  // and six floats (mean, scale).
  private static final class Images {
    final String[] names;
    final int[] kinds;
    final float[] values;

    Images(Map<String, ImageInput> images) {
      Objects.requireNonNull(images, "images");
      names = new String[images.size()];
      kinds = new int[2 * names.length];
      values = new float[6 * names.length];
      int i = 0;
      for (Map.Entry<String, ImageInput> e : images.entrySet()) {
        ImageInput image = Objects.requireNonNull(e.getValue(), "image input '" + e.getKey() + "'");
        names[i] = Objects.requireNonNull(e.getKey(), "an image input's name");
        kinds[2 * i] = image.format.ordinal();
        kinds[2 * i + 1] = image.order.ordinal();
        System.arraycopy(image.mean, 0, values, 6 * i, 3);
        System.arraycopy(image.scale, 0, values, 6 * i + 3, 3);
        ++i;
      }
    }
  }

  private static void checkBuffer(String name, FloatBuffer buffer) {
    if (!buffer.isDirect()) {
      throw new InvalidArgumentException("'" + name + "': the FloatBuffer is not direct (use "
          + "ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder()).asFloatBuffer(), or a float[])");
    }
    if (buffer.order() != ByteOrder.nativeOrder()) {
      throw new InvalidArgumentException("'" + name + "': the FloatBuffer is " + buffer.order()
          + ", not the native order " + ByteOrder.nativeOrder() + " (set ByteBuffer.order before asFloatBuffer)");
    }
  }

  private static List<String> namesOf(List<TensorInfo> infos) {
    List<String> names = new ArrayList<>();
    for (TensorInfo info : infos) {
      names.add(info.name());
    }
    return names;
  }

  private static String quoted(List<String> names) {
    StringBuilder s = new StringBuilder();
    for (String name : names) {
      s.append(s.length() == 0 ? "'" : ", '").append(name).append('\'');
    }
    return s.toString();
  }

  private static List<TensorInfo> infos(Object[] info) {
    String[] names = (String[]) info[0];
    long[][] shapes = (long[][]) info[1];
    int[] types = (int[]) info[2];
    List<TensorInfo> list = new ArrayList<>();
    for (int i = 0; i < names.length; ++i) {
      list.add(new TensorInfo(names[i], shapes[i], ElementType.values()[types[i]]));
    }
    return Collections.unmodifiableList(list);
  }

  private static native long nativeLoadBytes(
      long runtime, byte[] bytes, String[] imageNames, int[] imageKinds, float[] imageValues);

  private static native long nativeLoadBuffer(long runtime, ByteBuffer bytes, int position, int length,
      String[] imageNames, int[] imageKinds, float[] imageValues);

  private static native long nativeLoadPath(
      long runtime, String path, String[] imageNames, int[] imageKinds, float[] imageValues);

  // {names String[], shapes long[][], types int[] (ElementType ordinals)}
  private static native Object[] nativeInfo(long handle, boolean outputs);

  // Inputs in the model's order, each from arrays[i] or else buffers[i] at positions[i]. With `into`, the
  // first output goes there at intoPosition and null is returned; else the first output (all: every output).
  private static native float[][] nativeRun(long handle, float[][] arrays, FloatBuffer[] buffers,
      int[] positions, boolean all, FloatBuffer into, int intoPosition);

  // The only input, an image, from array or else buffer at position; returns the first output.
  private static native float[] nativeRunImage(long handle, byte[] array, ByteBuffer buffer, int position);

  private static native String nativePlan(long handle);

  // {kernels String[] ("<step> <kernel>"), milliseconds double[]}
  private static native Object[] nativeStageTimes(long handle);

  private static native void nativeDestroy(long handle);
}
