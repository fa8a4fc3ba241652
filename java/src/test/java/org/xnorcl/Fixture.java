// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What java/tests/fixture.cpp wrote (the directory in -Dxnorcl.test.models): the models, their inputs and
 * outputs, the host reference's outputs; and one Runtime shared by the tests.
 */
final class Fixture {
  private Fixture() {}

  private static Runtime runtime;

  static synchronized Runtime runtime() {
    if (runtime == null) {
      try {
        runtime = Runtime.create();
      } catch (DeviceNotFoundException e) {
        // As the C++ device tests: a job that declares it has no device reports the tests as skipped.
        if ("1".equals(System.getenv("XNORCL_EXPECT_NO_DEVICE"))) {
          System.exit(77);
        }
        throw e;
      }
    }
    return runtime;
  }

  static Path dir() {
    String d = System.getProperty("xnorcl.test.models");
    if (d == null) {
      throw new IllegalStateException("run with -Dxnorcl.test.models=<the fixture's directory>");
    }
    return Paths.get(d);
  }

  static Path path(String file) {
    return dir().resolve(file);
  }

  static byte[] bytes(String model) throws IOException {
    return Files.readAllBytes(path(model + ".xnn"));
  }

  static float[] floats(String file) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(path(file))).order(ByteOrder.LITTLE_ENDIAN);
    float[] v = new float[b.remaining() / 4];
    b.asFloatBuffer().get(v);
    return v;
  }

  static ByteBuffer direct(byte[] bytes) {
    ByteBuffer b = ByteBuffer.allocateDirect(bytes.length);
    b.put(bytes).flip();
    return b;
  }

  static FloatBuffer directFloats(int n) {
    return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
  }

  static FloatBuffer directFloats(float[] values) {
    FloatBuffer b = directFloats(values.length);
    b.put(values).flip();
    return b;
  }

  /** One line of <model>.io: "in|out name type dims...". */
  static final class Io {
    final boolean input;
    final String name;
    final ElementType type;
    final long[] shape;

    Io(String line) {
      String[] f = line.trim().split(" ");
      input = f[0].equals("in");
      name = f[1];
      type = f[2].equals("bits") ? ElementType.BITS : ElementType.FLOAT32;
      shape = new long[f.length - 3];
      for (int i = 3; i < f.length; ++i) {
        shape[i - 3] = Long.parseLong(f[i]);
      }
    }
  }

  static List<Io> io(String model, boolean inputs) throws IOException {
    List<Io> list = new ArrayList<>();
    for (String line : Files.readAllLines(path(model + ".io"))) {
      Io io = new Io(line);
      if (io.input == inputs) {
        list.add(io);
      }
    }
    return list;
  }

  static List<String> nodes(String model) throws IOException {
    return Files.readAllLines(path(model + ".nodes"));
  }

  /** Every input of the model by name, as the fixture wrote them. */
  static Map<String, float[]> inputs(String model) throws IOException {
    Map<String, float[]> m = new LinkedHashMap<>();
    for (Io in : io(model, true)) {
      m.put(in.name, floats(model + "." + in.name + ".f32"));
    }
    return m;
  }

  static float[] expected(String model, String output) throws IOException {
    return floats(model + "." + output + ".f32");
  }

  /**
   * The C++ tests' comparisons: bitwise for the chain and the small model, and for Bi-Real Net-18's logits
   * within 1e-4 of their largest magnitude (tests/device/test_graph_models.cpp) with the same top class.
   */
  static void assertOutput(String model, String output, float[] got) throws IOException {
    float[] want = expected(model, output);
    assertEquals(want.length, got.length, model + " " + output + ": length");
    if (!model.equals("bireal")) {
      for (int i = 0; i < want.length; ++i) {
        assertEquals(Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(got[i]),
            model + " " + output + "[" + i + "]: " + got[i] + " != " + want[i]);
      }
      return;
    }
    double scale = 0;
    for (float v : want) {
      scale = Math.max(scale, Math.abs(v));
    }
    assertTrue(scale > 0, "the reference logits are all 0");
    assertArrayEquals(want, got, (float) (1e-4 * scale), model + " " + output);
    assertEquals(argmax(want), argmax(got), model + ": top class");
  }

  static int argmax(float[] v) {
    int top = 0;
    for (int i = 1; i < v.length; ++i) {
      if (v[i] > v[top]) {
        top = i;
      }
    }
    return top;
  }
}
