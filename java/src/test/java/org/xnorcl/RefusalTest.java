// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every refusal: the exception type and a message naming the problem; no output written. */
class RefusalTest {
  private static Model vehicle;
  private static Model tiny;

  @BeforeAll
  static void load() throws Exception {
    vehicle = Model.load(Fixture.runtime(), Fixture.bytes("vehicle"));
    tiny = Model.load(Fixture.runtime(), Fixture.bytes("tiny"));
  }

  @AfterAll
  static void close() {
    vehicle.close();
    tiny.close();
  }

  private static <T extends Throwable> void refused(Class<T> type, Executable call, String... fragments) {
    T e = assertThrows(type, call);
    for (String f : fragments) {
      assertTrue(String.valueOf(e.getMessage()).contains(f), "'" + e.getMessage() + "' lacks '" + f + "'");
    }
  }

  @Test
  void malformedBytesCarryTheNativeMessage() throws Exception {
    byte[] good = Fixture.bytes("tiny");
    byte[] truncated = Arrays.copyOf(good, good.length / 2);
    byte[] noModel = "not an xnn file at all".getBytes("UTF-8");
    for (byte[] bad : new byte[][] {truncated, noModel, new byte[0]}) {
      InvalidArgumentException e =
          assertThrows(InvalidArgumentException.class, () -> Model.load(Fixture.runtime(), bad));
      assertTrue(e.getMessage().startsWith("model bytes"), e.getMessage());
      InvalidArgumentException fromBuffer = assertThrows(InvalidArgumentException.class,
          () -> Model.load(Fixture.runtime(), Fixture.direct(bad)));
      assertEquals(e.getMessage(), fromBuffer.getMessage(), "byte[] and ByteBuffer refused alike");
    }
    refused(InvalidArgumentException.class, () -> Model.load(Fixture.runtime(), noModel), "model bytes");
    String missing = Fixture.path("no such model.xnn").toString();
    // A file that cannot be opened is an I/O failure, not a refused model: the base class, naming the path.
    XnorclException e = assertThrows(XnorclException.class, () -> Model.load(Fixture.runtime(), missing));
    assertTrue(e.getMessage().contains(missing), e.getMessage());
    refused(InvalidArgumentException.class, () -> Model.load(Fixture.runtime(), ByteBuffer.wrap(good)),
        "not direct");
  }

  @Test
  void aBufferIsReadFromItsPositionToItsLimit() throws Exception {
    byte[] good = Fixture.bytes("tiny");
    ByteBuffer b = ByteBuffer.allocateDirect(good.length + 8);
    b.position(5);
    b.put(good).limit(5 + good.length).position(5);
    try (Model m = Model.load(Fixture.runtime(), b)) {
      assertEquals(2, m.inputs().size());
    }
    assertEquals(5, b.position());
  }

  @Test
  void nullArguments() {
    assertThrows(NullPointerException.class, () -> Model.load(null, new byte[1]));
    assertThrows(NullPointerException.class, () -> Model.load(Fixture.runtime(), (byte[]) null));
    assertThrows(NullPointerException.class, () -> Model.load(Fixture.runtime(), (ByteBuffer) null));
    assertThrows(NullPointerException.class, () -> Model.load(Fixture.runtime(), (String) null));
    assertThrows(NullPointerException.class, () -> Runtime.create(null));
    assertThrows(NullPointerException.class, () -> vehicle.run((float[]) null));
    assertThrows(NullPointerException.class, () -> vehicle.run((FloatBuffer) null));
    assertThrows(NullPointerException.class, () -> vehicle.run(Fixture.directFloats(1), null));
    assertThrows(NullPointerException.class, () -> vehicle.run((Map<String, float[]>) null));
    Map<String, float[]> withNull = new HashMap<>();
    withNull.put("a", new float[16]);
    withNull.put("b", null);
    refused(NullPointerException.class, () -> tiny.run(withNull), "'b'");
  }

  @Test
  void wrongInputLengths() {
    refused(InvalidArgumentException.class, () -> vehicle.run(new float[100]), "'input'", "27648", "100",
        "[1, 3, 96, 96]");
    refused(InvalidArgumentException.class, () -> vehicle.run(Fixture.directFloats(27647)), "27648", "27647");
    Map<String, float[]> inputs = new HashMap<>();
    inputs.put("a", new float[16]);
    inputs.put("b", new float[15]);
    refused(InvalidArgumentException.class, () -> tiny.run(inputs), "'b'", "16", "15");
  }

  @Test
  void unknownAndMissingNames() {
    Map<String, float[]> inputs = new HashMap<>();
    inputs.put("a", new float[16]);
    refused(InvalidArgumentException.class, () -> tiny.run(inputs), "'b' is not given");
    inputs.put("b", new float[16]);
    inputs.put("c", new float[16]);
    refused(InvalidArgumentException.class, () -> tiny.run(inputs), "'c' is no input", "'a', 'b'");
    refused(InvalidArgumentException.class, () -> tiny.run(new float[16]), "2 inputs", "run(Map)");
  }

  @Test
  void buffersThatAreNotDirectOrNotNative() {
    refused(InvalidArgumentException.class, () -> vehicle.run(FloatBuffer.allocate(27648)), "not direct");
    FloatBuffer bigEndian = ByteBuffer.allocateDirect(4 * 27648).order(
        ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN)
        .asFloatBuffer();
    refused(InvalidArgumentException.class, () -> vehicle.run(bigEndian), "native order");
    FloatBuffer x = Fixture.directFloats(27648);
    refused(InvalidArgumentException.class, () -> vehicle.run(x, FloatBuffer.allocate(4)), "not direct");
    refused(InvalidArgumentException.class, () -> vehicle.run(x, Fixture.directFloats(3)), "4 values", "3");
    assertThrows(ReadOnlyBufferException.class, () -> vehicle.run(x, Fixture.directFloats(4).asReadOnlyBuffer()));
  }

  // A refused run writes nothing: the caller's output keeps its values.
  @Test
  void theOutputIsUntouchedOnError() {
    FloatBuffer out = Fixture.directFloats(new float[] {1, 2, 3, 4});
    assertThrows(InvalidArgumentException.class, () -> vehicle.run(Fixture.directFloats(5), out));
    float[] after = new float[4];
    out.get(after);
    assertArrayEquals(new float[] {1, 2, 3, 4}, after);
  }

  @Test
  void nativeExceptionsAreXnorclExceptions() {
    XnorclException e = assertThrows(XnorclException.class,
        () -> Runtime.create(new RuntimeOptions().device("no device is called this")));
    assertTrue(e instanceof DeviceNotFoundException, e.getClass() + ": " + e.getMessage());
    assertTrue(e.getMessage().contains("no device is called this"), e.getMessage());
    assertTrue(new OpenCLException("m", -54, "clEnqueueNDRangeKernel").code() == -54);
  }
}
